/** As SQLite's 029: single sign-on providers (secret encrypted), (issuer, subject) links, pending sign-ins, SSO sessions. */
export default {
  version: 29,
  name: "sso",
  sql: `
CREATE TABLE sso_providers (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  issuer TEXT COLLATE "C" NOT NULL,
  client_id TEXT COLLATE "C" NOT NULL,
  client_secret TEXT COLLATE "C",
  scopes TEXT COLLATE "C" NOT NULL,
  role_claim TEXT COLLATE "C",
  role_mapping TEXT COLLATE "C" NOT NULL,
  default_role TEXT COLLATE "C" NOT NULL,
  sso_only INTEGER NOT NULL DEFAULT 0,
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE sso_links (
  issuer TEXT COLLATE "C" NOT NULL,
  subject TEXT COLLATE "C" NOT NULL,
  user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  provider_id TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX sso_links_user ON sso_links(user_id);
CREATE TABLE sso_pending (
  state_hash TEXT COLLATE "C" PRIMARY KEY,
  provider_id TEXT COLLATE "C" NOT NULL,
  nonce TEXT COLLATE "C" NOT NULL,
  code_verifier TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE sso_sessions (
  session_hash TEXT COLLATE "C" PRIMARY KEY,
  provider_id TEXT COLLATE "C" NOT NULL,
  id_token TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
`,
};
