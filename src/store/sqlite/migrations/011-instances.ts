/**
 * The fleet: every `weft serve` process registers here at start and renews `heartbeat_at` while it runs, with
 * the pieces (id and version) it can run. Several instances share the table when they share a PostgreSQL
 * database; on SQLite there is one.
 */
export default {
  version: 11,
  name: "instances",
  sql: `
CREATE TABLE instances (
  id TEXT NOT NULL PRIMARY KEY,
  hostname TEXT NOT NULL,
  pid INTEGER NOT NULL,
  version TEXT NOT NULL,
  role TEXT NOT NULL,
  started_at TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL,
  pieces TEXT NOT NULL
);
`,
};
