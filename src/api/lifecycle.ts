/** Lifecycle (docs/api.md sections 2–6): validate, publish, unpublish, webhook rotation, versions, restore, variables. */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { auditOf } from "./audit";
import { Data, IdParams, List, Uuid, wholeList } from "../schema/common";
import { FlowVersion } from "../schema/workflow";
import { Diagnostics, RestoreBody, ValidateQuery, Variable, VariablesBody, Version, VersionSummary, Workflow } from "../schema/workflow-record";

const tags = ["Lifecycle"];
const VersionParams = t.Object({ id: Uuid, versionId: Uuid });

export const lifecycleApi = ({ security, workflows, audit }: AppDeps) =>
  new Elysia({ name: "api-lifecycle" })
    .use(security)
    .post(
      "/api/workflows/validate",
      async ({ auth, body, query }) => {
        // Forgiving about the envelope: a create/update body ({name, definition}) validates its definition.
        const input =
          body && typeof body === "object" && !Array.isArray(body) && "definition" in body && !("trigger" in body)
            ? (body as { definition: unknown }).definition
            : body;
        return { data: await workflows.validate(auth.workspaceId, input, query.workflowId) };
      },
      {
        permission: "workflow:read",
        query: ValidateQuery,
        response: Data(Diagnostics),
        detail: {
          tags,
          summary: "Validate a definition with the publish gate; writes nothing",
          description:
            "The body is a definition (FlowVersion). The same function decides publish, so a definition that validates also publishes. Each diagnostic names the fault (path, code, message) and, where there is one, the admissible set (`allowed`): action and trigger ids of a piece, operator names, enum values, required properties in force, step names an expression may read, the served version of a piece, the workspace's connections of a piece. Structural faults (unknown keys, wrong types) come back as diagnostics too. ?workflowId= validates in the context of that workflow (its stored variables; settings.errorWorkflowId may not name it).",
          requestBody: { required: true, content: { "application/json": { schema: JSON.parse(JSON.stringify(FlowVersion)) } } },
        },
      },
    )
    .post(
      "/api/workflows/:id/publish",
      async (ctx) => {
        const data = await workflows.publish(ctx.auth, ctx.params.id);
        await auditOf(audit, ctx, "workflow.published", { type: "workflow", id: data.id, name: data.name }, { version: data.latestVersionNumber });
        return { data };
      },
      {
        permission: "workflow:publish",
        params: IdParams,
        response: Data(Workflow),
        detail: {
          tags,
          summary: "Take a workflow live: the draft passes the gate and becomes an immutable version",
          description:
            "Runs the publish gate (422 NOT_PUBLISHABLE with the diagnostics in error.details), stores the draft as a new version (unless it equals the live version: republishing an unchanged draft creates none), points latestVersionId at it and sets status active. Triggers fire from then on.",
        },
      },
    )
    .post(
      "/api/workflows/:id/unpublish",
      async (ctx) => {
        const data = await workflows.unpublish(ctx.auth, ctx.params.id);
        await auditOf(audit, ctx, "workflow.unpublished", { type: "workflow", id: data.id, name: data.name });
        return { data };
      },
      {
        permission: "workflow:publish",
        idempotent: false,
        params: IdParams,
        response: Data(Workflow),
        detail: {
          tags,
          summary: "Pause a live workflow (no body; no Idempotency-Key)",
          description:
            "active → paused: the scheduler skips it, its public webhook URL answers 404, self-registered external webhooks are de-registered best-effort (provider errors are logged, not returned) and the polling baseline is reset. The webhook token, latestVersionId, version history and draft are kept; runs in flight are not cancelled. On a paused workflow (or a draft never published) it is a 200 no-op.",
        },
      },
    )
    .post("/api/workflows/:id/webhook/rotate", async ({ auth, params }) => ({ data: await workflows.rotateWebhook(auth, params.id) }), {
      permission: "workflow:publish",
      params: IdParams,
      response: Data(Workflow),
      detail: { tags, summary: "Replace the webhook token: the old URL stops working at once (the only operation that revokes it)" },
    })
    .get("/api/workflows/:id/versions", ({ auth, params }) => workflows.versions(auth.workspaceId, params.id), {
      permission: "workflow:read",
      params: IdParams,
      response: List(VersionSummary),
      detail: { tags, summary: "List a workflow's published versions, newest first" },
    })
    .get(
      "/api/workflows/:id/versions/:versionId",
      async ({ auth, params }) => ({ data: await workflows.version(auth.workspaceId, params.id, params.versionId) }),
      {
        permission: "workflow:read",
        params: VersionParams,
        response: Data(Version),
        detail: { tags, summary: "Read one published version with its definition snapshot" },
      },
    )
    .post(
      "/api/workflows/:id/versions/:versionId/restore",
      async (ctx) => {
        const data = await workflows.restore(ctx.auth, ctx.params.id, ctx.params.versionId, ctx.body?.expectedRev);
        await auditOf(audit, ctx, "workflow.restored", { type: "workflow", id: data.id, name: data.name }, { versionId: ctx.params.versionId });
        return { data };
      },
      {
        permission: "workflow:write",
        params: VersionParams,
        body: t.Optional(RestoreBody),
        response: Data(Workflow),
        detail: {
          tags,
          summary: "Copy a version's snapshot over the draft (production untouched)",
          description:
            "Passes the editor-save gate: structure, and for a live workflow every piece runnable by the pieces served (422 PIECE_UNAVAILABLE naming the piece and the served version); blank pins are filled. expectedRev (optional; 0 or less means unconditional) must equal the current definitionRev, else 409 and nothing is written. triggerType follows the restored definition; a webhook workflow without a token gets one; pinned data is re-judged for staleness against the restored draft. Test payloads and pinned data are never deleted. Restoring the live version gives hasUnpublishedChanges false.",
        },
      },
    )
    .get("/api/workflows/:id/variables", async ({ auth, params }) => wholeList(await workflows.editor.variables(auth.workspaceId, params.id)), {
      permission: "workflow:read",
      params: IdParams,
      response: List(Variable),
      detail: { tags, summary: "List the workflow's variables ({{variables.name}}); secret values are masked as null" },
    })
    .put("/api/workflows/:id/variables", async ({ auth, params, body }) => wholeList(await workflows.editor.setVariables(auth, params.id, body.variables)), {
      permission: "workflow:write",
      params: IdParams,
      body: VariablesBody,
      response: List(Variable),
      detail: {
        tags,
        summary: "Replace the workflow's variables; secret values are encrypted at rest",
        description:
          "Stored variables apply to test and production runs at once (they are not versioned) and override definition.variables of the same name. A secret sent without a value (or null) keeps its stored value, so the list read with GET can be sent back.",
      },
    });
