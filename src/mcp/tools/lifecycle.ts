/**
 * Lifecycle tools: validate (the publish gate, writing nothing), publish, unpublish, versions and
 * restore — the core calls of src/api/lifecycle.ts with the same scopes.
 */
import { t } from "elysia";
import { Uuid } from "../../schema/common";
import { RestoreBody, ValidateQuery } from "../../schema/workflow-record";
import { audited, defineTool, workflowTarget } from "../tool";

const strict = { additionalProperties: false } as const;
const IdArgs = t.Object({ id: Uuid }, strict);
const VersionArgs = t.Object({ id: Uuid, versionId: Uuid }, strict);

export const lifecycleTools = [
  defineTool<{ definition: unknown; workflowId?: string }>({
    name: "validate_workflow",
    description:
      "Run the publish gate on a definition and return diagnostics {valid, errors, warnings}; each names the path, the fault and the allowed values. " +
      "Writes nothing. A definition that validates also publishes.",
    scope: "workflow:read",
    readOnly: true,
    input: t.Object(
      {
        definition: t.Unknown({ description: "a FlowVersion, as in create_workflow.definition; structural faults come back as diagnostics" }),
        workflowId: ValidateQuery.properties.workflowId,
      },
      strict,
    ),
    run: async ({ deps, auth }, args) => ({ data: await deps.workflows.validate(auth.workspaceId, args.definition, args.workflowId) }),
  }),
  defineTool<{ id: string }>({
    name: "publish_workflow",
    description:
      "Take a workflow live: its draft passes the gate (else NOT_PUBLISHABLE with the diagnostics) and becomes an immutable version that production runs execute.",
    scope: "workflow:publish",
    input: IdArgs,
    run: async (ctx, args) => {
      const data = await ctx.deps.workflows.publish(ctx.auth, args.id);
      return audited(ctx, "workflow.published", workflowTarget, data, { version: data.latestVersionNumber });
    },
  }),
  defineTool<{ id: string }>({
    name: "unpublish_workflow",
    description: "Pause a live workflow (its triggers stop firing; versions, draft and webhook token are kept). A no-op on a paused workflow.",
    scope: "workflow:publish",
    input: IdArgs,
    run: async (ctx, args) => audited(ctx, "workflow.unpublished", workflowTarget, await ctx.deps.workflows.unpublish(ctx.auth, args.id)),
  }),
  defineTool<{ id: string }>({
    name: "list_versions",
    description: "List a workflow's published versions, newest first; `live` marks the one production runs.",
    scope: "workflow:read",
    readOnly: true,
    input: IdArgs,
    run: ({ deps, auth }, args) => deps.workflows.versions(auth.workspaceId, args.id),
  }),
  defineTool<{ id: string; versionId: string }>({
    name: "get_version",
    description: "Read one published version with its definition snapshot.",
    scope: "workflow:read",
    readOnly: true,
    input: VersionArgs,
    run: async ({ deps, auth }, args) => ({ data: await deps.workflows.version(auth.workspaceId, args.id, args.versionId) }),
  }),
  defineTool<{ id: string; versionId: string; expectedRev?: number }>({
    name: "restore_version",
    description:
      "Copy a version's snapshot over the draft (production is untouched until you publish). expectedRev, when > 0, must equal the current definitionRev.",
    scope: "workflow:write",
    input: t.Composite([VersionArgs, RestoreBody], strict),
    run: async (ctx, args) =>
      audited(ctx, "workflow.restored", workflowTarget, await ctx.deps.workflows.restore(ctx.auth, args.id, args.versionId, args.expectedRev), {
        versionId: args.versionId,
      }),
  }),
];
