/** Export and import of a workflow as one JSON document; connection ids and secret values never leave. */
import type { FlowVersionT } from "../../schema/workflow";
import type { WorkflowExportT, WorkflowT } from "../../schema/workflow-record";
import { nowIso } from "../../store/db";
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

  async export(workspaceId: string, id: string): Promise<WorkflowExportT> {
    const row = await this.workflows.row(workspaceId, id);
    return {
      weftExport: 1,
      name: row.name,
      description: row.description,
      tags: JSON.parse(row.tags),
      definition: withoutConnections(this.workflows.draft(row)),
      variables: await this.workflows.editor.exportVariables(row.id),
      exportedAt: nowIso(),
    };
  }

  /** A new draft from an export document (the gate runs at publish, as for any draft). */
  async import(actor: Actor, input: ImportInput): Promise<WorkflowT> {
    const { row, definition, pins } = await this.workflows.prepareCreate(actor, {
      name: input.name ?? "Imported workflow",
      description: input.description,
      tags: input.tags,
      folderId: input.folderId ?? undefined,
      definition: withoutConnections(input.definition),
    });
    // One unit: the workflow is there with its variables, or not at all.
    await this.workflows.storage.atomically(async (unit) => {
      await unit.workflows.insert(row);
      await this.workflows.editor.storePins(row, definition, pins, unit);
      if (input.variables?.length) await this.workflows.editor.importVariables(row.id, input.variables, unit);
    });
    return this.workflows.get(actor.workspaceId, row.id);
  }
}
