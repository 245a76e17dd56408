/**
 * A finished run's steps in one compressed record (issue 19, "less disk per run"): `packed_steps` holds the
 * steps of a run that was inserted already finished (RunStore.insertFinishedRun; the format is described in
 * ../../run-records.ts, which since migration 017 holds the run's cold columns too), and such a run has no run_steps rows. NULL for every other run, and for all
 * runs stored before this migration: readers take steps from both places.
 */
export default {
  version: 16,
  name: "packed-steps",
  sql: `
ALTER TABLE runs ADD COLUMN packed_steps BLOB;
`,
};
