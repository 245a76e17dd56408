/**
 * Per-workflow run saving (docs/engine.md, "Run saving"): `run_unsaved` counts the finished runs whose row was
 * not kept (settings.saveRuns "none" drops a successful run), per workspace, workflow, hour of start (hours
 * since the epoch), environment, trigger type and status. The stored runs stay counted by run_counts, run_hours
 * and run_durations, which the list's pages are positioned by, so these runs are counted apart: GET
 * /api/runs/counts adds both. Text columns: one row per cell, however many runs it counts. `slot` and its index
 * as run_hours' (always 0 on SQLite, one writer; the same schema as PostgreSQL's).
 */
export default {
  version: 26,
  name: "run-saving",
  sql: `
CREATE TABLE run_unsaved (
  workspace_id TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  environment TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  status TEXT NOT NULL,
  n INTEGER NOT NULL,
  slot INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type, slot)
) WITHOUT ROWID;
CREATE INDEX run_unsaved_deltas ON run_unsaved(slot) WHERE slot <> 0;
`,
};
