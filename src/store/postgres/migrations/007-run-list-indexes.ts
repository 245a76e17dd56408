/** SQLite's 007-run-list-indexes.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 7,
  name: "run-list-indexes",
  sql: `
DROP INDEX runs_workspace_started;
DROP INDEX runs_workflow_started;
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, id);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, id);
`,
};
