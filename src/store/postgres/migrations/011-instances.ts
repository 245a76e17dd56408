/** SQLite's 011-instances.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 11,
  name: "instances",
  sql: `
CREATE TABLE instances (
  id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  hostname TEXT COLLATE "C" NOT NULL,
  pid INTEGER NOT NULL,
  version TEXT COLLATE "C" NOT NULL,
  role TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  heartbeat_at TEXT COLLATE "C" NOT NULL,
  pieces TEXT COLLATE "C" NOT NULL
);
`,
};
