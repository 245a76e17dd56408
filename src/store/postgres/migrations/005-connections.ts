/** SQLite's 005-connections.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 5,
  name: "connections",
  sql: `
CREATE TABLE connections (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  piece_id TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  auth_kind TEXT COLLATE "C" NOT NULL,
  grant_type TEXT COLLATE "C",
  status TEXT COLLATE "C" NOT NULL,
  status_message TEXT COLLATE "C",
  config TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  client_id TEXT COLLATE "C",
  managed_app INTEGER NOT NULL DEFAULT 0,
  public_values TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  secrets TEXT COLLATE "C",
  tokens TEXT COLLATE "C",
  token_expires_at TEXT COLLATE "C",
  refresh_lease TEXT COLLATE "C",
  refresh_lease_until BIGINT,
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX connections_workspace_name ON connections(workspace_id, name);
CREATE INDEX connections_workspace_piece ON connections(workspace_id, piece_id);
CREATE TABLE oauth2_states (
  nonce TEXT COLLATE "C" PRIMARY KEY,
  connection_id TEXT COLLATE "C" NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL,
  code_verifier TEXT COLLATE "C" NOT NULL,
  redirect_uri TEXT COLLATE "C" NOT NULL,
  binding TEXT COLLATE "C" NOT NULL,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX oauth2_states_connection ON oauth2_states(connection_id);
CREATE INDEX oauth2_states_expires ON oauth2_states(expires_at);
`,
};
