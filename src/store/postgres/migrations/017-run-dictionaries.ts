/**
 * SQLite's migration 017: the dictionaries records are compressed against.
 */
export default {
  version: 17,
  name: "run-dictionaries",
  sql: `
CREATE TABLE run_dictionaries (
  id TEXT COLLATE "C" PRIMARY KEY,
  definition_hash TEXT COLLATE "C" NOT NULL,
  bytes BYTEA NOT NULL,
  seen_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX run_dictionaries_definition ON run_dictionaries(definition_hash, seen_at);
`,
};
