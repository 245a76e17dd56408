/**
 * SQLite's migration 016: a finished run's steps as one compressed record (the run writer packs the runs
 * inserted finished; RunStore.steps reads both forms).
 */
export default {
  version: 16,
  name: "packed-steps",
  sql: `
ALTER TABLE runs ADD COLUMN packed_steps BYTEA;
`,
};
