/**
 * Run ids stay unique through a hash index: an entry holds the id's 4-byte hash, not its 36 characters
 * (~59 bytes a run in the b-tree of runs_id_key at 1,000,000 runs). An exclusion constraint with `=` is
 * PostgreSQL's unique constraint for an index kind that has none (a duplicate id is still refused, also
 * between concurrent inserts); look-ups by id use the same index. No statement infers a conflict target
 * from it (ON CONFLICT (id) would need a b-tree). Building it reads every run once.
 */
export default {
  version: 20,
  name: "run-id-hash",
  sql: `
ALTER TABLE runs DROP CONSTRAINT runs_id_key;
ALTER TABLE runs ADD CONSTRAINT runs_id_hash EXCLUDE USING hash (id WITH =);
`,
};
