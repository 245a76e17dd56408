/** SQLite's 010-network-ranges.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 10,
  name: "network-ranges",
  sql: `
CREATE TABLE network_allowed_ranges (
  cidr TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  added_by TEXT COLLATE "C" NOT NULL,
  added_at TEXT COLLATE "C" NOT NULL
);
`,
};
