/**
 * Templates: the built-in catalog (./catalog, read-only, the same in every workspace) and workspace
 * templates made from a workflow. Using a template creates a new draft workflow.
 */
import { AppError, notFound } from "../../http/errors";
import type { FlowVersionT } from "../../schema/workflow";
import type { WorkflowT } from "../../schema/workflow-record";
import { nowIso } from "../../store/db";
import type { TemplateRow } from "../../store/templates";
import { newId } from "../../lib/ids";
import { walk, withoutConnections } from "../workflows/tree";
import type { Actor, Workflows } from "../workflows/workflows";
import { BUILTIN_TEMPLATES, type BuiltinTemplate } from "./catalog";

export interface TemplateView {
  id: string;
  slug: string | null;
  name: string;
  description: string;
  category: string;
  source: "builtin" | "workspace";
  triggerType: string;
  pieces: string[];
  stepCount: number;
  definition: FlowVersionT;
  sourceWorkflowId: string | null;
  createdAt: string | null;
}

const SOURCES = ["builtin", "workspace"] as const;

export class Templates {
  constructor(private readonly workflows: Workflows) {}

  private get store() {
    return this.workflows.storage.templates;
  }

  async list(workspaceId: string, query: { q?: string; category?: string; source?: string; limit: number; offset: number }) {
    const q = query.q?.trim().toLowerCase();
    const source = (SOURCES as readonly string[]).includes(query.source ?? "") ? query.source : undefined;
    const all = [...BUILTIN_TEMPLATES.map(builtinView), ...(await this.store.list(workspaceId)).map((r) => workspaceView(r))]
      .filter((t) => !source || t.source === source)
      .filter((t) => !query.category || t.category === query.category)
      .filter((t) => !q || t.name.toLowerCase().includes(q) || t.description.toLowerCase().includes(q) || t.pieces.some((p) => p.includes(q)));
    return { data: all.slice(query.offset, query.offset + query.limit).map(({ definition: _d, ...summary }) => summary), total: all.length };
  }

  async get(workspaceId: string, id: string): Promise<TemplateView> {
    const builtin = BUILTIN_TEMPLATES.find((t) => t.id === id || t.slug === id);
    if (builtin) return builtinView(builtin);
    const row = await this.store.get(workspaceId, id);
    if (!row) throw notFound(`template ${id} (GET /api/templates lists them)`);
    return workspaceView(row);
  }

  /** A workspace template from a workflow's draft (connection ids removed; variables stay with the workflow). */
  async createFromWorkflow(actor: Actor, input: { workflowId: string; name?: string; description?: string; category?: string }): Promise<TemplateView> {
    const row = await this.workflows.row(actor.workspaceId, input.workflowId);
    const template: TemplateRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      name: input.name ?? row.name,
      description: input.description ?? row.description,
      category: input.category ?? "custom",
      definition: JSON.stringify(withoutConnections(this.workflows.draft(row))),
      source_workflow_id: row.id,
      created_by: actor.userId ?? actor.credentialId,
      created_at: nowIso(),
    };
    await this.store.insert(template);
    return workspaceView(template);
  }

  async delete(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    if (BUILTIN_TEMPLATES.some((t) => t.id === id))
      throw new AppError("UNPROCESSABLE", `template ${id} is built in and cannot be deleted; only workspace templates can`);
    if (!(await this.store.delete(actor.workspaceId, id))) throw notFound(`template ${id}`);
    return { id, deleted: true };
  }

  /** A new draft workflow from the template. */
  async use(actor: Actor, id: string, input: { name?: string; folderId?: string | null }): Promise<WorkflowT> {
    const template = await this.get(actor.workspaceId, id);
    return this.workflows.create(actor, {
      name: input.name ?? template.name,
      description: template.description,
      definition: template.definition,
      folderId: input.folderId ?? undefined,
    });
  }
}

function describe(definition: FlowVersionT) {
  const pieces = new Set<string>();
  let steps = 0;
  for (const { node, isTrigger } of walk(definition)) {
    if (!isTrigger) steps++;
    if (node.pieceId) pieces.add(node.pieceId);
  }
  return { triggerType: definition.trigger.type, pieces: [...pieces].sort(), stepCount: steps };
}

function builtinView(t: BuiltinTemplate): TemplateView {
  return {
    id: t.id,
    slug: t.slug,
    name: t.name,
    description: t.description,
    category: t.category,
    source: "builtin",
    ...describe(t.definition),
    definition: structuredClone(t.definition),
    sourceWorkflowId: null,
    createdAt: null,
  };
}

function workspaceView(r: TemplateRow): TemplateView {
  const definition = JSON.parse(r.definition) as FlowVersionT;
  return {
    id: r.id,
    slug: null,
    name: r.name,
    description: r.description,
    category: r.category,
    source: "workspace",
    ...describe(definition),
    definition,
    sourceWorkflowId: r.source_workflow_id,
    createdAt: r.created_at,
  };
}
