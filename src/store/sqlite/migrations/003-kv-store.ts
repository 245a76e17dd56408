/** The `store` piece's workspace key-value entries (values are JSON text). */
export default {
  version: 3,
  name: "kv-store",
  sql: `
CREATE TABLE kv_entries (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (workspace_id, key)
) WITHOUT ROWID;
`,
};
