/**
 * The SQLite migrations (../migrations) translated for PostgreSQL: same versions, names, tables, columns,
 * nullability, defaults, keys, ON DELETE actions and indexes, so version N means the same schema on both.
 * Add an entry here with every new SQLite migration; never edit a shipped one.
 *
 * Translation rules:
 * - TEXT is `TEXT COLLATE "C"`: SQLite compares text byte by byte (BINARY), so does "C"; the database's
 *   default collation (often en_US) would sort and compare differently, and its lower() would fold
 *   non-ASCII letters, which SQLite's does not.
 * - INTEGER is BIGINT (SQLite integers are 64-bit); the 0/1 flags (secret, output_truncated, managed_app,
 *   enabled) are INTEGER. Bun's SQL client returns BIGINT as a string (a BigInt with `bigint: true`),
 *   INTEGER as a number.
 * - JSON columns stay TEXT, so the text read back is the text written, byte for byte.
 * - `name COLLATE NOCASE` in the folders index is `lower(name)` on the "C" column: it folds A–Z only, like
 *   NOCASE. Queries that say `name = ? COLLATE NOCASE` / `ORDER BY name COLLATE NOCASE` on SQLite say
 *   `lower(name) = lower($n)` / `ORDER BY lower(name)` here (the index serves the first).
 * - run_steps has SQLite's implicit rowid made explicit (an identity column of that name): steps of one
 *   `seq` are read in insertion order by it. `SELECT *` on PostgreSQL therefore also returns it.
 * - WITHOUT ROWID (kv_entries) is a storage layout; a plain table with the same primary key behaves the same.
 *
 * Not equivalent:
 * - users.email (`COLLATE NOCASE` on the column, so `email = ?` and its UNIQUE ignore case) uses the ICU
 *   collation weft_nocase (case-insensitive, accent-sensitive; needs a server built with ICU, as Debian's
 *   and the official images are). For ASCII it matches NOCASE; unlike NOCASE it also folds non-ASCII case
 *   (É = é), treats canonically equivalent Unicode (precomposed é, e + U+0301) as equal, ignores ignorable
 *   code points (most C0 control characters), sorts linguistically, and rejects LIKE before PostgreSQL 18.
 * - SQLite accepts NULL in a PRIMARY KEY column that is not INTEGER and not declared NOT NULL (a legacy
 *   quirk, e.g. orgs.id); PostgreSQL refuses it. Weft never inserts a NULL key.
 * - PostgreSQL text cannot hold U+0000; SQLite's can. JSON.stringify writes it as \u0000, so JSON is unaffected.
 * - SQLite's flexible typing stores a value of the wrong type as given (text in an INTEGER column);
 *   PostgreSQL rejects it.
 */
import type { Migration } from "../migrations";
import { COMPACT_RUNS } from "./compact-runs-migration";

/** The advisory lock a fold of the run counts holds (weft_fold_run_counts): "weftfold" in ASCII. */
export const FOLD_LOCK_KEY = 0x7765_6674_666f_6c64n;

export const postgresMigrations: Migration[] = [
  {
    version: 1,
    name: "identity",
    sql: `
CREATE COLLATION IF NOT EXISTS weft_nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE orgs (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE workspaces (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  name TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX workspaces_org ON workspaces(org_id);
CREATE TABLE users (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  email TEXT COLLATE weft_nocase NOT NULL UNIQUE,
  name TEXT COLLATE "C" NOT NULL,
  password_hash TEXT COLLATE "C" NOT NULL,
  role TEXT COLLATE "C" NOT NULL,
  default_workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE sessions (
  id_hash TEXT COLLATE "C" PRIMARY KEY,
  user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  csrf_token TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE api_tokens (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  prefix TEXT COLLATE "C" NOT NULL,
  token_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  scopes TEXT COLLATE "C" NOT NULL,
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  last_used_at TEXT COLLATE "C",
  revoked_at TEXT COLLATE "C"
);
CREATE INDEX api_tokens_workspace ON api_tokens(workspace_id);
CREATE TABLE idempotency_records (
  credential TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  fingerprint TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  status BIGINT,
  body TEXT COLLATE "C",
  created_at BIGINT NOT NULL,
  PRIMARY KEY (credential, key)
);
CREATE INDEX idempotency_created ON idempotency_records(created_at);
`,
  },
  {
    version: 2,
    name: "workflows",
    sql: `
CREATE TABLE folders (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX folders_workspace_name ON folders(workspace_id, lower(name));
CREATE TABLE workflows (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  name TEXT COLLATE "C" NOT NULL,
  description TEXT COLLATE "C" NOT NULL DEFAULT '',
  definition TEXT COLLATE "C" NOT NULL,
  draft_hash TEXT COLLATE "C" NOT NULL,
  definition_rev BIGINT NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  cron_expression TEXT COLLATE "C",
  webhook_token TEXT COLLATE "C",
  webhook_token_hash TEXT COLLATE "C" UNIQUE,
  latest_version_id TEXT COLLATE "C",
  folder_id TEXT COLLATE "C" REFERENCES folders(id),
  tags TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  test_payloads TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX workflows_workspace ON workflows(workspace_id, updated_at);
CREATE INDEX workflows_folder ON workflows(folder_id);
CREATE INDEX workflows_live ON workflows(status) WHERE status = 'active';
CREATE TABLE workflow_versions (
  id TEXT COLLATE "C" PRIMARY KEY,
  workflow_id TEXT COLLATE "C" NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL,
  number BIGINT NOT NULL,
  definition TEXT COLLATE "C" NOT NULL,
  hash TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (workflow_id, number)
);
CREATE TABLE workflow_pinned_data (
  workflow_id TEXT COLLATE "C" NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  step_name TEXT COLLATE "C" NOT NULL,
  data TEXT COLLATE "C" NOT NULL,
  stamp TEXT COLLATE "C" NOT NULL,
  pinned_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workflow_id, step_name)
);
CREATE TABLE workflow_variables (
  workflow_id TEXT COLLATE "C" NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  name TEXT COLLATE "C" NOT NULL,
  value TEXT COLLATE "C" NOT NULL,
  secret INTEGER NOT NULL DEFAULT 0,
  description TEXT COLLATE "C" NOT NULL DEFAULT '',
  updated_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workflow_id, name)
);
CREATE TABLE templates (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  description TEXT COLLATE "C" NOT NULL DEFAULT '',
  category TEXT COLLATE "C" NOT NULL DEFAULT 'custom',
  definition TEXT COLLATE "C" NOT NULL,
  source_workflow_id TEXT COLLATE "C",
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX templates_workspace ON templates(workspace_id, created_at);
`,
  },
  {
    version: 3,
    name: "kv-store",
    sql: `
CREATE TABLE kv_entries (
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  key TEXT COLLATE "C" NOT NULL,
  value TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workspace_id, key)
);
`,
  },
  {
    version: 4,
    name: "runs",
    sql: `
CREATE TABLE run_definitions (
  hash TEXT COLLATE "C" PRIMARY KEY,
  definition TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE runs (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL,
  org_id TEXT COLLATE "C" NOT NULL,
  workflow_id TEXT COLLATE "C" NOT NULL,
  workflow_name TEXT COLLATE "C" NOT NULL,
  workflow_trigger_type TEXT COLLATE "C",
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  trigger_data TEXT COLLATE "C" NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  version_id TEXT COLLATE "C",
  version_number BIGINT,
  executed_version_id TEXT COLLATE "C",
  executed_version_number BIGINT,
  definition_hash TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  finished_at TEXT COLLATE "C",
  duration_ms BIGINT,
  error_message TEXT COLLATE "C",
  tags TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  started_from_step TEXT COLLATE "C",
  retry_of_run_id TEXT COLLATE "C",
  retried_by_run_id TEXT COLLATE "C",
  step_total BIGINT NOT NULL DEFAULT 0,
  step_failed BIGINT NOT NULL DEFAULT 0,
  wait_step TEXT COLLATE "C",
  resume_mode TEXT COLLATE "C",
  resume_at TEXT COLLATE "C",
  resume_token_hash TEXT COLLATE "C",
  parent_run_id TEXT COLLATE "C",
  depth BIGINT NOT NULL DEFAULT 0,
  state TEXT COLLATE "C",
  response TEXT COLLATE "C",
  event_seq BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at DESC, id DESC);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at DESC, id DESC);
CREATE TABLE run_steps (
  id TEXT COLLATE "C" NOT NULL,
  run_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  node_id TEXT COLLATE "C" NOT NULL,
  node_type TEXT COLLATE "C" NOT NULL,
  piece_id TEXT COLLATE "C",
  action_id TEXT COLLATE "C",
  display_name TEXT COLLATE "C",
  status TEXT COLLATE "C" NOT NULL,
  input_data TEXT COLLATE "C",
  output_data TEXT COLLATE "C",
  output_truncated INTEGER NOT NULL DEFAULT 0,
  error_message TEXT COLLATE "C",
  retry_count BIGINT NOT NULL DEFAULT 0,
  started_at TEXT COLLATE "C",
  finished_at TEXT COLLATE "C",
  duration_ms BIGINT,
  rowid BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX run_steps_run ON run_steps(run_id, seq);
`,
  },
  {
    version: 5,
    name: "connections",
    sql: `
CREATE TABLE connections (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  piece_id TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  auth_kind TEXT COLLATE "C" NOT NULL,
  grant_type TEXT COLLATE "C",
  status TEXT COLLATE "C" NOT NULL,
  status_message TEXT COLLATE "C",
  config TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  client_id TEXT COLLATE "C",
  managed_app INTEGER NOT NULL DEFAULT 0,
  public_values TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  secrets TEXT COLLATE "C",
  tokens TEXT COLLATE "C",
  token_expires_at TEXT COLLATE "C",
  refresh_lease TEXT COLLATE "C",
  refresh_lease_until BIGINT,
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX connections_workspace_name ON connections(workspace_id, name);
CREATE INDEX connections_workspace_piece ON connections(workspace_id, piece_id);
CREATE TABLE oauth2_states (
  nonce TEXT COLLATE "C" PRIMARY KEY,
  connection_id TEXT COLLATE "C" NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL,
  code_verifier TEXT COLLATE "C" NOT NULL,
  redirect_uri TEXT COLLATE "C" NOT NULL,
  binding TEXT COLLATE "C" NOT NULL,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX oauth2_states_connection ON oauth2_states(connection_id);
CREATE INDEX oauth2_states_expires ON oauth2_states(expires_at);
`,
  },
  {
    version: 6,
    name: "triggers",
    sql: `
CREATE TABLE trigger_schedules (
  workflow_id TEXT COLLATE "C" PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL,
  version_id TEXT COLLATE "C" NOT NULL,
  spec TEXT COLLATE "C" NOT NULL,
  next_fire_at BIGINT NOT NULL,
  last_fired_at BIGINT,
  last_run_id TEXT COLLATE "C",
  updated_at BIGINT NOT NULL
);
CREATE INDEX trigger_schedules_due ON trigger_schedules(next_fire_at);
CREATE TABLE trigger_polls (
  workflow_id TEXT COLLATE "C" PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL,
  version_id TEXT COLLATE "C" NOT NULL,
  piece_id TEXT COLLATE "C" NOT NULL,
  trigger_id TEXT COLLATE "C" NOT NULL,
  interval_seconds BIGINT NOT NULL,
  next_poll_at BIGINT NOT NULL,
  baseline TEXT COLLATE "C",
  last_poll_at BIGINT,
  last_success_at BIGINT,
  failures BIGINT NOT NULL DEFAULT 0,
  last_error TEXT COLLATE "C",
  updated_at BIGINT NOT NULL
);
CREATE INDEX trigger_polls_due ON trigger_polls(next_poll_at);
-- No foreign key: a registration must outlive a deleted workflow until onDisable has run with its
-- trigger (kept here, since the workflow's versions go with it).
CREATE TABLE trigger_registrations (
  workflow_id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL,
  piece_id TEXT COLLATE "C" NOT NULL,
  trigger_id TEXT COLLATE "C" NOT NULL,
  version_id TEXT COLLATE "C" NOT NULL,
  trigger TEXT COLLATE "C" NOT NULL,
  config_hash TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C",
  enabled INTEGER NOT NULL DEFAULT 0,
  last_error TEXT COLLATE "C",
  updated_at BIGINT NOT NULL
);
`,
  },
  {
    version: 7,
    name: "run-list-indexes",
    sql: `
DROP INDEX runs_workspace_started;
DROP INDEX runs_workflow_started;
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, id);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, id);
`,
  },
  {
    version: 8,
    name: "run-counts",
    // Triggers are one PL/pgSQL function per event instead of SQLite's trigger bodies; tags are read with
    // jsonb_array_elements_text where SQLite uses json_each. Concurrent writers (a cluster) update the same
    // count rows and wait on each other's row locks until commit; one instance has one run writer.
    sql: `
CREATE TABLE run_counts (
  workspace_id TEXT COLLATE "C" NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  workflow_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  tag TEXT COLLATE "C" NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (workspace_id, environment, workflow_id, status, trigger_type, tag)
);
CREATE TABLE run_hours (
  workspace_id TEXT COLLATE "C" NOT NULL,
  hour TEXT COLLATE "C" NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  workflow_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type)
);
CREATE TABLE run_tags (
  workspace_id TEXT COLLATE "C" NOT NULL,
  tag TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  run_id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workspace_id, tag, started_at, run_id)
);

INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
  SELECT workspace_id, environment, workflow_id, status, trigger_type, '', count(*) FROM runs
  GROUP BY workspace_id, environment, workflow_id, status, trigger_type;
INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
  SELECT runs.workspace_id, runs.environment, runs.workflow_id, runs.status, runs.trigger_type, t.value, count(DISTINCT runs.id)
  FROM runs, jsonb_array_elements_text(runs.tags::jsonb) AS t(value) WHERE runs.tags <> '[]'
  GROUP BY runs.workspace_id, runs.environment, runs.workflow_id, runs.status, runs.trigger_type, t.value;
INSERT INTO run_hours (workspace_id, hour, environment, workflow_id, status, trigger_type, n)
  SELECT workspace_id, substr(started_at, 1, 13), environment, workflow_id, status, trigger_type, count(*) FROM runs
  GROUP BY workspace_id, substr(started_at, 1, 13), environment, workflow_id, status, trigger_type;
INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
  SELECT runs.workspace_id, t.value, runs.started_at, runs.id FROM runs, jsonb_array_elements_text(runs.tags::jsonb) AS t(value)
  WHERE runs.tags <> '[]' ON CONFLICT DO NOTHING;

CREATE FUNCTION weft_run_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE run_counts SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND environment = OLD.environment
      AND workflow_id = OLD.workflow_id AND status = OLD.status AND trigger_type = OLD.trigger_type
      AND (tag = '' OR (OLD.tags <> '[]' AND tag IN (SELECT jsonb_array_elements_text(OLD.tags::jsonb))));
    UPDATE run_hours SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND hour = substr(OLD.started_at, 1, 13)
      AND environment = OLD.environment AND workflow_id = OLD.workflow_id AND status = OLD.status AND trigger_type = OLD.trigger_type;
    IF OLD.tags <> '[]' THEN
      DELETE FROM run_tags WHERE workspace_id = OLD.workspace_id AND tag IN (SELECT jsonb_array_elements_text(OLD.tags::jsonb))
        AND started_at = OLD.started_at AND run_id = OLD.id;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
      VALUES (NEW.workspace_id, NEW.environment, NEW.workflow_id, NEW.status, NEW.trigger_type, '', 1)
      ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag) DO UPDATE SET n = c.n + 1;
    INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n)
      VALUES (NEW.workspace_id, substr(NEW.started_at, 1, 13), NEW.environment, NEW.workflow_id, NEW.status, NEW.trigger_type, 1)
      ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type) DO UPDATE SET n = h.n + 1;
    IF NEW.tags <> '[]' THEN
      INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
        SELECT DISTINCT NEW.workspace_id, NEW.environment, NEW.workflow_id, NEW.status, NEW.trigger_type, t, 1
        FROM jsonb_array_elements_text(NEW.tags::jsonb) AS t
        ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag) DO UPDATE SET n = c.n + 1;
      INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
        SELECT NEW.workspace_id, t, NEW.started_at, NEW.id FROM jsonb_array_elements_text(NEW.tags::jsonb) AS t
        ON CONFLICT DO NOTHING;
    END IF;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_count_insert_delete AFTER INSERT OR DELETE ON runs FOR EACH ROW EXECUTE FUNCTION weft_run_counts();
CREATE TRIGGER runs_count_update AFTER UPDATE OF status, tags ON runs FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION weft_run_counts();

DROP INDEX runs_workspace_started;
DROP INDEX runs_workflow_started;
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, id, environment, status, trigger_type);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, id, environment, status, trigger_type);
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms NULLS FIRST, started_at, id, environment);
CREATE INDEX runs_unfinished ON runs(id) WHERE status IN ('pending', 'running', 'paused');
`,
  },
  {
    version: 9,
    name: "definition-uses",
    sql: `
ALTER TABLE run_definitions ADD COLUMN runs BIGINT NOT NULL DEFAULT 0;
UPDATE run_definitions SET runs = uses.n
  FROM (SELECT definition_hash, COUNT(*) AS n FROM runs GROUP BY definition_hash) AS uses
  WHERE run_definitions.hash = uses.definition_hash;
CREATE FUNCTION weft_definition_uses() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE run_definitions SET runs = runs + 1 WHERE hash = NEW.definition_hash;
  ELSE
    UPDATE run_definitions SET runs = runs - 1 WHERE hash = OLD.definition_hash;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_definition_uses AFTER INSERT OR DELETE ON runs FOR EACH ROW EXECUTE FUNCTION weft_definition_uses();
`,
  },
  {
    version: 10,
    name: "network-ranges",
    sql: `
CREATE TABLE network_allowed_ranges (
  cidr TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  added_by TEXT COLLATE "C" NOT NULL,
  added_at TEXT COLLATE "C" NOT NULL
);
`,
  },
  {
    version: 11,
    name: "instances",
    sql: `
CREATE TABLE instances (
  id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  hostname TEXT COLLATE "C" NOT NULL,
  pid INTEGER NOT NULL,
  version TEXT COLLATE "C" NOT NULL,
  role TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  heartbeat_at TEXT COLLATE "C" NOT NULL,
  pieces TEXT COLLATE "C" NOT NULL
);
`,
  },
  {
    version: 12,
    name: "run-owner",
    sql: `
ALTER TABLE runs ADD COLUMN owner TEXT COLLATE "C";
`,
  },
  {
    version: 13,
    name: "leases",
    sql: `
CREATE TABLE leases (
  name TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  owner TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL
);
`,
  },
  {
    version: 14,
    name: "idempotency-owner",
    sql: `
ALTER TABLE idempotency_records ADD COLUMN owner TEXT COLLATE "C";
`,
  },
  {
    // Migration 8's counters without rows that every writer waits for. Row triggers added each run to the same
    // few counter rows (its workflow's cell and hour, its definition): every batch of every instance locked
    // them until its commit, so the instances' writers took turns, and each run wrote a new version of each
    // row. Now a statement trigger adds a batch's changes per cell, once, as rows of their own (slot: the
    // writing transaction's id, which no other writer shares), and the run writers fold them into slot 0
    // now and then (weft_fold_run_counts, one folder at a time). A count is the sum over its slots, which is
    // what every query of them computes. The rules are migration 8's: a run counts under its status, each
    // distinct tag and its start hour; an update matters when status or tags changed.
    version: 15,
    name: "run-count-deltas",
    sql: `
DROP TRIGGER runs_count_insert_delete ON runs;
DROP TRIGGER runs_count_update ON runs;
DROP TRIGGER runs_definition_uses ON runs;
DROP FUNCTION weft_run_counts();
DROP FUNCTION weft_definition_uses();

ALTER TABLE run_counts ADD COLUMN slot BIGINT NOT NULL DEFAULT 0;
ALTER TABLE run_counts DROP CONSTRAINT run_counts_pkey;
ALTER TABLE run_counts ADD PRIMARY KEY (workspace_id, environment, workflow_id, status, trigger_type, tag, slot);
CREATE INDEX run_counts_deltas ON run_counts(slot) WHERE slot <> 0;
ALTER TABLE run_hours ADD COLUMN slot BIGINT NOT NULL DEFAULT 0;
ALTER TABLE run_hours DROP CONSTRAINT run_hours_pkey;
ALTER TABLE run_hours ADD PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type, slot);
CREATE INDEX run_hours_deltas ON run_hours(slot) WHERE slot <> 0;
CREATE TABLE run_definition_uses (
  hash TEXT COLLATE "C" NOT NULL,
  slot BIGINT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (hash, slot)
);

-- One run counted (d = 1) or uncounted (d = -1): what a count change needs of it.
CREATE TYPE weft_run_delta AS (
  workspace_id TEXT COLLATE "C",
  environment TEXT COLLATE "C",
  workflow_id TEXT COLLATE "C",
  status TEXT COLLATE "C",
  trigger_type TEXT COLLATE "C",
  tags TEXT COLLATE "C",
  started_at TEXT COLLATE "C",
  id TEXT COLLATE "C",
  definition_hash TEXT COLLATE "C",
  d INTEGER
);

-- Adds a statement's changes, summed per cell, in this transaction's slot (only its own later statements add
-- to the same rows). Static statements: their plans are kept for the session.
CREATE FUNCTION weft_add_run_counts(deltas weft_run_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  tagged boolean;
  untagged boolean;
BEGIN
  IF cardinality(deltas) = 0 THEN RETURN; END IF;
  -- Most batches carry no tags: their tag statements are skipped.
  SELECT bool_or(r.tags <> '[]'), bool_or(r.tags <> '[]' AND r.d = -1) INTO tagged, untagged FROM unnest(deltas) AS r;
  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, '', sum(r.d), txid_current() FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, substr(r.started_at, 1, 13), r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  INSERT INTO run_definition_uses AS u (hash, slot, n)
    SELECT r.definition_hash, txid_current(), sum(r.d) FROM unnest(deltas) AS r GROUP BY 1 HAVING sum(r.d) <> 0
    ON CONFLICT (hash, slot) DO UPDATE SET n = u.n + EXCLUDED.n;
  IF tagged THEN
    INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
      SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, t.tag, sum(r.d), txid_current()
      FROM unnest(deltas) AS r, LATERAL (SELECT DISTINCT value AS tag FROM jsonb_array_elements_text(r.tags::jsonb)) AS t
      WHERE r.tags <> '[]'
      GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
      ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    IF untagged THEN
      DELETE FROM run_tags AS t USING (SELECT DISTINCT r.workspace_id, v.value AS tag, r.started_at, r.id
          FROM unnest(deltas) AS r, jsonb_array_elements_text(r.tags::jsonb) AS v WHERE r.d = -1 AND r.tags <> '[]') AS gone
        WHERE t.workspace_id = gone.workspace_id AND t.tag = gone.tag AND t.started_at = gone.started_at AND t.run_id = gone.id;
    END IF;
    INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
      SELECT r.workspace_id, v.value, r.started_at, r.id
      FROM unnest(deltas) AS r, jsonb_array_elements_text(r.tags::jsonb) AS v WHERE r.d = 1 AND r.tags <> '[]'
      ON CONFLICT DO NOTHING;
  END IF;
END
$$;

CREATE FUNCTION weft_runs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, 1)::weft_run_delta FROM new_rows));
  RETURN NULL;
END
$$;
CREATE FUNCTION weft_runs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, -1)::weft_run_delta FROM old_rows));
  RETURN NULL;
END
$$;
-- An update matters when status or tags changed: the run is uncounted as it was and counted as it is.
CREATE FUNCTION weft_runs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(
    SELECT ROW(o.workspace_id, o.environment, o.workflow_id, o.status, o.trigger_type, o.tags, o.started_at, o.id, o.definition_hash, -1)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags
    UNION ALL
    SELECT ROW(n.workspace_id, n.environment, n.workflow_id, n.status, n.trigger_type, n.tags, n.started_at, n.id, n.definition_hash, 1)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags));
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_counted_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_inserted();
CREATE TRIGGER runs_counted_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_deleted();
CREATE TRIGGER runs_counted_update AFTER UPDATE ON runs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_updated();

-- Moves the changes in slots other than 0 into slot 0 (and definitions' uses into run_definitions.runs), in
-- one transaction, so readers see the same sums before and after. One folder at a time (the others skip:
-- it folds theirs too); returns the rows folded.
CREATE FUNCTION weft_fold_run_counts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  folded bigint := 0;
  k bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) THEN RETURN 0; END IF;
  WITH gone AS (DELETE FROM run_counts WHERE slot <> 0 RETURNING *)
  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT workspace_id, environment, workflow_id, status, trigger_type, tag, sum(n), 0 FROM gone GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;
  WITH gone AS (DELETE FROM run_hours WHERE slot <> 0 RETURNING *)
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT workspace_id, hour, environment, workflow_id, status, trigger_type, sum(n), 0 FROM gone GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;
  WITH gone AS (DELETE FROM run_definition_uses RETURNING *)
  UPDATE run_definitions AS d SET runs = d.runs + uses.n FROM (SELECT hash, sum(n) AS n FROM gone GROUP BY hash) AS uses WHERE d.hash = uses.hash;
  GET DIAGNOSTICS k = ROW_COUNT;
  RETURN folded + k;
END
$$;
`,
  },
  {
    // SQLite's migration 016: a finished run's steps as one compressed record (the run writer packs the runs
    // inserted finished; RunStore.steps reads both forms).
    version: 16,
    name: "packed-steps",
    sql: `
ALTER TABLE runs ADD COLUMN packed_steps BYTEA;
`,
  },
  {
    // SQLite's migration 017: the dictionaries records are compressed against.
    version: 17,
    name: "run-dictionaries",
    sql: `
CREATE TABLE run_dictionaries (
  id TEXT COLLATE "C" PRIMARY KEY,
  definition_hash TEXT COLLATE "C" NOT NULL,
  bytes BYTEA NOT NULL,
  seen_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX run_dictionaries_definition ON run_dictionaries(definition_hash, seen_at);
`,
  },
  {
    // SQLite's migration 018 (compact run rows) changes how SQLite stores runs; PostgreSQL keeps its columns'
    // text (../run-layout.ts). The version is kept in step so both schemas have the same number.
    version: 18,
    name: "compact-runs",
    sql: `SELECT 1;`,
  },
  {
    // SQLite's migration 018 on PostgreSQL (../run-layout.ts): run_names holds each workspace id, workflow id,
    // trigger type and definition hash once, runs and the kept counts hold its integer key; status and
    // environment are codes, started_at milliseconds, run_hours.hour started_at / 3,600,000; `seq` (an identity
    // column, numbered in start order here) orders runs started in the same millisecond, so the list indexes
    // end with it instead of the run id. The fixed-width columns come first (no alignment padding between
    // them). A 3-step run took ~1,190 bytes, ~480 of them its three list index entries.
    version: 19,
    name: "compact-runs-postgres",
    sql: COMPACT_RUNS,
  },
  {
    // Run ids stay unique through a hash index: an entry holds the id's 4-byte hash, not its 36 characters
    // (~59 bytes a run in the b-tree of runs_id_key at 1,000,000 runs). An exclusion constraint with `=` is
    // PostgreSQL's unique constraint for an index kind that has none (a duplicate id is still refused, also
    // between concurrent inserts); look-ups by id use the same index. No statement infers a conflict target
    // from it (ON CONFLICT (id) would need a b-tree). Building it reads every run once.
    version: 20,
    name: "run-id-hash",
    sql: `
ALTER TABLE runs DROP CONSTRAINT runs_id_key;
ALTER TABLE runs ADD CONSTRAINT runs_id_hash EXCLUDE USING hash (id WITH =);
`,
  },
  {
    // Fuller pages and narrower columns for runs (~40 bytes a run at 1,000,000 runs, bench/history.ts):
    // - The run b-trees fill their pages (fillfactor 100; 10 % is left free by default). Runs arrive in start
    //   order and most are inserted finished, so their entries are appended at the end of their workspace's
    //   or workflow's range and the free space would stay free. What it costs: a run inserted running (a
    //   long run, a paused one) gets new list index entries when it finishes (its status is in them), and
    //   those land in full pages, which split in two. The hash index of ids keeps its default (fuller
    //   buckets overflow sooner, for ~1 byte a run).
    // - event_seq (events of one run, bounded by WEFT_RUN_MAX_STEPS) is an INTEGER, depth (sub-workflow
    //   nesting, a few levels) a SMALLINT: 6 bytes of every row.
    // The ALTER TABLE rewrites the table once and builds its indexes again (with the new fill factor).
    version: 21,
    name: "run-sizes",
    sql: `
ALTER INDEX runs_pkey SET (fillfactor = 100);
ALTER INDEX runs_workspace_started SET (fillfactor = 100);
ALTER INDEX runs_workflow_started SET (fillfactor = 100);
ALTER INDEX runs_workspace_duration SET (fillfactor = 100);
ALTER TABLE runs ALTER COLUMN event_seq TYPE INTEGER, ALTER COLUMN depth TYPE SMALLINT;
`,
  },
  {
    // As SQLite's 022: sort=duration breaks ties by environment then seq, and its index drops started_at
    // (an entry 48 -> 40 bytes with its header).
    version: 22,
    name: "duration-index",
    sql: `
DROP INDEX runs_workspace_duration;
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms NULLS FIRST, environment, seq) WITH (fillfactor = 100);
`,
  },
  {
    // As SQLite's 023: the key the cluster's secrets are encrypted with, as a known text encrypted with it.
    version: 23,
    name: "encryption-key-check",
    sql: `
CREATE TABLE encryption_key_check (
  name TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  value TEXT COLLATE "C" NOT NULL,
  recorded_at TEXT COLLATE "C" NOT NULL
);
`,
  },
];
