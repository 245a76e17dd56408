/** Folders on PostgreSQL (../folders.ts says what each answers). */
import type { FolderRepository, FolderRow, FolderWithCount } from "../folders";
import type { PostgresConnection } from "./connection";

const WITH_COUNT = "SELECT f.*, (SELECT count(*) FROM workflows w WHERE w.folder_id = f.id) AS workflow_count FROM folders f";

export class PostgresFolders implements FolderRepository {
  constructor(private readonly c: PostgresConnection) {}

  list(workspaceId: string) {
    // The name column compares exactly ("C"); folders sort and match ignoring case, as the unique index on lower(name) does.
    return this.c.all<FolderWithCount>(`${WITH_COUNT} WHERE f.workspace_id = $1 ORDER BY lower(f.name)`, [workspaceId]);
  }
  get(workspaceId: string, id: string) {
    return this.c.get<FolderWithCount>(`${WITH_COUNT} WHERE f.id = $1 AND f.workspace_id = $2`, [id, workspaceId]);
  }
  byName(workspaceId: string, name: string) {
    return this.c.get<FolderRow>("SELECT * FROM folders WHERE workspace_id = $1 AND lower(name) = lower($2)", [workspaceId, name]);
  }
  async insert(row: FolderRow) {
    await this.c.insert("folders", ["id", "workspace_id", "name", "created_at", "updated_at"], row);
  }
  async rename(workspaceId: string, id: string, name: string, at: string) {
    await this.c.run("UPDATE folders SET name = $1, updated_at = $2 WHERE id = $3 AND workspace_id = $4", [name, at, id, workspaceId]);
  }
  async delete(workspaceId: string, id: string) {
    return (await this.c.run("DELETE FROM folders WHERE id = $1 AND workspace_id = $2", [id, workspaceId])) > 0;
  }
}
