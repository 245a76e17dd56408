/**
 * Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on").
 * - `sso_providers`: an OpenID provider of an org: its issuer, Weft's client id and secret (the secret encrypted
 *   with the server's key, as connection secrets are), scopes, the claim whose values map to roles per workspace
 *   (`role_mapping`, JSON), the role a first sign-in gets in `workspace_id`, and whether password logins are refused.
 * - `sso_links`: which user an (issuer, subject) pair signs in as.
 * - `sso_pending`: a sign-in between the redirect to the provider and its callback (state hash, nonce, PKCE
 *   verifier); deleted when the callback takes it (single use) or once expired.
 * - `sso_sessions`: which provider a session came from and its ID token (the hint for RP-initiated logout).
 */
export default {
  version: 29,
  name: "sso",
  sql: `
CREATE TABLE sso_providers (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  issuer TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_secret TEXT,
  scopes TEXT NOT NULL,
  role_claim TEXT,
  role_mapping TEXT NOT NULL,
  default_role TEXT NOT NULL,
  sso_only INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE sso_links (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  provider_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX sso_links_user ON sso_links(user_id);
CREATE TABLE sso_pending (
  state_hash TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  nonce TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE TABLE sso_sessions (
  session_hash TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  id_token TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`,
};
