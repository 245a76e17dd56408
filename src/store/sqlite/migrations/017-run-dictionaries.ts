/**
 * Dictionaries for run records (issue 19, "less disk per run"; ../../run-records.ts): a finished run's steps and
 * cold columns are compressed against the record of an earlier run of the same definition, stored once here.
 * `id` is the first 8 bytes of the SHA-256 of `bytes` (hex), the value a record names; `seen_at` is when a
 * writer last announced it (the retention sweep deletes a dictionary only when its definition is gone and
 * it was not announced for a day: run-rows.ts, deleteOrphanDictionaries).
 */
export default {
  version: 17,
  name: "run-dictionaries",
  sql: `
CREATE TABLE run_dictionaries (
  id TEXT PRIMARY KEY,
  definition_hash TEXT NOT NULL,
  bytes BLOB NOT NULL,
  seen_at TEXT NOT NULL
);
CREATE INDEX run_dictionaries_definition ON run_dictionaries(definition_hash, seen_at);
`,
};
