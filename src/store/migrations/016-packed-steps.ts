/**
 * A finished run's steps in one compressed record (issue 19, "less disk per run"): `packed_steps` holds the
 * steps of a run that was inserted already finished (RunStore.insertPackedRunValues; the format is described
 * with packSteps in ../runs.ts), and such a run has no run_steps rows. NULL for every other run, and for all
 * runs stored before this migration: readers take steps from both places.
 */
export default {
  version: 16,
  name: "packed-steps",
  sql: `
ALTER TABLE runs ADD COLUMN packed_steps BLOB;
`,
};
