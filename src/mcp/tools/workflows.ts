/**
 * Workflow tools: list, read, create and update — the core calls of src/api/workflows.ts with the
 * same bodies and scopes. Server-owned fields, which the routes accept only to ignore, are left out
 * of the tool schemas so an agent is not invited to send them.
 */
import { t } from "elysia";
import { Uuid } from "../../schema/common";
import {
  ForeignImportBody,
  WorkflowCreateBody,
  WorkflowFilesImportBody,
  WorkflowListQuery,
  WorkflowUpdateBody,
  type ForeignImportBodyT,
  type WorkflowCreateBodyT,
  type WorkflowUpdateBodyT,
} from "../../schema/workflow-record";
import { pageOfArgs, PageArgs, type PageArgsT } from "../page-args";
import { audited, defineTool, recordTool, workflowTarget } from "../tool";

const strict = { additionalProperties: false } as const;

const SERVER_OWNED = [
  "id",
  "status",
  "webhookToken",
  "webhookUrl",
  "latestVersionId",
  "latestVersionNumber",
  "definitionRev",
  "hasUnpublishedChanges",
  "cronExpression",
  "workspaceId",
  "orgId",
  "createdBy",
  "createdAt",
  "updatedAt",
  "lastRun",
] as const;

const CreateArgs = t.Omit(WorkflowCreateBody, [...SERVER_OWNED], {
  ...strict,
  description: "definition is a FlowVersion (schemaVersion 2, trigger, nextAction chain); omit it for an empty draft with a manual trigger",
});
const UpdateArgs = t.Composite([t.Object({ id: Uuid }), t.Omit(WorkflowUpdateBody, [...SERVER_OWNED])], {
  ...strict,
  description: "fields left out keep their values; send expectedRev (the definitionRev you read) to refuse a stale overwrite",
});

const { folderId, status, tag, q } = WorkflowListQuery.properties;

export const workflowTools = [
  defineTool<PageArgsT & { folderId?: string; status?: string; tag?: string; q?: string }>({
    name: "list_workflows",
    description: "List the workspace's workflows (without definitions), newest first; filter by status (draft, active, paused), folderId, tag or q.",
    scope: "workflow:read",
    readOnly: true,
    input: t.Object({ ...PageArgs, folderId, status, tag, q }, strict),
    run: ({ deps, auth }, args) =>
      deps.workflows.list(auth.workspaceId, { ...pageOfArgs(args), folderId: args.folderId, status: args.status, tag: args.tag, q: args.q }),
  }),
  recordTool(
    {
      name: "get_workflow",
      description: "Read a workflow with its draft definition, definitionRev, status, latestVersionId and last run.",
      scope: "workflow:read",
      readOnly: true,
    },
    (deps, workspaceId, id) => deps.workflows.get(workspaceId, id),
  ),
  defineTool<WorkflowCreateBodyT>({
    name: "create_workflow",
    description:
      "Create a draft workflow. Build config from get_action_schema / get_trigger_schema; refer to earlier output with {{trigger.body.x}} or {{stepName.output.y}}. " +
      "Then call validate_workflow and publish_workflow.",
    scope: "workflow:write",
    input: CreateArgs,
    run: async (ctx, args) => audited(ctx, "workflow.created", workflowTarget, await ctx.deps.workflows.create(ctx.auth, args)),
  }),
  defineTool<WorkflowUpdateBodyT & { id: string }>({
    name: "update_workflow",
    description:
      "Replace a workflow's draft and fields. A stale expectedRev is refused with REVISION_CONFLICT naming the current definitionRev; nothing is written then.",
    scope: "workflow:write",
    input: UpdateArgs,
    run: async ({ deps, auth }, { id, ...body }) => ({ data: await deps.workflows.update(auth, id, body) }),
  }),
  defineTool<{ id: string }>({
    name: "delete_workflow",
    description:
      "Delete a workflow with its versions (DELETE /api/workflows/{id}). Its runs stay readable in the run history. Irreversible: confirm with the user first.",
    scope: "workflow:write",
    input: t.Object({ id: Uuid }, strict),
    run: async (ctx, args) => {
      const { name } = await ctx.deps.workflows.get(ctx.auth.workspaceId, args.id);
      return audited(ctx, "workflow.deleted", (w) => workflowTarget({ id: w.id, name }), await ctx.deps.workflows.delete(ctx.auth, args.id));
    },
  }),
  defineTool<Record<string, never>>({
    name: "export_workflows",
    description:
      "Export every workflow of the workspace as YAML files (GET /api/workflows/files; docs/workflows-as-code.md): path → text. Connections by name and piece, secret variables by name; no credential or secret value.",
    scope: "workflow:read",
    readOnly: true,
    input: t.Object({}, strict),
    run: async ({ deps, auth }) => ({ data: { weftFormat: 1, files: await deps.workflowFiles.export(auth.workspaceId) } }),
  }),
  defineTool<{ files: Record<string, string>; dryRun?: boolean; prune?: boolean }>({
    name: "import_workflows",
    description:
      "Import YAML workflow files (POST /api/workflows/files): every file is checked first and every problem listed with its file and path; all or nothing. " +
      "Call with dryRun: true first and show the plan (create, update, unchanged, delete) to the user; prune deletes workflows the files lack: confirm it with the user.",
    scope: "workflow:write",
    input: WorkflowFilesImportBody,
    run: async ({ deps, auth }, { files, dryRun, prune }) => ({
      data: await deps.workflowFiles.import(auth, files, { dryRun, prune, mayCreateConnections: auth.scopes.has("connection:write") }),
    }),
  }),
  defineTool<ForeignImportBodyT>({
    name: "import_foreign_workflow",
    description:
      "Import a workflow of n8n (format n8n: its workflow JSON) or Activepieces (format activepieces: a flow export or template file) as a new draft " +
      "(POST /api/workflows/import/foreign; docs/import.md). The report lists every node: mapped, approximated (the note says how) or not_mapped (why; a placeholder step stands in), " +
      "and Activepieces packages to install first. Call with dryRun: true first and show the report to the user; without it the draft is created.",
    scope: "workflow:write",
    input: ForeignImportBody,
    run: async (ctx, args) => {
      const data = await ctx.deps.workflowTransfer.importForeign(ctx.auth, args);
      if (!data.workflow) return { data };
      return audited(ctx, "workflow.created", (d) => workflowTarget(d.workflow!), data, { imported: args.format });
    },
  }),
];
