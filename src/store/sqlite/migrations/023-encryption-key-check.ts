/**
 * Which key a cluster's secrets are encrypted with: one row, `current`, whose value is a known text encrypted
 * with that key (src/core/key-check.ts). An instance whose own key cannot decrypt it refuses to start on a
 * shared database, before it registers or takes work. `weft keys rotate` re-encrypts it with every other
 * secret, so after a rotation it names the new key. Written only on PostgreSQL, where instances share a
 * database; the table exists on SQLite so that both schemas stay the same.
 */
export default {
  version: 23,
  name: "encryption-key-check",
  sql: `
CREATE TABLE encryption_key_check (
  name TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL,
  recorded_at TEXT NOT NULL
);
`,
};
