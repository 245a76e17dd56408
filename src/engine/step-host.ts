/**
 * Where a step runs and what it may reach: the executor (executor.ts) walks a run's tree and asks this host
 * to invoke each action — pure and engine-effect steps on this thread, every other step on a worker thread
 * (started with the first such step) — with the connection's credentials, the guarded fetch, the workspace's
 * KV store and sub-flow calls. Step rows are written here as they finish.
 */
import { AddressPolicy } from "../net/address-policy";
import { createGuardedFetch } from "../net/guarded-fetch";
import { workspaceKv } from "../store/kv";
import { storageOf } from "../store/storage";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { ActionDef, GuardedFetch, KeyValueStore, ResolvedAuth } from "../pieces-sdk/types";
import type { RunT } from "../schema/run";
import { type RunRow, type StepRow, stepFromRow } from "../store/run-rows";
import type { ExecutorHost, StepCall } from "./executor";
import { type ActionOutcome, errorMessage, invokeAction } from "./invoke-action";
import { WorkerPool } from "./pool";
import type { RunExecution } from "./run-execution";
import { MAX_SUBFLOW_DEPTH, type StartedRuns, type StartRunInput } from "./run-start";
import { type EngineLimits, FINISHED, type RunTable } from "./run-table";
import type { QueuedOp, WriteOp } from "../store/run-writes";
import type { StepEffects, SubflowCall, SubflowResult, WebhookReply } from "./step-context";

/** Step rows a running run keeps in memory for its waiters; past this many, they are read back from the database. */
const MAX_KEPT_STEPS = 1_000;
/**
 * Built-in actions that only ask the engine for something (a reply, tags, a response): cheap and trusted, so no
 * worker hop. Keyed by action id, valued by piece (webhook.respond, tags.add_tags, subflows.return_response).
 */
const ENGINE_EFFECT_ACTIONS = new Map([
  ["respond", "webhook"],
  ["add_tags", "tags"],
  ["return_response", "subflows"],
]);

/** What a step's sub-flow call and reply need from the rest of the engine. */
export interface StepHostLinks {
  stopping(): boolean;
  startRun(input: StartRunInput): Promise<RunT>;
  waitForRow(runId: string, ms: number, signal?: AbortSignal): Promise<RunRow | null>;
  cancel(workspaceId: string, runId: string): Promise<RunT>;
  deliverReply(runId: string, reply: WebhookReply): void;
}

export class StepHost implements ExecutorHost {
  readonly pieces: PieceRegistry;
  readonly limits: EngineLimits;
  /** Steps run on a worker thread, and on this thread (Engine.stats). */
  private readonly counted = { worker: 0, inline: 0 };
  private pool: WorkerPool | undefined;
  /** The pool started (or could not): steps can be placed. */
  private poolSettled = false;
  private poolPromise: Promise<void> | undefined;
  private ownFetch: GuardedFetch | undefined;
  /** What steps may reach although not public: this thread's guard, and the list the workers are given. */
  private readonly addressPolicy: AddressPolicy;

  constructor(
    private readonly t: RunTable,
    /** What the starter knows of the runs it started: their inserts on the way, their trace context (run-start.ts). */
    private readonly started: StartedRuns,
    private readonly links: StepHostLinks,
  ) {
    this.addressPolicy = t.o.addressPolicy ?? new AddressPolicy(t.o.config.allowedCidrs);
    this.pieces = t.o.pieces;
    this.limits = t.limits;
  }

  get stepCounts(): { readonly worker: number; readonly inline: number } {
    return this.counted;
  }

  get workerPool(): WorkerPool | undefined {
    return this.pool;
  }

  /** A new allow-list (Settings → Network): steps started from now on, here and on every worker, obey it. */
  setAllowedCidrs(cidrs: readonly string[]): void {
    this.addressPolicy.setAllowed(cidrs);
    this.pool?.setAllowCidrs(cidrs);
  }

  async stopPool(): Promise<void> {
    await this.pool?.stop();
  }

  recordsStart(call: StepCall): boolean {
    return this.hasSideEffects(call.node.pieceId ?? "", call.action);
  }

  pinned(run: RunExecution, stepName: string): { found: boolean; output?: unknown } {
    const pinned = run.pinned;
    if (run.row.environment !== "test" || !Object.hasOwn(pinned, stepName)) return { found: false };
    return { found: true, output: pinned[stepName] };
  }

  invoke(run: RunExecution, call: StepCall): ActionOutcome | Promise<ActionOutcome> {
    return call.node.connectionId ? this.invokeWithAuth(run, call, call.node.connectionId) : this.invokeResolved(run, call, undefined);
  }

  /** Step rows are written as they finish; the run's counters are written when it ends or pauses (readers of a running run get them from memory). */
  writeStep(run: RunExecution, row: StepRow, update: boolean, durable = false): undefined | Promise<void> {
    const t = this.t;
    const op: WriteOp = { op: update ? "updateStep" : "insertStep", row };
    const runId = run.row.id;
    let committed: Promise<void> | undefined;
    const started = this.started;
    const insert = durable ? undefined : started.untakenInsert(runId);
    if (insert)
      insert.push(op); // committed with the run's insert, and fails with it
    else {
      // Steps of a run whose insert is not committed yet are dropped if that insert fails (RunStarter.insertFailed).
      const queued: QueuedOp = started.unackedInsert(runId) !== undefined ? () => (started.isLost(runId) ? null : op) : op;
      if (durable) committed = t.writes.write([queued]);
      else t.writes.fire(queued);
    }
    if (run.stepsComplete) {
      const at = update ? run.steps.findIndex((s) => s.id === row.id) : -1;
      if (at >= 0) run.steps.splice(at, 1);
      run.steps.push(row);
      // A long run (a big loop) keeps its rows in the database only: memory stays flat however many steps it runs.
      if (run.steps.length > MAX_KEPT_STEPS) {
        run.steps.length = 0;
        run.stepsComplete = false;
      }
    }
    t.events.emit(run.row.id, () => ({ type: "step", id: row.seq, step: stepFromRow(row) }));
    if (row.duration_ms !== null && (row.status === "completed" || row.status === "failed"))
      t.o.observer?.stepFinished(row, run.row, this.started.traceparentOf(runId));
    return committed;
  }

  applyEffects(run: RunExecution, effects: StepEffects) {
    if (effects.tags.length > 0) {
      const tags = JSON.parse(run.row.tags) as string[];
      for (const tag of effects.tags) if (!tags.includes(tag)) tags.push(tag);
      run.row.tags = JSON.stringify(tags.slice(0, 100));
    }
    if (effects.response) run.row.response = JSON.stringify(effects.response.value ?? null);
  }

  /**
   * Steps a restart must not repeat: every non-pure action, wherever it runs (a worker, or this thread for a
   * piece only this process has). The engine-effect actions are exempt: replying, tagging and setting the
   * response again are harmless, and they stay as cheap as pure steps.
   */
  private hasSideEffects(pieceId: string, action: ActionDef): boolean {
    return action.sideEffects !== "pure" && ENGINE_EFFECT_ACTIONS.get(action.id) !== pieceId;
  }

  private needsWorker(pieceId: string, action: ActionDef): boolean {
    // Pure and engine-effect steps always run here; any other step may run on a worker.
    if (!this.pool || !this.hasSideEffects(pieceId, action)) return false;
    const version = this.t.o.pieces.get(pieceId)?.version;
    // A piece registered in this process only (not loadable by workers) runs here.
    return version !== undefined && this.pool.serves(pieceId, version);
  }

  /** Spawns the worker pool once and resolves when its loaded pieces are known (or it failed: steps then run here). */
  private ensurePool(): Promise<void> {
    if (this.poolPromise) return this.poolPromise;
    const { config, log, storeAddress } = this.t.o;
    const workers = this.t.o.workers ?? config.workers;
    if (workers <= 0 || this.links.stopping()) {
      this.poolSettled = true;
      this.poolPromise = Promise.resolve();
      return this.poolPromise;
    }
    const pool = new WorkerPool({
      size: workers,
      log,
      init: {
        t: "init",
        piecesDir: config.piecesDir,
        store: storeAddress ?? null,
        dbSynchronous: config.dbSynchronous,
        allowCidrs: [...this.addressPolicy.allowedCidrs],
      },
    });
    this.pool = pool;
    this.poolPromise = pool
      .start()
      .catch(async (error) => {
        log.error("worker pool failed to start; steps run on the main thread", { error: errorMessage(error) });
        this.pool = undefined;
        await pool.stop();
      })
      .finally(() => {
        this.poolSettled = true;
      });
    return this.poolPromise;
  }

  private async invokeWithAuth(run: RunExecution, call: StepCall, connectionId: string): Promise<ActionOutcome> {
    const row = run.row;
    const resolve = this.t.o.resolveAuth?.();
    if (!resolve) return { kind: "error", message: "connections are not available in this server", effects: { tags: [] } };
    let auth: ResolvedAuth;
    try {
      auth = await resolve({ workspaceId: row.workspace_id, connectionId, pieceId: call.node.pieceId ?? "" });
    } catch (error) {
      return { kind: "error", message: errorMessage(error), effects: { tags: [] } };
    }
    for (const secret of secretsOf(auth)) if (!run.secrets.includes(secret)) run.secrets.push(secret);
    return this.invokeResolved(run, call, auth);
  }

  private invokeResolved(run: RunExecution, call: StepCall, auth: ResolvedAuth | undefined): ActionOutcome | Promise<ActionOutcome> {
    // The worker pool starts with the first step that may need it (a server running only pure steps never
    // spawns worker threads); which pieces the workers serve is known once it is ready.
    // A piece whose code runs in its own process needs no worker: its first step does not wait for the pool.
    if (!this.poolSettled && this.hasSideEffects(call.node.pieceId ?? "", call.action) && !this.t.o.pieces.get(call.node.pieceId ?? "")?.ownProcess) {
      return this.ensurePool().then(() => this.invokeResolved(run, call, auth));
    }
    const { config, log, observer } = this.t.o;
    const row = run.row;
    const pieceId = call.node.pieceId ?? "";
    // The step's outgoing calls carry the trace on: a tracer's span for the step, else the caller's own context.
    const given = this.started.traceparentOf(row.id);
    const traceparent = observer?.stepStarting?.({ id: call.stepId, name: call.node.name, pieceId, actionId: call.action.id }, row, given) ?? given;
    const runInfo = {
      id: row.id,
      workflowId: row.workflow_id,
      workspaceId: row.workspace_id,
      environment: row.environment,
      stepName: call.node.name,
      depth: row.depth,
      traceparent,
    };
    const onReply = (reply: WebhookReply) => this.links.deliverReply(row.id, reply);
    const callWorkflow = (sub: SubflowCall) => this.callWorkflow(run, sub, traceparent);
    const pool = this.pool;
    if (pool && this.needsWorker(pieceId, call.action)) {
      this.counted.worker++;
      return pool.run(
        { pieceId, actionId: call.action.id, config: call.config, auth, run: runInfo, resumePayload: call.resumePayload, publicUrl: config.publicUrl },
        run.abort.signal,
        { onReply, onCall: callWorkflow, onLog: (message, fields) => log.debug(message, { runId: row.id, step: call.node.name, ...fields }) },
      );
    }
    this.counted.inline++;
    const result = invokeAction(call.action, {
      config: call.config,
      auth,
      run: runInfo,
      signal: () => run.abort.signal,
      fetch: this.fetchHere(),
      store: () => this.storeFor(row.workspace_id),
      log: (message, fields) => log.debug(message, { runId: row.id, step: call.node.name, ...fields }),
      resumePayload: call.resumePayload,
      publicUrl: config.publicUrl,
      callWorkflow,
      onReply,
      onWaiting: (reason) => this.t.stepWaiting(run, call.node.name, reason),
    });
    return result instanceof Promise ? Promise.race([result, run.stopped]) : result;
  }

  /** The guarded fetch for steps on this thread: the app's, else one built from the allow-list (never the global fetch). */
  private fetchHere(): GuardedFetch {
    const given = this.t.o.fetch?.();
    if (given) return given;
    this.ownFetch ??= createGuardedFetch({ policy: this.addressPolicy });
    return this.ownFetch;
  }

  private storeFor(workspaceId: string): KeyValueStore {
    return workspaceKv(storageOf(this.t.o.db), workspaceId);
  }

  private async callWorkflow(parent: RunExecution, call: SubflowCall, traceparent: string | undefined): Promise<SubflowResult> {
    const row = parent.row;
    if (row.depth + 1 > MAX_SUBFLOW_DEPTH) {
      throw new Error(
        `sub-flow depth limit reached: this run is already ${row.depth} levels deep and the limit is ${MAX_SUBFLOW_DEPTH}; a workflow that calls itself needs a condition that ends the recursion`,
      );
    }
    let child: RunT;
    try {
      child = await this.links.startRun({
        workspaceId: row.workspace_id,
        workflowId: call.workflowId,
        environment: row.environment,
        triggerType: "subflow",
        input: call.payload,
        parent: { runId: row.id, depth: row.depth },
        traceparent,
      });
    } catch (error) {
      throw new Error(`could not start workflow ${call.workflowId}: ${errorMessage(error)}`);
    }
    if (!call.wait) return { runId: child.id, status: child.status };
    const finished = await this.links.waitForRow(child.id, Math.max(0, parent.deadline - parent.clock.now()), parent.abort.signal);
    if (parent.abort.signal.aborted && (!finished || !FINISHED.has(finished.status))) {
      // The caller was cancelled or timed out while waiting: nobody will take the sub-flow's result, so it
      // is cancelled too (and its own waited-for sub-flows with it). A sub-flow started without wait runs on.
      void this.links
        .cancel(row.workspace_id, child.id)
        .catch((error) => this.t.o.log.warn("could not cancel a sub-flow run", { runId: child.id, error: errorMessage(error) }));
    }
    if (!finished || !FINISHED.has(finished.status)) {
      return { runId: child.id, status: finished?.status ?? "pending" };
    }
    // A waited-for sub-flow that failed fails the calling step, like a function that throws.
    if (finished.status !== "completed") {
      throw new Error(
        `sub-flow run ${child.id} (workflow "${finished.workflow_name}") ${finished.status}: ${finished.error_message ?? finished.status}`.slice(0, 2000),
      );
    }
    return { runId: child.id, status: finished.status, response: finished.response === null ? undefined : JSON.parse(finished.response) };
  }
}

/** Credential values a step's output and logs must never show. */
function secretsOf(auth: ResolvedAuth): string[] {
  switch (auth.kind) {
    case "oauth2":
      return [auth.accessToken];
    case "api_key":
      return [auth.apiKey];
    case "basic":
      return [auth.password];
    case "custom":
      return Object.values(auth.values).filter((v): v is string => typeof v === "string" && v.length >= 8);
  }
}
