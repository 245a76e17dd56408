/**
 * Runs (docs/api.md "4. Run", docs/engine.md "Runs API decisions"): start a workflow run, list and read runs,
 * stream a run's events, cancel, retry, and the public resume links of paused runs.
 */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import type { RunEvent } from "../engine/run-events";
import { openRunStream } from "../core/runs/run-stream";
import { credentialHolds } from "./middleware/security";
import { jsonText } from "../http/json-text";
import { routeOptions } from "./route-options";
import { Data, IdParams, Uuid } from "../schema/common";
import { RetryBody, Run, RunCounts, RunCountsQuery, RunList, RunListQuery, RunWorkflowQuery } from "../schema/run";

const tags = ["Runs"];
const route = routeOptions(tags);
const HEARTBEAT_MS = 15_000;
/**
 * How often an open stream asks again whether its credential still holds run:read (docs/teams.md, "Sessions"): a
 * revoked session or token, or a deactivated member, has its streams ended within this, with no read per event.
 */
const CREDENTIAL_RECHECK_MS = 5_000;

const ResumeParams = t.Object({ id: Uuid, token: t.String({ minLength: 10, maxLength: 200, description: "the secret of the resume link" }) });
const ResumeAnswer = Data(
  t.Object({ runId: Uuid, status: t.String({ description: "the run's status after the decision, normally pending (queued to continue)" }) }),
);
const InputBody = t.Optional(t.Record(t.String(), t.Unknown(), { description: "a JSON object: the trigger input, available as {{trigger.body}}" }));

function sseFrame(event: RunEvent): string {
  const data = event.type === "step" ? event.step : event.run;
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

function lastEventIdOf(request: Request, query: Record<string, unknown>): number {
  const raw = request.headers.get("last-event-id") ?? (typeof query.lastEventId === "string" ? query.lastEventId : "");
  return /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : 0;
}

export const runsApi = (deps: AppDeps) => {
  const runs = deps.runs;
  return new Elysia({ name: "api-runs" })
    .use(deps.security)
    .post(
      "/api/workflows/:id/run",
      async ({ auth, params, query, body, set, request }) => {
        const result = await runs.runWorkflow(auth.workspaceId, params.id, query, body, { traceparent: request.headers.get("traceparent") });
        set.status = result.status;
        return { data: result.run };
      },
      {
        permission: "workflow:run",
        idempotent: true,
        params: IdParams,
        query: RunWorkflowQuery,
        body: InputBody,
        detail: {
          tags: ["Lifecycle"],
          summary: "Run a workflow: production executes the published snapshot, test the draft",
          description:
            "The body (a JSON object) becomes the trigger's output at `trigger.body` (with empty `headers` and `query`); the run's triggerType is `api`. `environment=production` runs the published version (422 NOT_PUBLISHED when the workflow was never published); anything else, or nothing, is a test run of the draft. Without `wait` the reply is 202 with the queued run. With `wait=N` (0–30 s) the reply is 200 with the finished run and its steps, or 202 with the run as it stands after N seconds. Accepts Idempotency-Key.",
          responses: {
            200: {
              description: "The finished run with its steps",
              content: { "application/json": { schema: { type: "object", properties: { data: { $ref: "#/components/schemas/Run" } } } } },
            },
            202: {
              description: "The run, pending or still running",
              content: { "application/json": { schema: { type: "object", properties: { data: { $ref: "#/components/schemas/Run" } } } } },
            },
          },
        },
      },
    )
    .get("/api/runs", async ({ auth, query }) => jsonText(await runs.listJson(auth.workspaceId, query)), {
      permission: "run:read",
      query: RunListQuery,
      response: RunList,
      detail: {
        tags,
        summary: "List the workspace's runs, newest first (steps excluded)",
        description:
          "Filters: status, environment (production by default; test or all show test runs), triggerType, workflowId, tag (exact match). sort: oldest, duration (longest first, runs without duration last), otherwise newest start first. Invalid filter values are ignored and out-of-range page/limit fall back to 1 and 20: the reply is still 200.",
      },
    })
    .get("/api/runs/counts", ({ auth, query }) => runs.counts(auth.workspaceId, query), {
      permission: "run:read",
      query: RunCountsQuery,
      response: RunCounts,
      detail: {
        tags,
        summary: "Runs per day and status over the last days, including runs whose row was not kept",
        description:
          "The run chart's counts and the exact totals whatever each workflow keeps of its runs (settings.saveRuns): a successful run of a workflow that keeps nothing of them is counted here although GET /api/runs no longer lists it. Filters as GET /api/runs (status, environment, triggerType, workflowId; no tag); days 1–90, default 14, counted in UTC. Invalid values are ignored: the reply is still 200.",
      },
    })
    .get("/api/runs/:id", async ({ auth, params }) => ({ data: await runs.get(auth.workspaceId, params.id) }), {
      permission: "run:read",
      ...route.byId(Run, "One run with its steps in execution order (input, output, error, retries, timings)"),
    })
    .get(
      "/api/runs/:id/stream",
      async ({ auth, params, request, query }) => {
        const abort = new AbortController();
        request.signal.addEventListener("abort", () => abort.abort(), { once: true });
        const events = await openRunStream(deps.engine, auth.workspaceId, params.id, lastEventIdOf(request, query), abort.signal);
        const encoder = new TextEncoder();
        let heartbeat: ReturnType<typeof setInterval> | undefined;
        let recheck: ReturnType<typeof setInterval> | undefined;
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            heartbeat = setInterval(() => {
              try {
                controller.enqueue(encoder.encode(": keep-alive\n\n"));
              } catch {
                abort.abort();
              }
            }, HEARTBEAT_MS);
            // The credential was checked when the stream opened; asked again on a timer, it ends the stream once revoked.
            recheck = setInterval(() => {
              credentialHolds(deps.identity, request, "run:read").then(
                (holds) => holds || abort.abort(),
                () => {},
              );
            }, CREDENTIAL_RECHECK_MS);
            try {
              controller.enqueue(encoder.encode("retry: 2000\n\n"));
              for await (const event of events) controller.enqueue(encoder.encode(sseFrame(event)));
            } catch {
              // The client went away: nothing to tell it.
            } finally {
              clearInterval(heartbeat);
              clearInterval(recheck);
              abort.abort();
              try {
                controller.close();
              } catch {}
            }
          },
          cancel() {
            clearInterval(heartbeat);
            clearInterval(recheck);
            abort.abort();
          },
        });
        return new Response(stream, {
          headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no", connection: "keep-alive" },
        });
      },
      {
        permission: "run:read",
        params: IdParams,
        query: t.Object(
          { lastEventId: t.Optional(t.String({ description: "same as the Last-Event-ID header, for clients that cannot set headers" })) },
          { additionalProperties: true },
        ),
        detail: {
          tags,
          summary: "Server-sent events of a run: run, step, end",
          description:
            "Events: `run` (the run without steps, whenever its status changes), `step` (a step row as written: running, then completed/failed/skipped/paused), `end` (the finished run; the stream closes). Every event has an `id:` from one counter per run; reconnect with the Last-Event-ID header to continue after the last event received. A finished run streams its history, then `end`.",
          responses: { 200: { description: "text/event-stream", content: { "text/event-stream": { schema: { type: "string" } } } } },
        },
      },
    )
    .post("/api/runs/:id/cancel", async ({ auth, params }) => ({ data: await runs.cancel(auth.workspaceId, params.id) }), {
      permission: "run:write",
      ...route.byId(Run, {
        summary: "Cancel a pending, running or paused run",
        description:
          "A running step is asked to stop (its AbortSignal fires) and the run ends `cancelled`. Cancelling a cancelled run is a no-op; a completed or failed run answers 409.",
      }),
    })
    .post(
      "/api/runs/:id/retry",
      async ({ auth, params, body, set }) => {
        const run = await runs.retry(auth.workspaceId, params.id, body ?? undefined);
        set.status = 202;
        return { data: run };
      },
      {
        permission: "run:write",
        params: IdParams,
        body: t.Optional(RetryBody),
        detail: {
          tags,
          summary: "Retry a finished run as a new run",
          description:
            "`from`: failed_step (default; only for failed runs) reuses the recorded outputs of the steps before the failure and executes from the failed step on; start runs everything again with the same trigger data. `version`: original (default) executes the definition the run executed; latest the live version (production) or the draft (test). The new run has retryOfRunId and startedFromStep; the original gets retriedByRunId. Answers 202 with the new run.",
          responses: {
            202: {
              description: "The new run, queued",
              content: { "application/json": { schema: { type: "object", properties: { data: { $ref: "#/components/schemas/Run" } } } } },
            },
          },
        },
      },
    )
    .route(
      "GET",
      "/api/runs/:id/resume/:token",
      async ({ params, query }) => {
        const run = await runs.resume(params.id, params.token, query, undefined);
        return { data: { runId: run.id, status: run.status } };
      },
      {
        permission: "public",
        params: ResumeParams,
        query: t.Object({ decision: t.Optional(t.String({ description: "e.g. approve or reject" })) }, { additionalProperties: true }),
        response: ResumeAnswer,
        detail: { tags, summary: "Resume link of a paused run (approval): no bearer token, the link's secret is the credential" },
      },
    )
    .post(
      "/api/runs/:id/resume/:token",
      async ({ params, query, body }) => {
        const run = await runs.resume(params.id, params.token, query, body);
        return { data: { runId: run.id, status: run.status } };
      },
      {
        permission: "public",
        params: ResumeParams,
        query: t.Object({ decision: t.Optional(t.String({ description: "e.g. approve or reject" })) }, { additionalProperties: true }),
        body: t.Optional(t.Record(t.String(), t.Unknown(), { description: "extra data for the resumed step (e.g. a comment)" })),
        response: ResumeAnswer,
        detail: { tags, summary: "Resume a paused run (approval) with a decision and optional data; no bearer token" },
      },
    );
};
