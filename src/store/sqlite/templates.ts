/** Workspace templates on SQLite (../templates.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { bindRow } from "./db";
import type { TemplateRepository, TemplateRow } from "../templates";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  list: db.query<TemplateRow, [string]>("SELECT * FROM templates WHERE workspace_id = ? ORDER BY created_at DESC"),
  get: db.query<TemplateRow, [string, string]>("SELECT * FROM templates WHERE id = ? AND workspace_id = ?"),
  insert: db.query(`INSERT INTO templates (id, workspace_id, name, description, category, definition, source_workflow_id, created_by, created_at)
    VALUES ($id, $workspace_id, $name, $description, $category, $definition, $source_workflow_id, $created_by, $created_at)`),
  delete: db.query<null, [string, string]>("DELETE FROM templates WHERE id = ? AND workspace_id = ?"),
});

export class SqliteTemplates extends Prepared(statements) implements TemplateRepository {
  list(workspaceId: string) {
    return this.c.do(() => this.q.list.all(workspaceId));
  }
  get(workspaceId: string, id: string) {
    return this.c.do(() => this.q.get.get(id, workspaceId));
  }
  insert(row: TemplateRow) {
    return this.c.do(() => void this.q.insert.run(bindRow(row)));
  }
  delete(workspaceId: string, id: string) {
    return this.c.do(() => this.q.delete.run(id, workspaceId).changes > 0);
  }
}
