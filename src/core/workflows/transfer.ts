/** Export and import of a workflow as one JSON document; connection ids and secret values never leave. */
import type { FlowVersionT } from "../../schema/workflow";
import type { WorkflowExportT, WorkflowImportPreviewT, WorkflowT } from "../../schema/workflow-record";
import { AppError } from "../../http/errors";
import { nowIso } from "../../store/db";
import { importActivepieces } from "./import/activepieces";
import { importN8n, type N8nWorkflow } from "./import/n8n";
import type { ImportResult } from "./import/report";
import { withoutConnections } from "./tree";
import { publicDiagnostics } from "./validate";
import type { Actor, Workflows } from "./workflows";

export interface ImportInput {
  name?: string;
  description?: string;
  tags?: string[];
  definition: FlowVersionT;
  variables?: Array<{ name: string; value: unknown; secret: boolean; description?: string }>;
  folderId?: string | null;
}

export interface ForeignImportInput {
  format: "activepieces" | "n8n";
  source: Record<string, unknown>;
  name?: string;
  folderId?: string | null;
  dryRun?: boolean;
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

  /**
   * What importing an export document would do, with nothing written (docs/import.md, "Preview"): the checks the
   * import makes (structure, limits, folder), and what the publish gate would say of the draft it would create.
   */
  async preview(actor: Actor, input: ImportInput): Promise<WorkflowImportPreviewT> {
    const { row, definition } = await this.workflows.prepareCreate(actor, {
      name: input.name ?? "Imported workflow",
      folderId: input.folderId ?? undefined,
      definition: withoutConnections(input.definition),
    });
    const gate = await this.workflows.gate(actor.workspaceId, definition, undefined, { storedVariables: input.variables?.map((v) => v.name) ?? [] });
    return {
      dryRun: true,
      plan: [{ action: "create", kind: "workflow", name: row.name }],
      variables: input.variables?.map((v) => v.name) ?? [],
      diagnostics: publicDiagnostics(gate),
    };
  }

  /**
   * A workflow of another tool (docs/import.md) converted, with the report of what was carried over; stored as a
   * new draft unless dryRun. Pieces Activepieces steps name are looked up among the pieces this server serves.
   */
  async importForeign(
    actor: Actor,
    input: ForeignImportInput,
  ): Promise<{ dryRun: boolean; report: ImportResult["report"]; definition: FlowVersionT; workflow?: WorkflowT }> {
    const converted = this.convert(input);
    if (input.dryRun) return { dryRun: true, report: converted.report, definition: converted.definition };
    const workflow = await this.import(actor, { name: input.name ?? converted.name, definition: converted.definition, folderId: input.folderId });
    return { dryRun: false, report: converted.report, definition: workflow.definition as FlowVersionT, workflow };
  }

  convert(input: Pick<ForeignImportInput, "format" | "source">): ImportResult {
    if (input.format === "n8n") {
      if (!Array.isArray((input.source as { nodes?: unknown }).nodes))
        throw new AppError("VALIDATION_FAILED", "source: an n8n workflow has a nodes list", { field: "source.nodes" }, 400);
      return importN8n(input.source as unknown as N8nWorkflow);
    }
    const pieces = this.workflows.pieces;
    return importActivepieces(input.source, {
      actions: (pieceId) => {
        const piece = pieces.get(pieceId);
        return piece ? Object.keys(piece.actions) : undefined;
      },
    });
  }
}
