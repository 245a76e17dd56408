/** SQLite's 001-identity.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 1,
  name: "identity",
  sql: `
CREATE COLLATION IF NOT EXISTS weft_nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE orgs (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE workspaces (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  name TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX workspaces_org ON workspaces(org_id);
CREATE TABLE users (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  email TEXT COLLATE weft_nocase NOT NULL UNIQUE,
  name TEXT COLLATE "C" NOT NULL,
  password_hash TEXT COLLATE "C" NOT NULL,
  role TEXT COLLATE "C" NOT NULL,
  default_workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE sessions (
  id_hash TEXT COLLATE "C" PRIMARY KEY,
  user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  csrf_token TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE api_tokens (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  prefix TEXT COLLATE "C" NOT NULL,
  token_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  scopes TEXT COLLATE "C" NOT NULL,
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  last_used_at TEXT COLLATE "C",
  revoked_at TEXT COLLATE "C"
);
CREATE INDEX api_tokens_workspace ON api_tokens(workspace_id);
CREATE TABLE idempotency_records (
  credential TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  fingerprint TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  status BIGINT,
  body TEXT COLLATE "C",
  created_at BIGINT NOT NULL,
  PRIMARY KEY (credential, key)
);
CREATE INDEX idempotency_created ON idempotency_records(created_at);
`,
};
