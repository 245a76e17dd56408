/**
 * As SQLite's 022: sort=duration breaks ties by environment then seq, and its index drops started_at
 * (an entry 48 -> 40 bytes with its header).
 */
export default {
  version: 22,
  name: "duration-index",
  sql: `
DROP INDEX runs_workspace_duration;
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms NULLS FIRST, environment, seq) WITH (fillfactor = 100);
`,
};
