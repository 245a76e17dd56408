/** Workspace templates (the built-in catalog ships in the binary: src/core/templates/catalog). */
import { bindRow, type Db } from "./db";

export interface TemplateRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  category: string;
  definition: string;
  source_workflow_id: string | null;
  created_by: string | null;
  created_at: string;
}

export class TemplateStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      list: db.query<TemplateRow, [string]>("SELECT * FROM templates WHERE workspace_id = ? ORDER BY created_at DESC"),
      get: db.query<TemplateRow, [string, string]>("SELECT * FROM templates WHERE id = ? AND workspace_id = ?"),
      insert: db.query(`INSERT INTO templates (id, workspace_id, name, description, category, definition, source_workflow_id, created_by, created_at)
        VALUES ($id, $workspace_id, $name, $description, $category, $definition, $source_workflow_id, $created_by, $created_at)`),
      delete: db.query("DELETE FROM templates WHERE id = ? AND workspace_id = ?"),
    };
  }

  list(workspaceId: string) {
    return this.q.list.all(workspaceId);
  }

  get(workspaceId: string, id: string) {
    return this.q.get.get(id, workspaceId);
  }

  insert(row: TemplateRow) {
    this.q.insert.run(bindRow(row));
  }

  delete(workspaceId: string, id: string): boolean {
    return this.q.delete.run(id, workspaceId).changes > 0;
  }
}
