/** SQLite's 006-triggers.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
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
};
