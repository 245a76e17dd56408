/**
 * The instance that holds each unfinished run (issue: a cluster on one PostgreSQL database). A run is
 * executed, paused or queued by its owner only; when the owner stops renewing its heartbeat for the lease
 * (or stops cleanly, or was never known), another instance claims the run and recovers it as a restart would.
 * NULL: nobody yet (a run from before this migration, or one left for a worker). On SQLite the one process
 * owns everything and the column stays NULL.
 */
export default {
  version: 12,
  name: "run-owner",
  sql: `
ALTER TABLE runs ADD COLUMN owner TEXT;
`,
};
