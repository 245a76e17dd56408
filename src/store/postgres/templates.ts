/** Workspace templates on PostgreSQL (../templates.ts says what each answers). */
import type { TemplateRepository, TemplateRow } from "../templates";
import type { PostgresConnection } from "./connection";

export class PostgresTemplates implements TemplateRepository {
  constructor(private readonly c: PostgresConnection) {}

  list(workspaceId: string) {
    return this.c.all<TemplateRow>("SELECT * FROM templates WHERE workspace_id = $1 ORDER BY created_at DESC", [workspaceId]);
  }
  get(workspaceId: string, id: string) {
    return this.c.get<TemplateRow>("SELECT * FROM templates WHERE id = $1 AND workspace_id = $2", [id, workspaceId]);
  }
  async insert(row: TemplateRow) {
    await this.c.insert(
      "templates",
      ["id", "workspace_id", "name", "description", "category", "definition", "source_workflow_id", "created_by", "created_at"],
      row,
    );
  }
  async delete(workspaceId: string, id: string) {
    return (await this.c.run("DELETE FROM templates WHERE id = $1 AND workspace_id = $2", [id, workspaceId])) > 0;
  }
}
