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

/** A row as both databases hold it: managed and prune as 0 or 1. */
export type StoredGitSyncRow = Omit<GitSyncRow, "managed" | "prune"> & { managed: number; prune: number };

/** A stored row with its flags as booleans (PostgreSQL's client may answer an INTEGER as text). */
export const gitSyncRowOf = (row: StoredGitSyncRow | null): GitSyncRow | null =>
  row ? { ...row, managed: Number(row.managed) === 1, prune: Number(row.prune) === 1 } : null;

/** The values of `put`'s INSERT, in its column order (workspace_id ... updated_at; last_commit and the sync state are markSynced's). */
export type GitSyncValues = [
  string,
  string,
  string,
  string,
  string | null,
  string | null,
  string | null,
  number,
  number,
  string | null,
  string | null,
  string | null,
  string,
];
export const gitSyncValues = (r: GitSyncRow): GitSyncValues => [
  r.workspace_id,
  r.remote_url,
  r.branch,
  r.folder,
  r.username,
  r.secret,
  r.ssh_public_key,
  r.managed ? 1 : 0,
  r.prune ? 1 : 0,
  r.schedule,
  r.webhook_secret,
  r.updated_by,
  r.updated_at,
];

export interface GitSyncRepository {
  get(workspaceId: string): Promise<GitSyncRow | null>;
  /** Every workspace's settings (the scheduler reads them). */
  list(): Promise<GitSyncRow[]>;
  /** Inserts or replaces the settings; the synced state is written by `markSynced`, never here. */
  put(row: GitSyncRow): Promise<void>;
  markSynced(workspaceId: string, commit: string | null, files: string, at: string | null): Promise<void>;
  delete(workspaceId: string): Promise<void>;
}
