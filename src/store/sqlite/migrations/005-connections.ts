export default {
  version: 5,
  name: "connections",
  sql: `
CREATE TABLE connections (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  piece_id TEXT NOT NULL,
  name TEXT NOT NULL,
  auth_kind TEXT NOT NULL,
  grant_type TEXT,
  status TEXT NOT NULL,
  status_message TEXT,
  config TEXT NOT NULL DEFAULT '{}',
  client_id TEXT,
  managed_app INTEGER NOT NULL DEFAULT 0,
  public_values TEXT NOT NULL DEFAULT '{}',
  secrets TEXT,
  tokens TEXT,
  token_expires_at TEXT,
  refresh_lease TEXT,
  refresh_lease_until INTEGER,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX connections_workspace_name ON connections(workspace_id, name);
CREATE INDEX connections_workspace_piece ON connections(workspace_id, piece_id);
CREATE TABLE oauth2_states (
  nonce TEXT PRIMARY KEY,
  connection_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  workspace_id TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  binding TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX oauth2_states_connection ON oauth2_states(connection_id);
CREATE INDEX oauth2_states_expires ON oauth2_states(expires_at);
`,
};
