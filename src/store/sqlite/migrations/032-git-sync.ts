/**
 * Git sync (docs/workflows-as-code.md, "Git sync"): a workspace's remote, branch and sub-folder, the token or SSH key
 * for it (encrypted with the server's key, as connection secrets are; an SSH key's public half in clear, to show), whether the workspace is managed by git
 * (its edits refused, its pulls published), a pull schedule, the push webhook's secret (encrypted), and what was
 * last synced: the commit, and a digest of each exported file at that moment (`synced_files`, JSON path → sha256),
 * from which "unpushed local changes" are told.
 */
export default {
  version: 32,
  name: "git-sync",
  sql: `
CREATE TABLE git_sync (
  workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  remote_url TEXT NOT NULL,
  branch TEXT NOT NULL,
  folder TEXT NOT NULL DEFAULT '',
  username TEXT,
  secret TEXT,
  ssh_public_key TEXT,
  managed INTEGER NOT NULL DEFAULT 0,
  prune INTEGER NOT NULL DEFAULT 0,
  schedule TEXT,
  webhook_secret TEXT,
  last_commit TEXT,
  synced_files TEXT NOT NULL DEFAULT '{}',
  synced_at TEXT,
  updated_by TEXT,
  updated_at TEXT NOT NULL
);
`,
};
