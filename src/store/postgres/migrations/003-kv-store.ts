/** SQLite's 003-kv-store.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 3,
  name: "kv-store",
  sql: `
CREATE TABLE kv_entries (
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  key TEXT COLLATE "C" NOT NULL,
  value TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workspace_id, key)
);
`,
};
