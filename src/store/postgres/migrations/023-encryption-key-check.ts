/**
 * As SQLite's 023: the key the cluster's secrets are encrypted with, as a known text encrypted with it.
 */
export default {
  version: 23,
  name: "encryption-key-check",
  sql: `
CREATE TABLE encryption_key_check (
  name TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  value TEXT COLLATE "C" NOT NULL,
  recorded_at TEXT COLLATE "C" NOT NULL
);
`,
};
