/**
 * Workflows (docs/api.md "1. Create a workflow", "Everything else"): create, list, read, replace, delete,
 * export and import.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { audited, auditOf, workflowTarget } from "./audit";
import { Deleted, routeOptions } from "./route-options";
import { Data, pageOf } from "../schema/common";
import {
  ForeignImportBody,
  ForeignImportResult,
  ImportBody,
  Workflow,
  WorkflowCreateBody,
  WorkflowExport,
  WorkflowFilesExport,
  WorkflowFilesImportBody,
  WorkflowFilesImportResult,
  WorkflowImportPreview,
  WorkflowListQuery,
  WorkflowUpdateBody,
  type WorkflowCreateBodyT,
  type ForeignImportBodyT,
  type WorkflowUpdateBodyT,
} from "../schema/workflow-record";

const route = routeOptions(["Workflows"]);

export const workflowsApi = ({ security, workflows, workflowTransfer, workflowFiles, audit }: AppDeps) =>
  new Elysia({ name: "api-workflows" })
    .use(security)
    .post(
      "/api/workflows",
      async (ctx) => {
        const data = await workflows.create(ctx.auth, ctx.body as WorkflowCreateBodyT);
        ctx.set.status = 201;
        return audited(audit, ctx, data, "workflow.created", workflowTarget(data));
      },
      {
        permission: "workflow:write",
        ...route.creates(Workflow, {
          summary: "Create a workflow (always a draft)",
          description:
            "Without a definition the workflow gets a valid empty tree with an unconfigured manual trigger. A supplied definition is checked for structure first (unknown keys anywhere in the tree answer 400 UNKNOWN_FIELD naming the key's path and the allowed keys); any webhookToken inside it is stripped; every step without a pieceVersion is pinned to the version served (in a cluster, by every instance that executes runs); the existence of pieces is not checked (the publish gate does that). Server-owned fields (status, id, webhookToken, definitionRev, ...) are accepted and ignored. Accepts Idempotency-Key.",
        }),
        idempotent: true,
        body: WorkflowCreateBody,
      },
    )
    .get(
      "/api/workflows",
      ({ auth, query }) => workflows.list(auth.workspaceId, { ...pageOf(query), folderId: query.folderId, status: query.status, tag: query.tag, q: query.q }),
      {
        permission: "workflow:read",
        ...route.list(Workflow, "List workflows (filters folderId, status, tag, q; page/limit); items omit definition, testPayloads and pinnedData"),
        query: WorkflowListQuery,
      },
    )
    .get("/api/workflows/files", async ({ auth }) => ({ data: { weftFormat: 1 as const, files: await workflowFiles.export(auth.workspaceId) } }), {
      permission: "workflow:read",
      ...route.answer(WorkflowFilesExport, {
        summary: "Export every workflow of the workspace as YAML files (docs/workflows-as-code.md)",
        description:
          "Answers path → YAML text: workflows/[<folder>/]<name>.yaml per workflow (its draft, test payloads and pinned data), connections.yaml (names and pieces only) and variables/all.yaml (secret variables by name only). No credential, secret value or connection id is in them. `weft export DIR` writes the same files.",
      }),
    })
    .post(
      "/api/workflows/files",
      async ({ auth, body }) => {
        const { files, dryRun, prune } = body as { files: Record<string, string>; dryRun?: boolean; prune?: boolean };
        return { data: await workflowFiles.import(auth, files, { dryRun, prune, mayCreateConnections: auth.scopes.has("connection:write") }) };
      },
      {
        permission: "workflow:write",
        ...route.answer(WorkflowFilesImportResult, {
          summary: "Import YAML workflow files: all or nothing (docs/workflows-as-code.md)",
          description:
            "Every file is checked first, by the format and by the publish gate; any problem answers 400 VALIDATION_FAILED with every problem (file, path, message) in error.details.problems, and nothing is written. dryRun answers the plan (create, update, unchanged, delete) and changes nothing. Otherwise the whole plan is applied in one transaction. Workflows keep their ids; an import writes drafts and never publishes (a live workflow keeps running its published version). prune also deletes the workspace's workflows the files do not hold. A connection connections.yaml names that the workspace lacks is created without credentials (needs connection:write too).",
        }),
        body: WorkflowFilesImportBody,
      },
    )
    .get("/api/workflows/:id", async ({ auth, params }) => ({ data: await workflows.get(auth.workspaceId, params.id) }), {
      permission: "workflow:read",
      ...route.byId(Workflow, "Read a workflow with its draft definition, test payloads, pinned data and last run"),
    })
    .put("/api/workflows/:id", async ({ auth, params, body }) => ({ data: await workflows.update(auth, params.id, body as WorkflowUpdateBodyT) }), {
      permission: "workflow:write",
      ...route.byId(Workflow, {
        summary: "Replace a workflow's draft and fields (fields left out keep their values)",
        description:
          "Send expectedRev (the definitionRev you read): when someone saved in between, the answer is 409 REVISION_CONFLICT naming the current definitionRev, and nothing is written. Every save bumps definitionRev. Saving the draft of a live workflow never changes what runs in production (publish does), except with settings.autoPublishFixes; a live workflow's draft must keep every piece runnable by the pieces served (422 PIECE_UNAVAILABLE).",
      }),
      body: WorkflowUpdateBody,
    })
    .delete(
      "/api/workflows/:id",
      async (ctx) => {
        const { name } = await workflows.get(ctx.auth.workspaceId, ctx.params.id);
        const data = await workflows.delete(ctx.auth, ctx.params.id);
        return audited(audit, ctx, data, "workflow.deleted", workflowTarget({ id: data.id, name }));
      },
      {
        permission: "workflow:write",
        ...route.byId(Deleted, "Delete a workflow with its versions, pinned data and variables (a live one is unpublished first)"),
      },
    )
    .get("/api/workflows/:id/export", async ({ auth, params }) => ({ data: await workflowTransfer.export(auth.workspaceId, params.id) }), {
      permission: "workflow:read",
      ...route.byId(WorkflowExport, "Export a workflow as JSON (connection ids and secret variable values removed)"),
    })
    .post(
      "/api/workflows/import",
      async (ctx) => {
        const { dryRun, ...input } = ctx.body as any;
        if (dryRun) return { data: await workflowTransfer.preview(ctx.auth, input) };
        const data = await workflowTransfer.import(ctx.auth, input);
        ctx.set.status = 201;
        return audited(audit, ctx, data, "workflow.created", workflowTarget(data), { imported: true });
      },
      {
        permission: "workflow:write",
        idempotent: true,
        body: ImportBody,
        response: { 200: Data(WorkflowImportPreview), 201: Data(Workflow) },
        detail: route.detail({
          summary: "Import an exported workflow as a new draft (name and folderId may be overridden)",
          description:
            "The draft is created whatever the publish gate says of it (201). dryRun makes the same checks (structure, limits, folder) and answers what the import would do, with the publish gate's diagnostics of the draft, storing nothing (200; docs/import.md). Accepts Idempotency-Key.",
        }),
      },
    )
    .post(
      "/api/workflows/import/foreign",
      async (ctx) => {
        const body = ctx.body as ForeignImportBodyT;
        const data = await workflowTransfer.importForeign(ctx.auth, body);
        if (data.workflow) await auditOf(audit, ctx, "workflow.created", workflowTarget(data.workflow), { imported: body.format });
        ctx.set.status = data.dryRun ? 200 : 201;
        return { data };
      },
      {
        permission: "workflow:write",
        idempotent: true,
        body: ForeignImportBody,
        response: { 200: Data(ForeignImportResult), 201: Data(ForeignImportResult) },
        detail: route.detail({
          summary: "Import a workflow of Activepieces or n8n as a new draft, with a report of what was carried over (docs/import.md)",
          description:
            "format activepieces takes a flow export or template file, n8n a workflow JSON. The answer holds the report: each foreign node or step mapped, approximated (and how) or not mapped (why), and Activepieces packages this server lacks with the `weft pieces add` command that installs each. What has no Weft counterpart becomes a placeholder step (piece import-placeholder) that the publish gate refuses until it is replaced; nothing is dropped silently. dryRun answers the report and the converted definition and stores nothing (200); otherwise the draft is created (201). Accepts Idempotency-Key.",
        }),
      },
    );
