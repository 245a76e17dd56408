/**
 * Members of a workspace and invitations to one (docs/teams.md).
 * - `workspace_members`: a user's role in a workspace (owner, admin, editor, operator, viewer: src/schema/roles.ts)
 *   and, while deactivated, since when. A user may be a member of several workspaces with a different role in each.
 * - `invitations`: a single-use, expiring link to join a workspace with a role; only the token's SHA-256 is kept,
 *   as for API tokens.
 * Every existing user becomes owner of every workspace of their org, so an installation with one user keeps
 * working unchanged.
 */
export default {
  version: 27,
  name: "members",
  sql: `
CREATE TABLE workspace_members (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  deactivated_at TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members(user_id);
INSERT INTO workspace_members (workspace_id, user_id, role, deactivated_at, created_at)
  SELECT w.id, u.id, 'owner', NULL, u.created_at FROM users u JOIN workspaces w ON w.org_id = u.org_id;
CREATE TABLE invitations (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  email TEXT NOT NULL COLLATE NOCASE,
  role TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  invited_by TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  accepted_at TEXT,
  accepted_by TEXT,
  revoked_at TEXT
);
CREATE INDEX invitations_workspace ON invitations(workspace_id);
`,
};
