/** SQLite's 013-leases.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 13,
  name: "leases",
  sql: `
CREATE TABLE leases (
  name TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  owner TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL
);
`,
};
