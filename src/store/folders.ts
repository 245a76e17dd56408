/**
 * Folders that organise a workspace's workflows (flat: a workflow is in one folder or none): the rows and what
 * the storage port (./port.ts) answers about them. Implemented by ./sqlite/folders.ts and ./postgres/folders.ts.
 */

export interface FolderRow {
  id: string;
  workspace_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}
export type FolderWithCount = FolderRow & { workflow_count: number };

export interface FolderRepository {
  /** By name, ignoring case. */
  list(workspaceId: string): Promise<FolderWithCount[]>;
  get(workspaceId: string, id: string): Promise<FolderWithCount | null>;
  /** Case-insensitive, as folder names are unique. */
  byName(workspaceId: string, name: string): Promise<FolderRow | null>;
  insert(row: FolderRow): Promise<void>;
  rename(workspaceId: string, id: string, name: string, at: string): Promise<void>;
  /** False when the workspace has no such folder. */
  delete(workspaceId: string, id: string): Promise<boolean>;
}
