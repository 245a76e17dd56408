/**
 * Run tools: start a run (triggerType `mcp`) and wait for it, list runs, read one with its steps —
 * the engine and runs core behind src/api/runs.ts, with the same scopes.
 */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { MAX_WAIT_SECONDS } from "../../core/runs/runs";
import { Uuid } from "../../schema/common";
import { RetryBody, RunListQuery, type RetryBodyT } from "../../schema/run";
import { PageArgs, pageText, type PageArgsT } from "../page-args";
import { defineTool, recordTool } from "../tool";

const strict = { additionalProperties: false } as const;
/** Tool calls are synchronous for an agent, so a run is waited for unless it asks otherwise. */
const DEFAULT_WAIT_SECONDS = MAX_WAIT_SECONDS;

const { status, environment, triggerType, workflowId, tag, sort } = RunListQuery.properties;

export const runTools = [
  defineTool<{ id: string; environment: "test" | "production"; wait?: number; input?: Record<string, unknown> }>({
    name: "run_workflow",
    description:
      "Run a workflow and wait for it: environment test runs the draft, production the published version (NOT_PUBLISHED if never published). " +
      `input becomes {{trigger.body}}. Waits up to wait seconds (0–${MAX_WAIT_SECONDS}, default ${DEFAULT_WAIT_SECONDS}) and returns the finished run with its steps, or the run as it stands (pending/running/paused): read it later with get_run.`,
    scope: "workflow:run",
    input: t.Object(
      {
        id: Uuid,
        environment: t.Union([t.Literal("test"), t.Literal("production")], { description: "required: a production run is never started by omission" }),
        wait: t.Optional(
          Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, description: `seconds to wait for the run to finish (default ${DEFAULT_WAIT_SECONDS})` }),
        ),
        input: t.Optional(t.Record(t.String(), t.Unknown(), { description: "a JSON object: the trigger input, available as {{trigger.body}}" })),
      },
      strict,
    ),
    run: async ({ deps, auth, signal }, args) => {
      // The same core as POST /api/workflows/{id}/run?environment=…&wait=…, with the query as the route receives it.
      const query = { environment: args.environment, wait: String(args.wait ?? DEFAULT_WAIT_SECONDS) };
      const result = await deps.runs.runWorkflow(auth.workspaceId, args.id, query, args.input ?? {}, { triggerType: "mcp", signal });
      return { data: result.run };
    },
  }),
  defineTool<PageArgsT & { status?: string; environment?: string; triggerType?: string; workflowId?: string; tag?: string; sort?: string }>({
    name: "list_runs",
    description:
      "List the workspace's runs, newest first, without steps. Test runs are hidden unless environment is test or all. Filters: status, triggerType, workflowId, tag; sort oldest or duration.",
    scope: "run:read",
    readOnly: true,
    input: t.Object({ ...PageArgs, status, environment, triggerType, workflowId, tag, sort }, strict),
    run: ({ deps, auth }, args) => deps.runs.list(auth.workspaceId, { ...args, ...pageText(args) }),
  }),
  recordTool(
    {
      name: "get_run",
      description: "One run with its steps in execution order: each step's status, inputData (resolved config), outputData, errorMessage, retries and timings.",
      scope: "run:read",
      readOnly: true,
    },
    (deps, workspaceId, id) => deps.runs.get(workspaceId, id),
  ),
  recordTool(
    {
      name: "cancel_run",
      description:
        "Cancel a pending, running or paused run (POST /api/runs/{id}/cancel): a running step is asked to stop and the run ends cancelled, with the sub-flows it waits for. " +
        "Cancelling a cancelled run changes nothing; a completed or failed run is refused (409).",
      scope: "run:write",
    },
    (deps, workspaceId, id) => deps.runs.cancel(workspaceId, id),
  ),
  defineTool<{ id: string } & RetryBodyT>({
    name: "retry_run",
    description:
      "Retry a finished run as a new run (POST /api/runs/{id}/retry). from: failed_step (default, failed runs only) reuses the outputs before the failure; start runs everything again. " +
      "version: original (default) or latest. Returns the new run, queued: read it with get_run.",
    scope: "run:write",
    input: t.Object({ id: Uuid, ...RetryBody.properties }, strict),
    run: async ({ deps, auth }, { id, ...body }) => ({ data: await deps.runs.retry(auth.workspaceId, id, body) }),
  }),
];
