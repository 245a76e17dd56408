/** Export and import of a workflow as one JSON document; connection ids and secret values never leave. */
import type { FlowVersionT } from "../../schema/workflow";
import type { WorkflowExportT, WorkflowT } from "../../schema/workflow-record";
import { nowIso, atomically } from "../../store/db";
import { withoutConnections } from "./tree";
import type { Actor, Workflows } from "./workflows";

export interface ImportInput {
  name?: string;
  description?: string;
  tags?: string[];
  definition: FlowVersionT;
  variables?: Array<{ name: string; value: unknown; secret: boolean; description?: string }>;
  folderId?: string | null;
}

export class Transfer {
  constructor(private readonly workflows: Workflows) {}

  export(workspaceId: string, id: string): WorkflowExportT {
    const row = this.workflows.row(workspaceId, id);
    return {
      weftExport: 1,
      name: row.name,
      description: row.description,
      tags: JSON.parse(row.tags),
      definition: withoutConnections(this.workflows.draft(row)),
      variables: this.workflows.editor.exportVariables(row.id),
      exportedAt: nowIso(),
    };
  }

  /** A new draft from an export document (the gate runs at publish, as for any draft). */
  import(actor: Actor, input: ImportInput): WorkflowT {
    const id = atomically(this.workflows.db, () => {
      const created = this.workflows.create(actor, {
        name: input.name ?? "Imported workflow",
        description: input.description,
        tags: input.tags,
        folderId: input.folderId ?? undefined,
        definition: withoutConnections(input.definition),
      });
      if (input.variables?.length) this.workflows.editor.importVariables(created.id, input.variables);
      return created.id;
    });
    return this.workflows.get(actor.workspaceId, id);
  }
}
