/**
 * As SQLite's 027: members of a workspace with their role, invitations (token hashes only); every existing
 * user becomes owner of every workspace of their org.
 */
export default {
  version: 27,
  name: "members",
  sql: `
CREATE TABLE workspace_members (
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT COLLATE "C" NOT NULL,
  deactivated_at TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members(user_id);
INSERT INTO workspace_members (workspace_id, user_id, role, deactivated_at, created_at)
  SELECT w.id, u.id, 'owner', NULL, u.created_at FROM users u JOIN workspaces w ON w.org_id = u.org_id;
CREATE TABLE invitations (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  email TEXT COLLATE weft_nocase NOT NULL,
  role TEXT COLLATE "C" NOT NULL,
  token_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  invited_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL,
  accepted_at TEXT COLLATE "C",
  accepted_by TEXT COLLATE "C",
  revoked_at TEXT COLLATE "C"
);
CREATE INDEX invitations_workspace ON invitations(workspace_id);
`,
};
