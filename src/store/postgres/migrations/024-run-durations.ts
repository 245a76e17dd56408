/**
 * As SQLite's 024 (../../sqlite/migrations/024-run-durations.ts): `run_durations` counts runs per duration bucket
 * (two significant digits of duration_ms; no duration -9007199254740991, a negative one -9007199254740990), kept
 * as run_hours is since migration 15: the statement triggers add each statement's changes per cell in the writing
 * transaction's slot, and weft_fold_run_counts folds them into slot 0. A run counts again when its status or its
 * duration changed (it is given one when it finishes). `runs_workspace_duration` covers status, trigger type and
 * workflow (INCLUDE: the order of its keys, and so of the list, is unchanged), so a filtered walk of it reads no
 * run row.
 *
 * weft_run_delta gains the run's duration, so the trigger functions that build it are made again (same rules
 * otherwise). The whole migration is one transaction.
 */
import { FOLD_LOCK_KEY } from "./015-run-count-deltas";

/** A duration (the BIGINT expression `d`) as its bucket's key: the same buckets as SQLite's. */
const BUCKET = (d: string) => {
  const cuts: string[] = [];
  for (let k = 2; k <= 17; k++) cuts.push(`WHEN ${d} < 1${"0".repeat(k + 1)} THEN ${d} / 1${"0".repeat(k - 1)} * 1${"0".repeat(k - 1)}`);
  return `CASE WHEN ${d} IS NULL THEN -9007199254740991 WHEN ${d} < 0 THEN -9007199254740990 WHEN ${d} < 100 THEN ${d}
    ${cuts.join("\n    ")}
    ELSE ${d} / 100000000000000000 * 100000000000000000 END`;
};

/** What makes a run count again when updated (its cells: status, tags, duration). */
const CHANGED = "o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags OR o.duration_ms IS DISTINCT FROM n.duration_ms";

/** Moves the rows of `table` in slots other than 0 into slot 0 (its cells: the workspace and `cells`), counting them in `folded`. */
const fold = (table: string, cells: string) => `  WITH gone AS (DELETE FROM ${table} WHERE slot <> 0 RETURNING *)
  INSERT INTO ${table} AS c (workspace_id, ${cells}, n, slot)
    SELECT workspace_id, ${cells}, sum(n), 0 FROM gone GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, ${cells}, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;`;

export default {
  version: 24,
  name: "run-durations",
  sql: `
CREATE TABLE run_durations (
  workspace_id INTEGER NOT NULL,
  bucket BIGINT NOT NULL,
  environment SMALLINT NOT NULL,
  workflow_id INTEGER NOT NULL,
  status SMALLINT NOT NULL,
  trigger_type INTEGER NOT NULL,
  n BIGINT NOT NULL,
  slot BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, bucket, environment, workflow_id, status, trigger_type, slot)
);
CREATE INDEX run_durations_deltas ON run_durations(slot) WHERE slot <> 0;
INSERT INTO run_durations (workspace_id, bucket, environment, workflow_id, status, trigger_type, n, slot)
  SELECT workspace_id, ${BUCKET("duration_ms")}, environment, workflow_id, status, trigger_type, count(*), 0 FROM runs
  GROUP BY 1, 2, 3, 4, 5, 6;

CREATE FUNCTION weft_duration_bucket(d BIGINT) RETURNS BIGINT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ${BUCKET("d")}
$$;

ALTER TYPE weft_run_delta ADD ATTRIBUTE duration_ms BIGINT;

CREATE OR REPLACE FUNCTION weft_add_run_counts(deltas weft_run_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  tagged boolean;
  untagged boolean;
BEGIN
  IF cardinality(deltas) = 0 THEN RETURN; END IF;
  SELECT bool_or(r.tags <> '[]'), bool_or(r.tags <> '[]' AND r.d = -1) INTO tagged, untagged FROM unnest(deltas) AS r;
  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, '', sum(r.d), txid_current() FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, r.started_at / 3600000, r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  INSERT INTO run_durations AS b (workspace_id, bucket, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, weft_duration_bucket(r.duration_ms), r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, bucket, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = b.n + EXCLUDED.n;
  INSERT INTO run_definition_uses AS u (hash, slot, n)
    SELECT n.name, txid_current(), sum(r.d) FROM unnest(deltas) AS r JOIN run_names n ON n.key = r.definition_hash
    GROUP BY 1 HAVING sum(r.d) <> 0
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

CREATE OR REPLACE FUNCTION weft_runs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, 1, duration_ms)::weft_run_delta FROM new_rows));
  RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION weft_runs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, -1, duration_ms)::weft_run_delta FROM old_rows));
  RETURN NULL;
END
$$;
-- An update matters when status, tags or duration changed: the run is uncounted as it was and counted as it is.
CREATE OR REPLACE FUNCTION weft_runs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(
    SELECT ROW(o.workspace_id, o.environment, o.workflow_id, o.status, o.trigger_type, o.tags, o.started_at, o.id, o.definition_hash, -1,
        o.duration_ms)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${CHANGED}
    UNION ALL
    SELECT ROW(n.workspace_id, n.environment, n.workflow_id, n.status, n.trigger_type, n.tags, n.started_at, n.id, n.definition_hash, 1,
        n.duration_ms)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${CHANGED}));
  RETURN NULL;
END
$$;

-- Migration 15's fold, run_durations' slots included.
CREATE OR REPLACE FUNCTION weft_fold_run_counts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  folded bigint := 0;
  k bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) THEN RETURN 0; END IF;
${fold("run_counts", "environment, workflow_id, status, trigger_type, tag")}
${fold("run_hours", "hour, environment, workflow_id, status, trigger_type")}
${fold("run_durations", "bucket, environment, workflow_id, status, trigger_type")}
  WITH gone AS (DELETE FROM run_definition_uses RETURNING *)
  UPDATE run_definitions AS d SET runs = d.runs + uses.n FROM (SELECT hash, sum(n) AS n FROM gone GROUP BY hash) AS uses WHERE d.hash = uses.hash;
  GET DIAGNOSTICS k = ROW_COUNT;
  RETURN folded + k;
END
$$;

DROP INDEX runs_workspace_duration;
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms NULLS FIRST, environment, seq)
  INCLUDE (status, trigger_type, workflow_id) WITH (fillfactor = 100);
`,
};
