/** As SQLite's 030: TOTP secrets (encrypted), hashed recovery codes, logins waiting for their code, workspaces requiring a second factor. */
export default {
  version: 30,
  name: "second-factor",
  sql: `
CREATE TABLE second_factors (
  user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  secret TEXT COLLATE "C" NOT NULL,
  confirmed_at TEXT COLLATE "C",
  last_step BIGINT,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE recovery_codes (
  user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash TEXT COLLATE "C" NOT NULL,
  used_at TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (user_id, code_hash)
);
CREATE TABLE second_factor_logins (
  ticket_hash TEXT COLLATE "C" PRIMARY KEY,
  user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  failures BIGINT NOT NULL DEFAULT 0,
  expires_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE second_factor_requirements (
  workspace_id TEXT COLLATE "C" PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  required_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL
);
`,
};
