/** Folders that organise a workspace's workflows (flat: a workflow is in one folder or none). */
import { bindRow, type Db } from "./db";

export interface FolderRow {
  id: string;
  workspace_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}
export type FolderWithCount = FolderRow & { workflow_count: number };

export class FolderStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      list: db.query<FolderWithCount, [string]>(
        "SELECT f.*, (SELECT COUNT(*) FROM workflows w WHERE w.folder_id = f.id) AS workflow_count FROM folders f WHERE f.workspace_id = ? ORDER BY f.name COLLATE NOCASE",
      ),
      get: db.query<FolderWithCount, [string, string]>(
        "SELECT f.*, (SELECT COUNT(*) FROM workflows w WHERE w.folder_id = f.id) AS workflow_count FROM folders f WHERE f.id = ? AND f.workspace_id = ?",
      ),
      byName: db.query<FolderRow, [string, string]>("SELECT * FROM folders WHERE workspace_id = ? AND name = ? COLLATE NOCASE"),
      insert: db.query("INSERT INTO folders (id, workspace_id, name, created_at, updated_at) VALUES ($id, $workspace_id, $name, $created_at, $updated_at)"),
      rename: db.query("UPDATE folders SET name = ?, updated_at = ? WHERE id = ? AND workspace_id = ?"),
      delete: db.query("DELETE FROM folders WHERE id = ? AND workspace_id = ?"),
    };
  }

  list(workspaceId: string) {
    return this.q.list.all(workspaceId);
  }

  get(workspaceId: string, id: string) {
    return this.q.get.get(id, workspaceId);
  }

  byName(workspaceId: string, name: string) {
    return this.q.byName.get(workspaceId, name);
  }

  insert(row: FolderRow) {
    this.q.insert.run(bindRow(row));
  }

  rename(workspaceId: string, id: string, name: string, at: string) {
    this.q.rename.run(name, at, id, workspaceId);
  }

  delete(workspaceId: string, id: string): boolean {
    return this.q.delete.run(id, workspaceId).changes > 0;
  }
}
