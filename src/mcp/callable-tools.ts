/**
 * Every live workflow whose trigger is `subflows.callable` is a tool of its own: its input schema is the
 * trigger's declared fields, its result the run's `return_response` value. The list is computed per call
 * from the workspace's live workflows, so it changes as soon as one is published or unpublished.
 */
import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { LRUCache } from "lru-cache";
import type { AppDeps } from "../api/deps";
import type { Principal } from "../core/identity";
import { AppError } from "../http/errors";
import { inputFields } from "../../pieces/subflows";
import type { FlowVersionT } from "../schema/workflow";
import { defineTool, type McpTool } from "./tool";

/** How long a callable tool waits for its run: the run route's largest `wait`. */
export const CALLABLE_WAIT_SECONDS = 30;
/** Live callable workflows considered per workspace (a tool list of hundreds is already more than agents use). */
const MAX_CALLABLE_TOOLS = 500;
const RUN_SCOPE = "workflow:run" as const;

const FIELD_SCHEMAS: Record<string, (description?: string) => TSchema> = {
  string: (description) => t.String({ description }),
  number: (description) => t.Number({ description }),
  // TypeBox's own Integer: Elysia's t.Integer also admits numeric strings (for query text).
  integer: (description) => Type.Integer({ description }),
  boolean: (description) => t.Boolean({ description }),
  object: (description) => t.Record(t.String(), t.Unknown(), { description }),
  array: (description) => t.Array(t.Unknown(), { description }),
};

/** The tool input of a callable trigger: its declared fields; other triggers' callers may send any object. */
function inputSchemaOf(trigger: FlowVersionT["trigger"]): TObject {
  if (trigger.pieceId !== "subflows") return t.Object({}, { additionalProperties: true });
  let fields: ReturnType<typeof inputFields>;
  try {
    fields = inputFields(trigger.config ?? {});
  } catch {
    return t.Object({}, { additionalProperties: true });
  }
  const properties: Record<string, TSchema> = {};
  for (const field of fields) {
    const schema = FIELD_SCHEMAS[field.type](field.description);
    properties[field.name] = field.required ? schema : t.Optional(schema);
  }
  return t.Object(properties, { additionalProperties: false });
}

// Published versions never change, so a version's tool schema is computed once.
const schemaByVersion = new LRUCache<string, { input: TObject; callable: boolean }>({ max: 5_000 });

/** A tool name agents can type: the workflow's name in snake_case; the id suffix keeps names unique. */
function toolNameOf(name: string, id: string, taken: Set<string>): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 50);
  let candidate = slug && /^[a-z]/.test(slug) ? slug : `workflow_${slug || id.slice(0, 8)}`;
  if (taken.has(candidate)) candidate = `${candidate.slice(0, 50)}_${id.slice(0, 8)}`;
  return candidate;
}

/** One tool per live callable workflow of the principal's workspace (none without workflow:run). */
export async function callableTools(deps: AppDeps, auth: Principal, taken: Set<string>): Promise<McpTool[]> {
  if (!auth.scopes.has(RUN_SCOPE)) return [];
  const { data } = await deps.workflows.list(auth.workspaceId, { status: "active", page: 1, limit: MAX_CALLABLE_TOOLS, offset: 0 });
  const tools: McpTool[] = [];
  // Oldest first, so a workflow keeps its tool name when a newer one with the same name goes live.
  const byAge = [...data].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  for (const workflow of byAge) {
    if (workflow.triggerType !== "callable" || !workflow.latestVersionId) continue;
    let entry = schemaByVersion.get(workflow.latestVersionId);
    if (!entry) {
      const { definition } = await deps.workflows.version(auth.workspaceId, workflow.id, workflow.latestVersionId);
      entry = { input: inputSchemaOf(definition.trigger), callable: definition.trigger.type === "callable" };
      schemaByVersion.set(workflow.latestVersionId, entry);
    }
    if (!entry.callable) continue;
    const name = toolNameOf(workflow.name, workflow.id, taken);
    taken.add(name);
    tools.push(callableTool(name, workflow, entry.input));
  }
  return tools;
}

/** The value the run's Return response step set (null when it set none). */
function responseOf(engine: AppDeps["engine"], runId: string): Promise<unknown> {
  return engine.responseOf(runId);
}

function callableTool(name: string, workflow: { id: string; name: string; description: string }, input: TObject): McpTool {
  return defineTool<Record<string, unknown>>({
    name,
    description: `${workflow.description || `Runs the workflow "${workflow.name}"`} (live callable workflow ${workflow.id}; returns its Return response value).`,
    scope: RUN_SCOPE,
    input,
    run: async ({ deps, auth }, args) => {
      const engine = deps.engine;
      const started = await engine.startRun({
        workspaceId: auth.workspaceId,
        workflowId: workflow.id,
        environment: "production",
        triggerType: "mcp",
        input: args,
      });
      const run = (await engine.waitFor(started.id, CALLABLE_WAIT_SECONDS * 1000)) ?? started;
      if (run.status === "completed") return { data: await responseOf(engine, run.id), runId: run.id };
      if (run.status === "failed" || run.status === "cancelled") {
        throw new AppError(
          "UNPROCESSABLE",
          `workflow "${workflow.name}" run ${run.id} ${run.status}: ${run.errorMessage ?? "no message"}; read it with get_run`,
          { runId: run.id, status: run.status },
        );
      }
      throw new AppError(
        "GATEWAY_TIMEOUT",
        `workflow "${workflow.name}" run ${run.id} is ${run.status} after ${CALLABLE_WAIT_SECONDS} s; read it later with get_run`,
        { runId: run.id, status: run.status },
      );
    },
  });
}
