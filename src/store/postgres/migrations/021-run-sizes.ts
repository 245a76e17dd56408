/**
 * Fuller pages and narrower columns for runs (~40 bytes a run at 1,000,000 runs, bench/history.ts):
 * - The run b-trees fill their pages (fillfactor 100; 10 % is left free by default). Runs arrive in start
 *   order and most are inserted finished, so their entries are appended at the end of their workspace's
 *   or workflow's range and the free space would stay free. What it costs: a run inserted running (a
 *   long run, a paused one) gets new list index entries when it finishes (its status is in them), and
 *   those land in full pages, which split in two. The hash index of ids keeps its default (fuller
 *   buckets overflow sooner, for ~1 byte a run).
 * - event_seq (events of one run, bounded by WEFT_RUN_MAX_STEPS) is an INTEGER, depth (sub-workflow
 *   nesting, a few levels) a SMALLINT: 6 bytes of every row.
 * The ALTER TABLE rewrites the table once and builds its indexes again (with the new fill factor).
 */
export default {
  version: 21,
  name: "run-sizes",
  sql: `
ALTER INDEX runs_pkey SET (fillfactor = 100);
ALTER INDEX runs_workspace_started SET (fillfactor = 100);
ALTER INDEX runs_workflow_started SET (fillfactor = 100);
ALTER INDEX runs_workspace_duration SET (fillfactor = 100);
ALTER TABLE runs ALTER COLUMN event_seq TYPE INTEGER, ALTER COLUMN depth TYPE SMALLINT;
`,
};
