/** As SQLite's 032: a workspace's git remote (token and webhook secret encrypted), managed mode, what was last synced. */
export default {
  version: 32,
  name: "git-sync",
  sql: `
CREATE TABLE git_sync (
  workspace_id TEXT COLLATE "C" PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  remote_url TEXT COLLATE "C" NOT NULL,
  branch TEXT COLLATE "C" NOT NULL,
  folder TEXT COLLATE "C" NOT NULL DEFAULT '',
  username TEXT COLLATE "C",
  secret TEXT COLLATE "C",
  ssh_public_key TEXT COLLATE "C",
  managed INTEGER NOT NULL DEFAULT 0,
  prune INTEGER NOT NULL DEFAULT 0,
  schedule TEXT COLLATE "C",
  webhook_secret TEXT COLLATE "C",
  last_commit TEXT COLLATE "C",
  synced_files TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  synced_at TEXT COLLATE "C",
  updated_by TEXT COLLATE "C",
  updated_at TEXT COLLATE "C" NOT NULL
);
`,
};
