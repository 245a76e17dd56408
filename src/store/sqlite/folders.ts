/** Folders on SQLite (../folders.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { bindRow } from "./db";
import type { FolderRepository, FolderRow, FolderWithCount } from "../folders";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  list: db.query<FolderWithCount, [string]>(
    "SELECT f.*, (SELECT COUNT(*) FROM workflows w WHERE w.folder_id = f.id) AS workflow_count FROM folders f WHERE f.workspace_id = ? ORDER BY f.name COLLATE NOCASE",
  ),
  get: db.query<FolderWithCount, [string, string]>(
    "SELECT f.*, (SELECT COUNT(*) FROM workflows w WHERE w.folder_id = f.id) AS workflow_count FROM folders f WHERE f.id = ? AND f.workspace_id = ?",
  ),
  byName: db.query<FolderRow, [string, string]>("SELECT * FROM folders WHERE workspace_id = ? AND name = ? COLLATE NOCASE"),
  insert: db.query("INSERT INTO folders (id, workspace_id, name, created_at, updated_at) VALUES ($id, $workspace_id, $name, $created_at, $updated_at)"),
  rename: db.query<null, [string, string, string, string]>("UPDATE folders SET name = ?, updated_at = ? WHERE id = ? AND workspace_id = ?"),
  delete: db.query<null, [string, string]>("DELETE FROM folders WHERE id = ? AND workspace_id = ?"),
});

export class SqliteFolders extends Prepared(statements) implements FolderRepository {
  list(workspaceId: string) {
    return this.c.do(() => this.q.list.all(workspaceId));
  }
  get(workspaceId: string, id: string) {
    return this.c.do(() => this.q.get.get(id, workspaceId));
  }
  byName(workspaceId: string, name: string) {
    return this.c.do(() => this.q.byName.get(workspaceId, name));
  }
  insert(row: FolderRow) {
    return this.c.do(() => void this.q.insert.run(bindRow(row)));
  }
  rename(workspaceId: string, id: string, name: string, at: string) {
    return this.c.do(() => void this.q.rename.run(name, at, id, workspaceId));
  }
  delete(workspaceId: string, id: string) {
    return this.c.do(() => this.q.delete.run(id, workspaceId).changes > 0);
  }
}
