/**
 * Runs and their step rows (docs/engine.md), plus the definition snapshots runs execute.
 * A run's definition is stored once per distinct content (hash) so a million runs of one version
 * cost one copy; retries with `version: original` and resumes after a restart read it back.
 *
 * Indexes are few on purpose: every one costs each of the thousands of inserts per second. Run ids are
 * UUIDv7 (time-ordered), so the primary key also serves retention (oldest first) and start-up recovery
 * scans the table once. Step rows are found through their run only; the step id needs no index of its own.
 */
/** The runs columns from finished_at to event_seq, which 018's compact rows keep as they are. */
export const RUN_DETAILS = `  finished_at TEXT,
  duration_ms INTEGER,
  error_message TEXT,
  tags TEXT NOT NULL DEFAULT '[]',
  started_from_step TEXT,
  retry_of_run_id TEXT,
  retried_by_run_id TEXT,
  step_total INTEGER NOT NULL DEFAULT 0,
  step_failed INTEGER NOT NULL DEFAULT 0,
  wait_step TEXT,
  resume_mode TEXT,
  resume_at TEXT,
  resume_token_hash TEXT,
  parent_run_id TEXT,
  depth INTEGER NOT NULL DEFAULT 0,
  state TEXT,
  response TEXT,
  event_seq INTEGER NOT NULL DEFAULT 0`;

export default {
  version: 4,
  name: "runs",
  sql: `
CREATE TABLE run_definitions (
  hash TEXT PRIMARY KEY,
  definition TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  workflow_name TEXT NOT NULL,
  workflow_trigger_type TEXT,
  status TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  trigger_data TEXT NOT NULL,
  environment TEXT NOT NULL,
  version_id TEXT,
  version_number INTEGER,
  executed_version_id TEXT,
  executed_version_number INTEGER,
  definition_hash TEXT NOT NULL,
  started_at TEXT NOT NULL,
${RUN_DETAILS}
);
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at DESC, id DESC);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at DESC, id DESC);
CREATE TABLE run_steps (
  id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  node_id TEXT NOT NULL,
  node_type TEXT NOT NULL,
  piece_id TEXT,
  action_id TEXT,
  display_name TEXT,
  status TEXT NOT NULL,
  input_data TEXT,
  output_data TEXT,
  output_truncated INTEGER NOT NULL DEFAULT 0,
  error_message TEXT,
  retry_count INTEGER NOT NULL DEFAULT 0,
  started_at TEXT,
  finished_at TEXT,
  duration_ms INTEGER
);
CREATE INDEX run_steps_run ON run_steps(run_id, seq);
`,
};
