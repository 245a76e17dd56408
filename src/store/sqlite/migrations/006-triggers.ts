export default {
  version: 6,
  name: "triggers",
  sql: `
CREATE TABLE trigger_schedules (
  workflow_id TEXT PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT NOT NULL,
  version_id TEXT NOT NULL,
  spec TEXT NOT NULL,
  next_fire_at INTEGER NOT NULL,
  last_fired_at INTEGER,
  last_run_id TEXT,
  updated_at INTEGER NOT NULL
);
CREATE INDEX trigger_schedules_due ON trigger_schedules(next_fire_at);
CREATE TABLE trigger_polls (
  workflow_id TEXT PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT NOT NULL,
  version_id TEXT NOT NULL,
  piece_id TEXT NOT NULL,
  trigger_id TEXT NOT NULL,
  interval_seconds INTEGER NOT NULL,
  next_poll_at INTEGER NOT NULL,
  baseline TEXT,
  last_poll_at INTEGER,
  last_success_at INTEGER,
  failures INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  updated_at INTEGER NOT NULL
);
CREATE INDEX trigger_polls_due ON trigger_polls(next_poll_at);
-- No foreign key: a registration must outlive a deleted workflow until onDisable has run with its
-- trigger (kept here, since the workflow's versions go with it).
CREATE TABLE trigger_registrations (
  workflow_id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  piece_id TEXT NOT NULL,
  trigger_id TEXT NOT NULL,
  version_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  state TEXT,
  enabled INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  updated_at INTEGER NOT NULL
);
`,
};
