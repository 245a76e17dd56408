/**
 * A second factor for password logins (docs/teams.md, "Second factor").
 * - `second_factors`: a user's TOTP secret (encrypted with the server's key, as connection secrets are), pending
 *   until the first code is confirmed (`confirmed_at`), and the last time step a code was accepted for
 *   (`last_step`: a code of that step or an earlier one is refused, so a code works once).
 * - `recovery_codes`: the SHA-256 of each recovery code of a user; `used_at` set when it is spent (each works once).
 * - `second_factor_logins`: a login between its correct password and its code: a hashed single-use ticket, short-lived,
 *   with the count of wrong codes given for it.
 * - `second_factor_requirements`: the workspaces whose owner requires a second factor of every member.
 */
export default {
  version: 30,
  name: "second-factor",
  sql: `
CREATE TABLE second_factors (
  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  confirmed_at TEXT,
  last_step INTEGER,
  created_at TEXT NOT NULL
);
CREATE TABLE recovery_codes (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  used_at TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (user_id, code_hash)
);
CREATE TABLE second_factor_logins (
  ticket_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  failures INTEGER NOT NULL DEFAULT 0,
  expires_at TEXT NOT NULL
);
CREATE TABLE second_factor_requirements (
  workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  required_by TEXT,
  created_at TEXT NOT NULL
);
`,
};
