/**
 * The Runs API's core (docs/api.md "4. Run", docs/engine.md "Runs API decisions"): starting a workflow run, listing and
 * reading runs, cancel, retry and resume links. Everything is bounded by the caller's workspace; another
 * workspace's run ids answer 404.
 */
import type { Engine } from "../../engine/engine";
import { AppError, notFound } from "../../http/errors";
import { validTraceparent } from "../../lib/traceparent";
import type { Environment, RunListT, RunT, RunTriggerType } from "../../schema/run";
import { runFromRow, stepFromRow } from "../../store/run-rows";
import { runCountFilter, runListFilter, type RawQuery } from "./list-query";

export const MAX_WAIT_SECONDS = 30;
const FINISHED = new Set(["completed", "failed", "cancelled"]);
/**
 * Reads follow the queued writes: a run just finished is listed finished, with all its steps. A list, or the
 * detail of a run in progress, waits for them at most READ_WAIT_MS and then answers with what is committed,
 * so a slow commit (a backlog of thousands of step rows; a database flushing a checkpoint, 100–300 ms) does
 * not hold the API. The detail of a run this process is finishing waits for the commit of its end (up to
 * END_WAIT_MS), not for every queued write; that of a run it does not hold (no longer executing, its end
 * committed) waits for nothing: every write of it is committed.
 */
const READ_WAIT_MS = 50;
const DAY_MS = 86_400_000;
const END_WAIT_MS = 10_000;

/** Step rows in one run detail: a run with more (a long loop) shows the first and last 1,000 and says how many are left out. */
export const MAX_DETAIL_STEPS = 2_000;

export interface RunWorkflowResult {
  /** 200 when the reply carries the finished run, 202 when the run is still pending or running. */
  status: 200 | 202;
  run: RunT;
}

/** `environment=production` is production; anything else, or nothing, is a test run (never production by omission). */
export function runEnvironment(value: unknown): Environment {
  return value === "production" ? "production" : "test";
}

/** `wait` is an integer 0–30 (seconds); absent means answer at once with 202. */
export function parseWait(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === "string" ? value.trim() : "";
  if (!/^\d+$/.test(text) || Number(text) > MAX_WAIT_SECONDS) {
    throw new AppError(
      "VALIDATION_FAILED",
      `wait=${JSON.stringify(value)} is not allowed; use a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}, or leave it out to get 202 at once`,
    );
  }
  return Number(text);
}

export interface RunWorkflowOptions {
  /** What the run records as its triggerType: `api` for the HTTP route, `mcp` for the MCP tool. */
  triggerType?: Extract<RunTriggerType, "api" | "mcp">;
  /** Stops the wait (not the run) when the caller goes away, e.g. an MCP client cancelling its call. */
  signal?: AbortSignal;
  /** The request's `traceparent` header: kept by the run when it is a valid W3C trace context (docs/operations.md, "Traces"). */
  traceparent?: string | null;
}

export class Runs {
  constructor(private readonly engine: Engine) {}

  /** POST /api/workflows/{id}/run (and the MCP `run_workflow` tool): production = published snapshot, test = draft. */
  async runWorkflow(workspaceId: string, workflowId: string, query: RawQuery, body: unknown, options: RunWorkflowOptions = {}): Promise<RunWorkflowResult> {
    const environment = runEnvironment(query.environment);
    const wait = parseWait(query.wait);
    if (body !== undefined && body !== null && (typeof body !== "object" || Array.isArray(body))) {
      throw new AppError(
        "VALIDATION_FAILED",
        `the body must be a JSON object (it becomes trigger.body); got ${Array.isArray(body) ? "an array" : typeof body}`,
      );
    }
    const traceparent = validTraceparent(options.traceparent);
    const input = { workspaceId, workflowId, environment, triggerType: options.triggerType ?? "api", input: body ?? {}, traceparent } as const;
    if (wait === undefined) return { status: 202, run: await this.engine.startRun(input) };
    // Waiting callers usually get the finished run: no snapshot of the started one is built for them.
    const runId = await this.engine.startRunId(input);
    const waited = options.signal?.aborted ? Promise.resolve(null) : this.engine.waitForResult(workspaceId, runId, wait * 1000);
    const current = await (options.signal ? Promise.race([waited, aborted(options.signal)]) : waited);
    if (current && FINISHED.has(current.status)) return { status: 200, run: current };
    return { status: 202, run: current ?? (await this.engine.current(runId))! };
  }

  /**
   * GET /api/runs's answer as JSON text ({ data, pagination }): the page's runs arrive as JSON from a reader
   * thread and are sent on as they are (src/store/run-reads.ts), so a busy run list costs the thread that
   * serves HTTP no parsing or serialising.
   */
  async listJson(workspaceId: string, query: RawQuery): Promise<string> {
    const filter = runListFilter(workspaceId, query);
    await this.engine.committed(READ_WAIT_MS);
    const { runs, total } = await this.engine.listRuns(filter);
    const pagination: RunListT["pagination"] = { page: filter.page, limit: filter.limit, total, totalPages: Math.ceil(total / filter.limit) };
    return `{"data":${runs},"pagination":${JSON.stringify(pagination)}}`;
  }

  /** The same page as an object (the MCP tool's answer). */
  async list(workspaceId: string, query: RawQuery): Promise<RunListT> {
    return JSON.parse(await this.listJson(workspaceId, query)) as RunListT;
  }

  /**
   * GET /api/runs/counts: runs per day (UTC) and status over the last `days` days, those whose row was not kept
   * included (docs/engine.md, "Run saving"): the run chart and the exact totals whatever each workflow keeps.
   */
  async counts(workspaceId: string, query: RawQuery, now = this.engine.clock.now()) {
    const { days, ...filter } = runCountFilter(workspaceId, query);
    const today = Math.floor(now / DAY_MS);
    const first = today - days + 1;
    await this.engine.committed(READ_WAIT_MS);
    const hours = await this.engine.hourCounts(filter, first * 24);
    const out = Array.from({ length: days }, (_, i) => ({
      day: new Date((first + i) * DAY_MS).toISOString().slice(0, 10),
      counts: {} as Record<string, number>,
      unsaved: 0,
    }));
    let total = 0;
    let unsaved = 0;
    for (const cell of hours) {
      const day = out[Math.floor(cell.hour / 24) - first];
      if (!day) continue; // started later than today (a clock ahead)
      const n = cell.stored + cell.unsaved;
      day.counts[cell.status] = (day.counts[cell.status] ?? 0) + n;
      day.unsaved += cell.unsaved;
      total += n;
      unsaved += cell.unsaved;
    }
    return { data: { total, unsaved, days: out } };
  }

  /** One run with its steps in execution order (pending writes are committed first, so the steps match the run). */
  async get(workspaceId: string, runId: string): Promise<RunT> {
    if (this.engine.holds(runId)) {
      const live = await this.engine.row(workspaceId, runId);
      if (live !== null && !FINISHED.has(live.status)) await this.engine.committed(READ_WAIT_MS);
      // Ended, maybe while the line above waited: its end and last steps may still be committing. A finished
      // run is shown with all its steps, so its own end commit is waited for (the memory row is finished
      // before its steps are readable: "completed" with its last steps missing was answered).
      if (this.engine.holds(runId) && FINISHED.has((await this.engine.row(workspaceId, runId))?.status ?? "")) await this.engine.waitFor(runId, END_WAIT_MS);
    }
    const row = await this.engine.row(workspaceId, runId);
    if (!row) throw notFound(`run ${runId}`);
    // The run as it stands now, before its steps are read: the engine changes a live row in place, and a run
    // that ended while the steps were being read would be shown finished with the steps of before its end.
    const now = this.engine.withWait(runFromRow(row));
    const { steps, omitted } = await this.engine.storedStepsBounded(runId, MAX_DETAIL_STEPS);
    const run: RunT = { ...now, steps: steps.map(stepFromRow) };
    return omitted > 0 ? { ...run, stepsOmitted: omitted } : run;
  }

  cancel(workspaceId: string, runId: string): Promise<RunT> {
    return this.engine.cancel(workspaceId, runId);
  }

  retry(workspaceId: string, runId: string, body: { from?: "failed_step" | "start"; version?: "original" | "latest" } | undefined): Promise<RunT> {
    return this.engine.retry(workspaceId, runId, body ?? {});
  }

  /** A resume link of a paused run (approval): GET or POST, no bearer token; the query and a JSON body form the payload. */
  resume(runId: string, token: string, query: RawQuery, body: unknown): Promise<RunT> {
    const payload: Record<string, unknown> = {};
    if (body && typeof body === "object" && !Array.isArray(body)) Object.assign(payload, body);
    for (const [key, value] of Object.entries(query)) if (typeof value === "string") payload[key] = value;
    return this.engine.resumeByToken(runId, token, payload);
  }
}

/** Resolves with null when the signal aborts, so a waiter stops waiting (the run goes on). */
function aborted(signal: AbortSignal): Promise<null> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(null);
    else signal.addEventListener("abort", () => resolve(null), { once: true });
  });
}
