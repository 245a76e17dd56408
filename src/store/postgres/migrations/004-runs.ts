/** SQLite's 004-runs.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
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
};
