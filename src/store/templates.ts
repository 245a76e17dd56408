/**
 * Workspace templates (the built-in catalog ships in the binary: src/core/templates/catalog): the rows and what
 * the storage port (./port.ts) answers about them. Implemented by ./sqlite/templates.ts and ./postgres/templates.ts.
 */

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

export interface TemplateRepository {
  /** Newest first. */
  list(workspaceId: string): Promise<TemplateRow[]>;
  get(workspaceId: string, id: string): Promise<TemplateRow | null>;
  insert(row: TemplateRow): Promise<void>;
  /** False when the workspace has no such template. */
  delete(workspaceId: string, id: string): Promise<boolean>;
}
