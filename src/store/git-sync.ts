/**
 * Git sync's settings of a workspace (docs/workflows-as-code.md, "Git sync"): the rows and what the storage port
 * (./port.ts) answers about them. `secret` and `webhook_secret` are encrypted by the caller (src/core/git/).
 */
export interface GitSyncRow {
  workspace_id: string;
  remote_url: string;
  branch: string;
  /** The sub-folder of the repository that holds the files; "" for its root. */
  folder: string;
  username: string | null;
  secret: string | null;
  /** The public half of a key Weft made for an SSH remote (shown, to add as a deploy key). */
  ssh_public_key: string | null;
  managed: boolean;
  prune: boolean;
  schedule: string | null;
  webhook_secret: string | null;
  last_commit: string | null;
  /** JSON: exported file path → sha256 of its text, at the last pull or push. */
  synced_files: string;
  synced_at: string | null;
  updated_by: string | null;
  updated_at: string;
}

export interface GitSyncRepository {
  get(workspaceId: string): Promise<GitSyncRow | null>;
  /** Every workspace's settings (the scheduler reads them). */
  list(): Promise<GitSyncRow[]>;
  /** Inserts or replaces the settings; the synced state is written by `markSynced`, never here. */
  put(row: GitSyncRow): Promise<void>;
  markSynced(workspaceId: string, commit: string | null, files: string, at: string | null): Promise<void>;
  delete(workspaceId: string): Promise<void>;
}
