/**
 * The engine (DESIGN.md §4): a run is a row first. Every start inserts a `pending` run (group-committed
 * before the caller answers), the dispatcher hands runs to execution in order under each workflow's
 * concurrencyLimit and maintenanceMode, the executor walks the tree — pure steps on this thread,
 * others on the worker pool — and step rows are written as they finish, in batched commits.
 * Pauses free the run's slot and resume on a timer or a resume link, also after a restart; runs left
 * `running` by a crash are resumed from their recorded steps or failed with a clear message.
 *
 * Other parts of Weft start runs through `startRun` (async, batched) or `enqueue` (synchronous, inside the
 * caller's own transaction), and wait with `waitFor` / `waitForReply`.
 */
import type { Config } from "../config";
import { newId, safeEqual, sha256 } from "../lib/ids";
import type { PieceRegistry } from "../pieces-runtime/registry";
import { KvStore } from "../pieces-runtime/kv-store";
import { createGuardedFetch } from "../net/guarded-fetch";
import { AppError, notFound } from "../http/errors";
import type { Logger } from "../http/logger";
import type { ActionDef, GuardedFetch, KeyValueStore, ResolvedAuth } from "../pieces-sdk/types";
import type { Environment, RunT, RunTriggerType } from "../schema/run";
import type { FlowVersionT, SettingsT } from "../schema/workflow";
import type { Db } from "../store/db";
import { RunStore, runFromRow, stepFromRow, type RunPatch, type RunRow, type StepRow } from "../store/runs";
import { Dispatcher } from "./dispatcher";
import { Executor, type ExecutorHost, type RunOutcome, type StepCall } from "./executor";
import { errorMessage, invokeAction, type ActionOutcome } from "./invoke-action";
import { WorkerPool } from "./pool";
import { BoundedMap } from "../lib/bounded-map";
import { Retention } from "./retention";
import { isoTime } from "./iso-time";
import { RunEvents } from "./run-events";
import { RunExecution, type ReplayEntry } from "./run-execution";
import type { StepEffects, SubflowCall, SubflowResult, WebhookReply } from "./step-context";
import type { WorkflowSource } from "./workflow-source";
import { InlineWriter, ThreadWriter, type QueuedOp, type RunWrites, type WriteOp } from "./run-writes";

export const MAX_SUBFLOW_DEPTH = 10;
/** Step rows a running run keeps in memory for its waiters; past this many, they are read back from the database. */
const MAX_KEPT_STEPS = 1_000;
const FINISHED = new Set(["completed", "failed", "cancelled"]);
/** Finished runs kept in memory for waiters that arrive right after the end (see Engine.recent). */
const RECENT_RUNS = 1024;
/**
 * Built-in actions that only ask the engine for something (a reply, tags, a response): cheap and trusted, so no
 * worker hop. Keyed by action id, valued by piece (webhook.respond, tags.add_tags, subflows.return_response).
 */
const ENGINE_EFFECT_ACTIONS = new Map([
  ["respond", "webhook"],
  ["add_tags", "tags"],
  ["return_response", "subflows"],
]);

export interface StartRunInput {
  /** The workspace the caller acts in; null for system callers holding only a workflow id (schedulers). */
  workspaceId: string | null;
  workflowId: string;
  environment: Environment;
  triggerType: RunTriggerType;
  /**
   * The trigger's full output when the caller has one (webhooks: method, headers, query, body).
   * Otherwise `input` becomes `trigger.body` with empty headers and query (DESIGN.md §3).
   */
  triggerData?: Record<string, unknown>;
  input?: unknown;
  /** Set by sub-flow calls. */
  parent?: { runId: string; depth: number };
}

interface PendingRun {
  id: string;
  workflowId: string;
  environment: Environment;
  row: RunRow;
  definition: FlowVersionT;
  variables: Record<string, unknown>;
  secrets: string[];
  pinned: Record<string, unknown>;
  triggerOutput: unknown;
  replay?: ReplayEntry[];
  resume?: { payload: Record<string, unknown> };
  activeMsBefore?: number;
  /** Inserted by `enqueue` inside someone else's transaction: check the row exists before running. */
  verify?: boolean;
}

interface PauseState {
  log: ReplayEntry[];
  activeMs: number;
  payload?: Record<string, unknown>;
}

export interface EngineOptions {
  db: Db;
  config: Config;
  log: Logger;
  pieces: PieceRegistry;
  /** Resolved lazily: the workflows core may be built after the engine. */
  workflows: () => WorkflowSource | undefined;
  resolveAuth?: () => ((ref: { workspaceId: string; connectionId: string; pieceId: string }) => Promise<ResolvedAuth>) | undefined;
  /** The SSRF-guarded fetch for steps run on this thread; default: one built from config.allowedCidrs (never the global fetch). */
  fetch?: () => GuardedFetch | undefined;
  /** Worker threads; 0 runs every step on the main thread. Default config.workers. */
  workers?: number;
  /** The database file for workers' key-value store access; null when in memory. */
  dbPath?: string | null;
  /** Runs executing at once, across workflows. */
  maxActiveRuns?: number;
}

export class Engine {
  readonly store: RunStore;
  readonly events = new RunEvents();
  /** Group-committed run and step writes (on a writer thread when the database is a file). */
  readonly writes: RunWrites;
  readonly dispatcher: Dispatcher<PendingRun>;
  readonly retention: Retention;
  private readonly executor: Executor;
  private pool: WorkerPool | undefined;
  /** The pool started (or could not): steps can be placed. */
  private poolSettled = false;
  private readonly active = new Map<string, RunExecution>();
  private readonly pendingById = new Map<string, PendingRun>();
  /** Rows whose latest change is being committed (finish, pause, resume). */
  private readonly settling = new Map<string, RunRow>();
  /** Runs started by `startRun` whose insert is not committed yet: the commit they wait for. */
  private readonly unacked = new Map<string, Promise<void>>();
  /**
   * Runs that ended lately, with their step rows when this process executed them all: whoever waits for a
   * run (`?wait=`, a sub-flow call, a stream) asks right after it ended, and this spares the database reads.
   */
  private readonly recent = new BoundedMap<string, { row: RunRow; steps?: StepRow[] }>(RECENT_RUNS);
  /** Runs whose insert failed after they started executing: nothing more of them is written. */
  private readonly lost = new Set<string>();
  /** The row's event_seq when a lazy insert took it (see lazyInsertOps). */
  private readonly insertedSeq = new WeakMap<RunRow, number>();
  /**
   * Runs whose lazy insert is queued and not yet taken into a batch, with the ops of that insert: the run's
   * step rows join them, and a status change needs no write of its own (the insert will carry it).
   */
  private readonly untaken = new Map<string, QueuedOp[]>();
  private readonly endWaiters = new Map<string, Set<(row: RunRow, steps?: StepRow[]) => void>>();
  private readonly replyWaiters = new Map<string, Set<(reply: WebhookReply) => void>>();
  /**
   * Replies of runs whose starter will ask for them (a synchronous webhook), kept from the moment the step
   * replies until the starter collects them: a fast run replies before its start is even committed. Nobody
   * else's reply is kept.
   */
  private readonly replies = new Map<string, WebhookReply>();
  private readonly awaitingReply = new Set<string>();
  private readonly resumeTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Running steps that say they wait for something they do not control (ctx.waiting), by run: shown live, never stored. */
  private readonly waits = new Map<string, { step: string; reason: string; since: string }>();
  private readonly definitionTexts = new BoundedMap<string, string>(500);
  private readonly hashByVersion = new Map<string, string>();
  private readonly hashByObject = new WeakMap<object, string>();
  private kv: KvStore | undefined;
  private ownFetch: GuardedFetch | undefined;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private startPromise: Promise<void> | undefined;
  private poolPromise: Promise<void> | undefined;
  private stopping = false;
  private readonly finishedListeners: Array<(run: RunRow) => void> = [];
  private readonly replyListeners: Array<(runId: string, reply: WebhookReply) => void> = [];
  readonly limits: { outputLimit: number; memoryBudget: number; timeoutMs: number; stepMaxOutput: number; loopMaxItems: number; runMaxSteps: number };
  stats = { started: 0, finished: 0, workerSteps: 0, inlineSteps: 0 };

  constructor(private readonly o: EngineOptions) {
    this.store = new RunStore(o.db);
    const onWriteError = (error: unknown) => o.log.error("run write failed", { error: errorMessage(error) });
    this.writes =
      o.dbPath && o.config.runWriter === "thread"
        ? new ThreadWriter({ dbPath: o.dbPath, synchronous: o.config.dbSynchronous }, onWriteError)
        : new InlineWriter(o.db, onWriteError, { syncWal: o.dbPath ? `${o.dbPath}-wal` : null });
    this.retention = new Retention({
      db: o.db,
      store: this.store,
      log: o.log,
      onDeleted: (ids) => {
        for (const id of ids) this.recent.delete(id);
      },
      pruneDefinitions: () => this.writes.write([{ op: "pruneDefinitions" }]),
      retentionDays: o.config.runRetentionDays,
      retentionMax: o.config.runRetentionMax,
    });
    this.dispatcher = new Dispatcher<PendingRun>(o.maxActiveRuns ?? 1000, (p) => void this.execute(p));
    this.limits = {
      outputLimit: o.config.stepOutputLimit,
      memoryBudget: o.config.runMemoryMb * 1024 * 1024,
      timeoutMs: o.config.runTimeoutSeconds * 1000,
      stepMaxOutput: o.config.stepMaxOutputMb * 1024 * 1024,
      loopMaxItems: o.config.loopMaxItems,
      runMaxSteps: o.config.runMaxSteps,
    };
    const engine = this;
    const host: ExecutorHost = {
      pieces: o.pieces,
      outputLimit: this.limits.outputLimit,
      memoryBudget: this.limits.memoryBudget,
      stepMaxOutput: this.limits.stepMaxOutput,
      loopMaxItems: this.limits.loopMaxItems,
      runMaxSteps: this.limits.runMaxSteps,
      recordsStart: (call) => this.hasSideEffects(call.node.pieceId ?? "", call.action),
      invoke: (run, call) => engine.invoke(run, call),
      writeStep: (run, row, update, durable) => engine.writeStep(run, row, update, durable),
      applyEffects: (run, effects) => engine.applyEffects(run, effects),
      pinned: (run, stepName) => engine.pendingPinned(run, stepName),
    };
    this.executor = new Executor(host);
  }

  private get source(): WorkflowSource {
    const source = this.o.workflows();
    if (!source) throw new AppError("SERVICE_UNAVAILABLE", "workflows are not available yet; retry shortly");
    return source;
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Recovers unfinished runs and starts the timers. Idempotent; also called by the first run start, so an
   * app that never runs a workflow (most tests) never spawns threads. The worker pool starts with the first
   * run that executes, so an idle server holds no worker threads (idle RSS).
   */
  start(): Promise<void> {
    if (this.startPromise) return this.startPromise;
    // Recovery runs first and synchronously: nothing new can be queued before it, so no run is queued twice.
    this.recover();
    try {
      if (!this.o.db.inTransaction) this.retention.ensureIncrementalVacuum();
    } catch (error) {
      this.o.log.warn("could not switch the database to incremental vacuum", { error: errorMessage(error) });
    }
    this.retention.start();
    this.sweeper = setInterval(() => this.sweep(), 200);
    (this.sweeper as { unref?: () => void }).unref?.();
    return (this.startPromise = Promise.resolve());
  }

  /** Spawns the worker pool once and resolves when its fleet is known (or it failed: steps then run here). */
  private ensurePool(): Promise<void> {
    if (this.poolPromise) return this.poolPromise;
    const workers = this.o.workers ?? this.o.config.workers;
    if (workers <= 0 || this.stopping) {
      this.poolSettled = true;
      return (this.poolPromise = Promise.resolve());
    }
    const pool = new WorkerPool({
      size: workers,
      log: this.o.log,
      init: {
        t: "init",
        piecesDir: this.o.config.piecesDir,
        dbPath: this.o.dbPath ?? null,
        dbSynchronous: this.o.config.dbSynchronous,
        allowCidrs: this.o.config.allowedCidrs,
      },
    });
    this.pool = pool;
    this.poolPromise = pool
      .start()
      .catch(async (error) => {
        this.o.log.error("worker pool failed to start; steps run on the main thread", { error: errorMessage(error) });
        this.pool = undefined;
        await pool.stop();
      })
      .finally(() => {
        this.poolSettled = true;
      });
    return this.poolPromise;
  }

  private ensureStarted() {
    if (!this.startPromise) void this.start();
  }

  /** Stops taking runs, lets executing ones finish (up to `graceMs`), flushes writes and stops the pool. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.closing.abort();
    this.dispatcher.pause();
    const deadline = Date.now() + graceMs;
    while (this.active.size > 0 && Date.now() < deadline) await Bun.sleep(20);
    if (this.sweeper) clearInterval(this.sweeper);
    this.retention.stop();
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
    await this.writes.close();
    await this.pool?.stop();
  }

  /** Fires on shutdown: run event streams end so the HTTP server can stop. */
  readonly closing = new AbortController();

  closeStreams() {
    this.closing.abort();
  }

  get workerPool(): WorkerPool | undefined {
    return this.pool;
  }

  /** Runs executing or waiting in memory (for tests and the bench). */
  get load() {
    return { active: this.active.size, pending: this.dispatcher.pendingCount };
  }

  /** Called when a run ends: error workflows and run_finished triggers hang here. */
  onFinished(listener: (run: RunRow) => void) {
    this.finishedListeners.push(listener);
  }

  /** Called when a step replies to the webhook that started its run (webhook.respond). */
  onReply(listener: (runId: string, reply: WebhookReply) => void) {
    this.replyListeners.push(listener);
  }

  // ------------------------------------------------------------------ starting runs

  /** Content hash of a definition and its JSON, cached per published version and per parsed object. */
  private definitionHash(definition: FlowVersionT, versionId: string | null): { hash: string; text: string } {
    let hash = versionId ? this.hashByVersion.get(versionId) : undefined;
    hash ??= this.hashByObject.get(definition);
    let text = hash ? this.definitionTexts.recall(hash) : undefined;
    if (!hash || text === undefined) {
      text = JSON.stringify(definition);
      hash = sha256(text);
      this.hashByObject.set(definition, hash);
      if (versionId) this.hashByVersion.set(versionId, hash);
      this.definitionTexts.set(hash, text);
    }
    return { hash, text };
  }

  private prepare(input: StartRunInput, overrides: Partial<RunRow> = {}): { pending: PendingRun; definitionText: string } {
    const rw = this.source.forRun(input.workspaceId, input.workflowId, input.environment);
    const depth = input.parent ? input.parent.depth + 1 : 0;
    if (depth > MAX_SUBFLOW_DEPTH) {
      throw new AppError(
        "VALIDATION_FAILED",
        `sub-flow calls nest deeper than ${MAX_SUBFLOW_DEPTH} levels (workflow ${input.workflowId} would run at depth ${depth}); a workflow that calls itself needs a condition that stops the recursion`,
      );
    }
    const triggerOutput = normalizeTrigger(input);
    // Stored with every insert (INSERT OR IGNORE: one primary-key probe) so no run can point at a pruned definition.
    const { hash, text: definitionText } = this.definitionHash(rw.definition, rw.executedVersionId);
    const row: RunRow = {
      id: newId(),
      workspace_id: rw.workspaceId,
      org_id: rw.orgId,
      workflow_id: rw.workflowId,
      workflow_name: rw.name,
      workflow_trigger_type: rw.triggerType ?? rw.definition.trigger.type ?? null,
      status: "pending",
      trigger_type: input.triggerType,
      trigger_data: JSON.stringify(triggerOutput),
      environment: input.environment,
      version_id: rw.versionId,
      version_number: rw.versionNumber,
      executed_version_id: rw.executedVersionId,
      executed_version_number: rw.executedVersionNumber,
      definition_hash: hash,
      started_at: isoTime(Date.now()),
      finished_at: null,
      duration_ms: null,
      error_message: null,
      tags: "[]",
      started_from_step: null,
      retry_of_run_id: null,
      retried_by_run_id: null,
      step_total: 0,
      step_failed: 0,
      wait_step: null,
      resume_mode: null,
      resume_at: null,
      resume_token_hash: null,
      parent_run_id: input.parent?.runId ?? null,
      depth,
      state: null,
      response: null,
      event_seq: 0,
      ...overrides,
    };
    const pending: PendingRun = {
      id: row.id,
      workflowId: row.workflow_id,
      environment: row.environment,
      row,
      definition: rw.definition,
      variables: rw.variables,
      secrets: rw.secrets,
      pinned: rw.pinnedData,
      triggerOutput,
    };
    return { pending, definitionText };
  }

  /** Synchronous insert on this thread's connection (enqueue: inside the caller's transaction). */
  private insert(p: PendingRun, definitionText: string | null) {
    if (definitionText !== null) this.store.putDefinition(p.row.definition_hash, definitionText);
    this.store.insertRun(p.row);
  }

  private insertOps(p: PendingRun, definitionText: string | null): WriteOp[] {
    const ops: WriteOp[] = [];
    if (definitionText !== null) ops.push({ op: "putDefinition", hash: p.row.definition_hash, text: definitionText });
    ops.push({ op: "insertRun", row: { ...p.row } });
    return ops;
  }

  /** Writes a run's status change (or waits for a write that carries it); until it is committed, readers get the row from memory. */
  private async settle(row: RunRow, ops: QueuedOp[] | Promise<void>): Promise<void> {
    this.settling.set(row.id, row);
    try {
      await (Array.isArray(ops) ? this.writes.write(ops) : ops);
    } finally {
      if (this.settling.get(row.id) === row) this.settling.delete(row.id);
    }
  }

  /**
   * Starts a run: the pending row is committed (group commit) before this resolves, then it is queued.
   * Throws AppError NOT_FOUND / NOT_PUBLISHED before writing anything.
   */
  async startRun(input: StartRunInput): Promise<RunT> {
    return (await this.begin(input, true)).run!;
  }

  /**
   * startRun for callers that need only the new run's id (webhooks): no RunT snapshot is built. With
   * `keepReply`, a webhook.respond reply that comes before the caller's waitForReply is kept for it.
   */
  async startRunId(input: StartRunInput, options: { keepReply?: boolean } = {}): Promise<string> {
    return (await this.begin(input, false, options.keepReply === true)).id;
  }

  private async begin(input: StartRunInput, snapshot: boolean, keepReply = false): Promise<{ id: string; run?: RunT }> {
    if (this.stopping) throw new AppError("SERVICE_UNAVAILABLE", "the server is shutting down; retry shortly", undefined, undefined, { "retry-after": "1" });
    this.ensureStarted();
    const { pending, definitionText } = this.prepare(input);
    const row = pending.row;
    const started = snapshot ? runFromRow(row) : undefined;
    if (keepReply) this.awaitingReply.add(row.id);
    // The run executes while its insert waits for the group commit: a run of main-thread steps usually
    // ends before the batch is taken, and then its row is inserted once, finished, next to its step rows
    // (no `running` or finish update). The caller still answers only after that commit; a worker step
    // (side effects) waits for it too (invokeResolved).
    const committed = this.writes.write(this.lazyInsertOps(pending, definitionText));
    this.unacked.set(row.id, committed);
    this.queue(pending);
    this.stats.started++;
    try {
      await committed;
    } catch (error) {
      this.insertFailed(pending);
      this.awaitingReply.delete(row.id);
      this.replies.delete(row.id);
      throw error;
    } finally {
      this.unacked.delete(row.id);
    }
    return { id: row.id, run: started };
  }

  /** The pending insert as an op built at commit time: it carries the row as it stands then. */
  private lazyInsertOps(p: PendingRun, definitionText: string | null): QueuedOp[] {
    const ops: QueuedOp[] = [];
    if (definitionText !== null) ops.push({ op: "putDefinition", hash: p.row.definition_hash, text: definitionText });
    const row = p.row;
    // No copy: both writers bind or serialise the row in the same task that builds the batch.
    ops.push(() => {
      this.untaken.delete(row.id);
      this.insertedSeq.set(row, row.event_seq);
      return { op: "insertRun", row };
    });
    this.untaken.set(row.id, ops);
    return ops;
  }

  /** True when an insert already carried the row at `seq` or later: a patch up to `seq` has nothing to add. */
  private carried(row: RunRow, seq: number): boolean {
    const at = this.insertedSeq.get(row);
    return at !== undefined && at >= seq;
  }

  /** The insert of a run that had started executing failed: it stops, and nothing more of it is written. */
  private insertFailed(p: PendingRun) {
    const row = p.row;
    this.lost.add(row.id);
    this.active.get(row.id)?.stop("cancelled");
    if (this.pendingById.delete(row.id)) this.dispatcher.remove(p);
    setTimeout(() => this.lost.delete(row.id), 60_000).unref?.();
  }

  /**
   * Inserts the pending run synchronously, inside the caller's transaction when there is one (so a trigger's
   * own bookkeeping commits together with the run); it is queued once the current task ends.
   */
  enqueue(input: StartRunInput): RunT {
    this.ensureStarted();
    const { pending, definitionText } = this.prepare(input);
    this.insert(pending, definitionText);
    pending.verify = true;
    setImmediate(() => {
      if (!this.store.getRow(pending.id)) return; // the caller's transaction rolled back
      this.queue(pending);
    });
    this.stats.started++;
    return runFromRow(pending.row);
  }

  private queue(p: PendingRun) {
    this.pendingById.set(p.id, p);
    this.dispatcher.add(p, p.definition.settings ?? {});
  }

  /** A workflow's settings changed (publish, draft save): lanes re-read concurrencyLimit and maintenanceMode. */
  settingsChanged(workflowId: string, environment: Environment, settings: SettingsT | undefined) {
    this.dispatcher.setSettings(workflowId, environment, settings ?? {});
  }

  // ------------------------------------------------------------------ executing

  private async execute(p: PendingRun): Promise<void> {
    this.pendingById.delete(p.id);
    const row = p.row;
    if (row.status === "cancelled") {
      this.dispatcher.release(p);
      return;
    }
    const resumed = row.wait_step !== null || row.resume_mode !== null;
    row.status = "running";
    row.event_seq++;
    row.wait_step = null;
    row.resume_mode = null;
    row.resume_at = null;
    // Evaluated at commit time: a run that already ended in the same batch needs no `running` write.
    const runningSeq = row.event_seq;
    if (!this.untaken.has(row.id))
      this.writes.fire(() => {
        if (row.status !== "running" || this.carried(row, runningSeq) || this.lost.has(row.id)) return null;
        return {
          op: "patchRun",
          id: row.id,
          patch: resumed
            ? { status: "running", event_seq: row.event_seq, wait_step: null, resume_mode: null, resume_at: null }
            : { status: "running", event_seq: row.event_seq },
        };
      });
    this.emitRun(row);
    const exec = new RunExecution(row, p.definition, {
      timeoutMs: p.definition.settings?.timeoutSeconds ? p.definition.settings.timeoutSeconds * 1000 : this.limits.timeoutMs,
      activeMsBefore: p.activeMsBefore,
      replay: p.replay,
      resume: p.resume,
      secrets: p.secrets,
      triggerOutput: p.triggerOutput,
    });
    exec.context.variables = p.variables;
    (exec as RunExecution & { pinned?: Record<string, unknown> }).pinned = p.pinned;
    this.active.set(row.id, exec);
    let outcome: RunOutcome;
    try {
      outcome = await this.executor.execute(exec);
    } catch (error) {
      outcome = { kind: "failed", message: `internal error: ${errorMessage(error)}` };
    }
    this.active.delete(row.id);
    if (this.lost.has(row.id)) {
      this.dispatcher.release(p);
      return;
    }
    try {
      if (outcome.kind === "paused") await this.pause(exec, outcome);
      else await this.finish(row, outcome, exec.stepsComplete ? exec.steps : undefined);
    } catch (error) {
      this.o.log.error("could not record the end of a run", { runId: row.id, error: errorMessage(error) });
    } finally {
      this.dispatcher.release(p);
    }
  }

  private emitRun(row: RunRow) {
    this.events.emit(row.id, () => ({ type: "run", id: row.event_seq, run: this.withWait(runFromRow(row)) }));
  }

  /** The run as shown, with the wait of its running step if it has one. */
  withWait(run: RunT): RunT {
    if (run.status === "pending") {
      // Held back by the dispatcher: a concurrency limit, maintenance mode or the engine's ceiling.
      const reason = this.pendingById.has(run.id)
        ? this.dispatcher.waitingReason({ id: run.id, workflowId: run.workflowId, environment: run.environment as Environment })
        : undefined;
      return reason ? { ...run, waiting: { step: "", reason, since: run.startedAt } } : run;
    }
    const wait = this.waits.get(run.id);
    return wait && run.status === "running" ? { ...run, waiting: wait } : run;
  }

  /** A step says it waits (reason) or goes on (null): the run shows it, and its stream gets a run event (same id: nothing new is stored). */
  private stepWaiting(run: RunExecution, step: string, reason: string | null) {
    const id = run.row.id;
    if (reason === null) {
      if (!this.waits.delete(id)) return;
    } else {
      this.waits.set(id, { step, reason, since: new Date().toISOString() });
    }
    this.emitRun(run.row);
  }

  private async finish(row: RunRow, outcome: Exclude<RunOutcome, { kind: "paused" }>, steps?: StepRow[]) {
    const now = new Date();
    const wasPaused = row.state !== null || row.resume_token_hash !== null || row.wait_step !== null;
    row.status = outcome.kind;
    row.finished_at = isoTime(now.getTime());
    row.duration_ms = Math.max(0, now.getTime() - Date.parse(row.started_at));
    row.error_message = outcome.kind === "failed" ? outcome.message : outcome.kind === "cancelled" ? (row.error_message ?? "cancelled") : null;
    row.event_seq++;
    // Only what changed is written: the common case is five columns.
    const patch: RunPatch = {
      status: row.status,
      finished_at: row.finished_at,
      duration_ms: row.duration_ms,
      step_total: row.step_total,
      event_seq: row.event_seq,
    };
    if (row.error_message !== null) patch.error_message = row.error_message;
    if (row.step_failed > 0) patch.step_failed = row.step_failed;
    if (row.tags !== "[]") patch.tags = row.tags;
    if (row.response !== null) patch.response = row.response;
    if (wasPaused) Object.assign(patch, { state: null, wait_step: null, resume_mode: null, resume_at: null, resume_token_hash: null });
    row.state = null;
    row.wait_step = null;
    row.resume_mode = null;
    row.resume_at = null;
    row.resume_token_hash = null;
    const seq = row.event_seq;
    // Remembered now, read only once the end is committed (until then `settling` answers for the run).
    this.recent.set(row.id, { row, steps });
    // Not inserted yet: the insert carries the ended row, and its commit is the one to wait for (a failed
    // insert is the starter's error; the run was stopped and nothing more of it is written).
    const insert = this.untaken.has(row.id) ? this.unacked.get(row.id) : undefined;
    await this.settle(
      row,
      insert ? insert.catch(() => {}) : [() => (this.carried(row, seq) || this.lost.has(row.id) ? null : { op: "patchRun", id: row.id, patch })],
    );
    this.ended(row, steps);
  }

  /** After the final write committed: streams, waiters and follow-up listeners learn the run ended. */
  private ended(row: RunRow, steps?: StepRow[]) {
    this.stats.finished++;
    if (this.waits.size) this.waits.delete(row.id);
    this.emitRun(row);
    this.events.emit(row.id, () => ({ type: "end", id: row.event_seq + 1, run: runFromRow(row) }));
    const waiters = this.endWaiters.get(row.id);
    if (waiters) {
      this.endWaiters.delete(row.id);
      for (const waiter of waiters) waiter(row, steps);
    }
    for (const listener of this.finishedListeners) {
      try {
        listener(row);
      } catch (error) {
        this.o.log.warn("run-finished listener failed", { runId: row.id, error: errorMessage(error) });
      }
    }
  }

  private async pause(exec: RunExecution, outcome: Extract<RunOutcome, { kind: "paused" }>) {
    const row = exec.row;
    row.status = "paused";
    row.wait_step = outcome.stepName;
    row.resume_mode = outcome.mode;
    row.resume_at = outcome.resumeAt;
    row.resume_token_hash = outcome.resumeToken ? sha256(outcome.resumeToken) : null;
    const state: PauseState = { log: exec.log, activeMs: exec.activeMs() };
    row.state = JSON.stringify(state);
    row.event_seq++;
    const patch = {
      status: row.status,
      wait_step: row.wait_step,
      resume_mode: row.resume_mode,
      resume_at: row.resume_at,
      resume_token_hash: row.resume_token_hash,
      state: row.state,
      tags: row.tags,
      response: row.response,
      step_total: row.step_total,
      step_failed: row.step_failed,
      event_seq: row.event_seq,
    };
    await this.settle(row, [{ op: "patchRun", id: row.id, patch }]);
    this.emitRun(row);
    if (row.resume_at) this.scheduleResume(row.id, row.resume_at);
  }

  // ------------------------------------------------------------------ the executor's host

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
    const version = this.o.pieces.get(pieceId)?.version;
    // A piece registered in this process only (not loadable by workers) runs here.
    return version !== undefined && this.pool.serves(pieceId, version);
  }

  private pendingPinned(run: RunExecution, stepName: string): { found: boolean; output?: unknown } {
    const pinned = (run as RunExecution & { pinned?: Record<string, unknown> }).pinned;
    if (!pinned || run.row.environment !== "test" || !Object.hasOwn(pinned, stepName)) return { found: false };
    return { found: true, output: pinned[stepName] };
  }

  private invoke(run: RunExecution, call: StepCall): ActionOutcome | Promise<ActionOutcome> {
    return call.node.connectionId ? this.invokeWithAuth(run, call) : this.invokeResolved(run, call, undefined);
  }

  private async invokeWithAuth(run: RunExecution, call: StepCall): Promise<ActionOutcome> {
    const row = run.row;
    const resolve = this.o.resolveAuth?.();
    if (!resolve) return { kind: "error", message: "connections are not available in this server", effects: { tags: [] } };
    let auth: ResolvedAuth;
    try {
      auth = await resolve({ workspaceId: row.workspace_id, connectionId: call.node.connectionId!, pieceId: call.node.pieceId ?? "" });
    } catch (error) {
      return { kind: "error", message: errorMessage(error), effects: { tags: [] } };
    }
    for (const secret of secretsOf(auth)) if (!run.secrets.includes(secret)) run.secrets.push(secret);
    return this.invokeResolved(run, call, auth);
  }

  private invokeResolved(run: RunExecution, call: StepCall, auth: ResolvedAuth | undefined): ActionOutcome | Promise<ActionOutcome> {
    // The worker pool starts with the first step that may need it (a server running only pure steps never
    // spawns worker threads); which pieces the workers serve is known once it is ready.
    if (!this.poolSettled && this.hasSideEffects(call.node.pieceId ?? "", call.action)) {
      return this.ensurePool().then(() => this.invokeResolved(run, call, auth));
    }
    const row = run.row;
    const runInfo = {
      id: row.id,
      workflowId: row.workflow_id,
      workspaceId: row.workspace_id,
      environment: row.environment,
      stepName: call.node.name,
      depth: row.depth,
    };
    const onReply = (reply: WebhookReply) => this.reply(row.id, reply);
    const callWorkflow = (sub: SubflowCall) => this.callWorkflow(run, sub);
    const pieceId = call.node.pieceId ?? "";
    if (this.needsWorker(pieceId, call.action)) {
      this.stats.workerSteps++;
      return this.pool!.run(
        { pieceId, actionId: call.action.id, config: call.config, auth, run: runInfo, resumePayload: call.resumePayload, publicUrl: this.o.config.publicUrl },
        run.abort.signal,
        { onReply, onCall: callWorkflow, onLog: (message, fields) => this.o.log.debug(message, { runId: row.id, step: call.node.name, ...fields }) },
      );
    }
    this.stats.inlineSteps++;
    const result = invokeAction(call.action, {
      config: call.config,
      auth,
      run: runInfo,
      signal: () => run.abort.signal,
      fetch: this.o.fetch?.() ?? (this.ownFetch ??= createGuardedFetch({ allowCidrs: this.o.config.allowedCidrs })),
      store: () => this.storeFor(row.workspace_id),
      log: (message, fields) => this.o.log.debug(message, { runId: row.id, step: call.node.name, ...fields }),
      resumePayload: call.resumePayload,
      publicUrl: this.o.config.publicUrl,
      callWorkflow,
      onReply,
      onWaiting: (reason) => this.stepWaiting(run, call.node.name, reason),
    });
    return result instanceof Promise ? Promise.race([result, run.stopped]) : result;
  }

  private storeFor(workspaceId: string): KeyValueStore {
    this.kv ??= new KvStore(this.o.db);
    return this.kv.forWorkspace(workspaceId);
  }

  /** Step rows are written as they finish; the run's counters are written when it ends or pauses (readers of a running run get them from memory). */
  private writeStep(run: RunExecution, row: StepRow, update: boolean, durable = false): void | Promise<void> {
    const op: WriteOp = { op: update ? "updateStep" : "insertStep", row };
    const runId = run.row.id;
    let committed: Promise<void> | undefined;
    const insert = durable ? undefined : this.untaken.get(runId);
    if (insert)
      insert.push(op); // committed with the run's insert, and fails with it
    else {
      // Steps of a run whose insert is not committed yet are dropped if that insert fails (insertFailed).
      const queued: QueuedOp = this.unacked.has(runId) ? () => (this.lost.has(runId) ? null : op) : op;
      if (durable) committed = this.writes.write([queued]);
      else this.writes.fire(queued);
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
    this.events.emit(run.row.id, () => ({ type: "step", id: row.seq, step: stepFromRow(row) }));
    return committed;
  }

  private applyEffects(run: RunExecution, effects: StepEffects) {
    if (effects.tags.length > 0) {
      const tags = JSON.parse(run.row.tags) as string[];
      for (const tag of effects.tags) if (!tags.includes(tag)) tags.push(tag);
      run.row.tags = JSON.stringify(tags.slice(0, 100));
    }
    if (effects.response) run.row.response = JSON.stringify(effects.response.value ?? null);
  }

  private reply(runId: string, reply: WebhookReply) {
    const waiters = this.replyWaiters.get(runId);
    if (waiters) {
      this.replyWaiters.delete(runId);
      for (const waiter of waiters) waiter(reply);
    } else if (this.awaitingReply.has(runId) && !this.replies.has(runId)) {
      this.replies.set(runId, reply);
    }
    for (const listener of this.replyListeners) listener(runId, reply);
  }

  private async callWorkflow(parent: RunExecution, call: SubflowCall): Promise<SubflowResult> {
    const row = parent.row;
    if (row.depth + 1 > MAX_SUBFLOW_DEPTH) {
      throw new Error(
        `sub-flow depth limit reached: this run is already ${row.depth} levels deep and the limit is ${MAX_SUBFLOW_DEPTH}; a workflow that calls itself needs a condition that ends the recursion`,
      );
    }
    let child: RunT;
    try {
      child = await this.startRun({
        workspaceId: row.workspace_id,
        workflowId: call.workflowId,
        environment: row.environment,
        triggerType: "subflow",
        input: call.payload,
        parent: { runId: row.id, depth: row.depth },
      });
    } catch (error) {
      throw new Error(`could not start workflow ${call.workflowId}: ${errorMessage(error)}`);
    }
    if (!call.wait) return { runId: child.id, status: child.status };
    const finished = await this.waitForRow(child.id, Math.max(0, parent.deadline - Date.now()), parent.abort.signal);
    if (parent.abort.signal.aborted && (!finished || !FINISHED.has(finished.status))) {
      // The caller was cancelled or timed out while waiting: nobody will take the sub-flow's result, so it
      // is cancelled too (and its own waited-for sub-flows with it). A sub-flow started without wait runs on.
      void this.cancel(row.workspace_id, child.id).catch((error) =>
        this.o.log.warn("could not cancel a sub-flow run", { runId: child.id, error: errorMessage(error) }),
      );
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

  // ------------------------------------------------------------------ waiting

  /** The run's row when it finished within `ms`, else its row as it stands (null when unknown). */
  private async waitForRow(runId: string, ms: number, signal?: AbortSignal): Promise<RunRow | null> {
    return (await this.waitForEnd(runId, ms, signal)).row;
  }

  /** Like waitForRow; when the run ended while waiting, also its step rows as held in memory. */
  private waitForEnd(runId: string, ms: number, signal?: AbortSignal): Promise<{ row: RunRow | null; steps?: StepRow[] }> {
    const row = this.rowNow(runId);
    // A run whose end is still being committed is waited for: its step rows are not all readable yet.
    if (!row || (FINISHED.has(row.status) && !this.settling.has(runId)) || ms <= 0) {
      const recent = this.recent.get(runId);
      return Promise.resolve({ row, steps: recent && recent.row === row ? recent.steps : undefined });
    }
    return new Promise((resolve) => {
      let set = this.endWaiters.get(runId);
      if (!set) {
        set = new Set();
        this.endWaiters.set(runId, set);
      }
      const done = (finished: RunRow | null, steps?: StepRow[]) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set!.delete(waiter);
        if (set!.size === 0 && this.endWaiters.get(runId) === set) this.endWaiters.delete(runId);
        resolve({ row: finished ?? this.rowNow(runId), steps });
      };
      const waiter = (finished: RunRow, steps?: StepRow[]) => done(finished, steps);
      const onAbort = () => done(null);
      const timer = setTimeout(() => done(null), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(waiter);
    });
  }

  /** The freshest row of a run of `workspaceId` (in memory while it executes), or null. */
  row(workspaceId: string, runId: string): RunRow | null {
    const row = this.rowNow(runId);
    return row && row.workspace_id === workspaceId ? row : null;
  }

  /** The freshest row: the executing run's in-memory row, else the database (after pending writes). */
  private rowNow(runId: string): RunRow | null {
    const live = this.active.get(runId)?.row ?? this.pendingById.get(runId)?.row;
    if (live) return live;
    return this.settling.get(runId) ?? this.recent.get(runId)?.row ?? this.store.getRow(runId);
  }

  /** Waits up to `ms` for the run to finish; returns it finished, or as it stands. */
  async waitFor(runId: string, ms: number): Promise<RunT | null> {
    const row = await this.waitForRow(runId, ms);
    return row ? runFromRow(row) : null;
  }

  /** Waits up to `ms`; a run that finished comes with its steps in execution order. */
  async waitForResult(workspaceId: string, runId: string, ms: number): Promise<RunT | null> {
    const { row, steps } = await this.waitForEnd(runId, ms);
    if (!row || row.workspace_id !== workspaceId) return null;
    const run = runFromRow(row);
    if (!FINISHED.has(row.status)) return run;
    return { ...run, steps: (steps ?? this.store.steps(runId)).map(stepFromRow) };
  }

  /**
   * For synchronous webhooks: resolves with the first `webhook.respond` reply, or with the run when it
   * ends without one, or with `timedOut` after `ms`.
   */
  waitForReply(runId: string, ms: number): Promise<{ reply?: WebhookReply; run: RunT | null; timedOut: boolean }> {
    // With a reply the caller rarely needs the run: it is read (from the database, once the run ended) only when asked for.
    const withReply = (reply: WebhookReply) => {
      const engine = this;
      return {
        reply,
        timedOut: false,
        get run() {
          return engine.current(runId);
        },
      };
    };
    this.awaitingReply.delete(runId);
    const early = this.replies.get(runId);
    if (early) {
      this.replies.delete(runId);
      return Promise.resolve(withReply(early));
    }
    const row = this.rowNow(runId);
    if (!row || FINISHED.has(row.status)) return Promise.resolve({ run: row ? runFromRow(row) : null, timedOut: false });
    return new Promise((resolve) => {
      let replySet = this.replyWaiters.get(runId);
      if (!replySet) {
        replySet = new Set();
        this.replyWaiters.set(runId, replySet);
      }
      let endSet = this.endWaiters.get(runId);
      if (!endSet) {
        endSet = new Set();
        this.endWaiters.set(runId, endSet);
      }
      const cleanup = () => {
        clearTimeout(timer);
        replySet!.delete(onReply);
        endSet!.delete(onEnd);
        if (replySet!.size === 0 && this.replyWaiters.get(runId) === replySet) this.replyWaiters.delete(runId);
        if (endSet!.size === 0 && this.endWaiters.get(runId) === endSet) this.endWaiters.delete(runId);
      };
      const onReply = (reply: WebhookReply) => {
        cleanup();
        resolve(withReply(reply));
      };
      const onEnd = (finished: RunRow) => {
        cleanup();
        resolve({ run: runFromRow(finished), timedOut: false });
      };
      const timer = setTimeout(() => {
        cleanup();
        resolve({ run: this.current(runId), timedOut: true });
      }, ms);
      replySet.add(onReply);
      endSet.add(onEnd);
    });
  }

  /** The value a run's `subflows.return_response` step set (null when none), e.g. for callable tools. */
  responseOf(runId: string): unknown {
    const text = this.rowNow(runId)?.response;
    return text === null || text === undefined ? null : JSON.parse(text);
  }

  /** The run as it stands now (in-memory when executing). */
  current(runId: string): RunT | null {
    const row = this.rowNow(runId);
    return row ? runFromRow(row) : null;
  }

  // ------------------------------------------------------------------ cancel, resume, retry

  /** Cancels a pending, running or paused run; a finished run is refused (409) unless already cancelled. */
  async cancel(workspaceId: string, runId: string): Promise<RunT> {
    const row = this.rowNow(runId);
    if (!row || row.workspace_id !== workspaceId) throw notFound(`run ${runId}`);
    if (row.status === "cancelled") return runFromRow(row);
    if (FINISHED.has(row.status)) {
      throw new AppError(
        "CONFLICT",
        `run ${runId} already ${row.status}; only pending, running or paused runs can be cancelled (retry it with POST /api/runs/${runId}/retry)`,
      );
    }
    const exec = this.active.get(runId);
    if (exec) {
      exec.stop("cancelled");
      const finished = await this.waitForRow(runId, 10_000);
      return runFromRow(finished ?? row);
    }
    const pending = this.pendingById.get(runId);
    if (pending) {
      this.dispatcher.remove(pending);
      this.pendingById.delete(runId);
      pending.row.status = "cancelled";
    }
    this.clearResume(runId);
    const target = pending?.row ?? row;
    target.error_message = "cancelled";
    await this.finish(target, { kind: "cancelled" });
    return runFromRow(target);
  }

  private scheduleResume(runId: string, resumeAt: string) {
    this.clearResume(runId);
    const delay = Math.max(0, Date.parse(resumeAt) - Date.now());
    // setTimeout holds at most ~24.8 days; longer waits re-arm when the first timer fires.
    const timer = setTimeout(
      () => {
        this.resumeTimers.delete(runId);
        if (Date.parse(resumeAt) > Date.now() + 1000) return this.scheduleResume(runId, resumeAt);
        void this.resumeByTimer(runId).catch((error) => this.o.log.error("resume failed", { runId, error: errorMessage(error) }));
      },
      Math.min(delay, 2_000_000_000),
    );
    (timer as { unref?: () => void }).unref?.();
    this.resumeTimers.set(runId, timer);
  }

  private clearResume(runId: string) {
    const timer = this.resumeTimers.get(runId);
    if (timer) clearTimeout(timer);
    this.resumeTimers.delete(runId);
  }

  private async resumeByTimer(runId: string) {
    const row = this.store.getRow(runId);
    if (!row || row.status !== "paused") return;
    // A time pause continues; an approval that nobody decided in time continues as expired.
    const payload = row.resume_mode === "webhook" ? { decision: "expired", expired: true } : { resumedBy: "timer" };
    await this.resume(row, payload);
  }

  /** A resume link (approval) was opened: the token is the credential, compared in constant time. */
  async resumeByToken(runId: string, token: string, payload: Record<string, unknown>): Promise<RunT> {
    const row = this.rowNow(runId);
    const valid =
      row && row.status === "paused" && row.resume_mode === "webhook" && row.resume_token_hash !== null && safeEqual(row.resume_token_hash, sha256(token));
    if (!valid) throw new AppError("NOT_FOUND", "no paused run waits for this link: it was already used, expired, or the run was cancelled");
    this.clearResume(runId);
    await this.resume(row, payload);
    return runFromRow(row);
  }

  /** Queues a paused run again: it replays its recorded steps and resumes the paused one with `payload`. */
  private async resume(row: RunRow, payload: Record<string, unknown>) {
    const state = row.state ? (JSON.parse(row.state) as PauseState) : { log: [], activeMs: 0 };
    const definition = this.definitionOf(row);
    const { variables, secrets } = this.variablesOf(row, definition);
    row.status = "pending";
    row.resume_token_hash = null;
    row.event_seq++;
    const seq = row.event_seq;
    // The payload (an approval's decision) is kept with the state: the link works once, so a restart before the
    // resumed step finished must resume it with the same decision (recover reads state.payload).
    row.state = JSON.stringify({ ...state, payload } satisfies PauseState);
    await this.settle(row, [{ op: "patchRun", id: row.id, patch: { status: "pending", resume_token_hash: null, event_seq: seq, state: row.state } }]);
    this.emitRun(row);
    this.queue({
      id: row.id,
      workflowId: row.workflow_id,
      environment: row.environment,
      row,
      definition,
      variables,
      secrets,
      pinned: {},
      triggerOutput: JSON.parse(row.trigger_data),
      replay: state.log,
      resume: { payload },
      activeMsBefore: state.activeMs,
    });
  }

  private definitionOf(row: RunRow): FlowVersionT {
    const text = this.store.definition(row.definition_hash);
    if (!text) throw new AppError("INTERNAL", `the definition run ${row.id} executed (${row.definition_hash}) is missing`);
    return JSON.parse(text) as FlowVersionT;
  }

  private variablesOf(row: RunRow, definition: FlowVersionT): { variables: Record<string, unknown>; secrets: string[] } {
    try {
      return this.source.variablesFor(row.workflow_id, definition);
    } catch {
      return { variables: definition.variables ?? {}, secrets: [] };
    }
  }

  /**
   * Retries a finished run as a new run. `from: failed_step` reuses the recorded outputs of the steps
   * before the failure (copied into the new run) and executes from the failed step on; `start` runs all.
   * `version: original` executes the same definition; `latest` the live version (production) or the draft (test).
   */
  async retry(workspaceId: string, runId: string, options: { from?: "failed_step" | "start"; version?: "original" | "latest" }): Promise<RunT> {
    const from = options.from ?? "failed_step";
    const version = options.version ?? "original";
    const original = this.rowNow(runId);
    if (!original || original.workspace_id !== workspaceId) throw notFound(`run ${runId}`);
    if (!FINISHED.has(original.status)) {
      throw new AppError(
        "CONFLICT",
        `run ${runId} is ${original.status}; only a finished run (completed, failed or cancelled) can be retried — cancel it first (POST /api/runs/${runId}/cancel)`,
      );
    }
    if (from === "failed_step" && original.status !== "failed") {
      throw new AppError(
        "VALIDATION_FAILED",
        `run ${runId} ${original.status === "completed" ? "completed" : "was cancelled"}, so it has no failed step to retry from; use "from": "start" (allowed: failed_step, start)`,
      );
    }
    let replay: ReplayEntry[] = [];
    let copied: StepRow[] = [];
    let startedFromStep: string | null = null;
    if (from === "failed_step") {
      const rows = this.store.steps(runId);
      let failAt = -1;
      for (let i = rows.length - 1; i >= 0; i--)
        if (rows[i]!.status === "failed") {
          failAt = i;
          break;
        }
      if (failAt < 0) failAt = rows.length - 1;
      startedFromStep = failAt >= 0 ? rows[failAt]!.node_id : null;
      const before = rows.slice(0, Math.max(0, failAt)).filter((r) => r.status === "completed" || r.status === "skipped" || r.status === "failed");
      const truncated = before.find((r) => r.output_truncated);
      if (truncated) {
        throw new AppError(
          "VALIDATION_FAILED",
          `step "${truncated.node_id}" of run ${runId} stored only a truncated output (over WEFT_STEP_OUTPUT_LIMIT), so its result cannot be reused; retry with "from": "start"`,
        );
      }
      copied = before;
      replay = before.map((r) => ({
        nodeId: r.node_id,
        stepId: r.id,
        status: r.status,
        output: r.output_data === null ? null : JSON.parse(r.output_data),
        error: r.error_message,
      }));
    }
    const input: StartRunInput = {
      workspaceId,
      workflowId: original.workflow_id,
      environment: original.environment,
      triggerType: original.trigger_type as RunTriggerType,
      triggerData: JSON.parse(original.trigger_data),
      parent: original.parent_run_id ? { runId: original.parent_run_id, depth: original.depth - 1 } : undefined,
    };
    let prepared: { pending: PendingRun; definitionText: string | null };
    if (version === "latest") {
      prepared = this.prepare(input, { retry_of_run_id: runId, started_from_step: startedFromStep });
    } else {
      const definition = this.definitionOf(original);
      const { variables, secrets } = this.variablesOf(original, definition);
      const row: RunRow = {
        ...original,
        id: newId(),
        status: "pending",
        started_at: new Date().toISOString(),
        finished_at: null,
        duration_ms: null,
        error_message: null,
        tags: "[]",
        started_from_step: startedFromStep,
        retry_of_run_id: runId,
        retried_by_run_id: null,
        step_total: 0,
        step_failed: 0,
        wait_step: null,
        resume_mode: null,
        resume_at: null,
        resume_token_hash: null,
        state: null,
        response: null,
        event_seq: 0,
      };
      prepared = {
        pending: {
          id: row.id,
          workflowId: row.workflow_id,
          environment: row.environment,
          row,
          definition,
          variables,
          secrets,
          pinned: {},
          triggerOutput: JSON.parse(row.trigger_data),
        },
        definitionText: this.store.definition(original.definition_hash),
      };
    }
    const { pending, definitionText } = prepared;
    const newRow = pending.row;
    const copies = copied.map((r, i) => ({ ...r, id: newId(), run_id: newRow.id, seq: i + 1 }));
    replay = replay.map((entry, i) => ({ ...entry, stepId: copies[i]!.id }));
    newRow.step_total = copies.length;
    newRow.step_failed = copies.filter((r) => r.status === "failed").length;
    newRow.event_seq = copies.length;
    pending.replay = replay;
    await this.writes.write([
      ...this.insertOps(pending, definitionText),
      ...copies.map((copy): WriteOp => ({ op: "insertStep", row: copy })),
      { op: "patchRun", id: runId, patch: { retried_by_run_id: newRow.id } },
    ]);
    original.retried_by_run_id = newRow.id;
    this.queue(pending);
    return runFromRow(newRow);
  }

  // ------------------------------------------------------------------ recovery and timers

  /** Start-up: pending runs are queued again in order, paused ones get their timers, running ones resume or fail. */
  private recover() {
    for (const row of this.store.unfinished()) {
      try {
        if (row.status === "paused") {
          if (row.resume_at) this.scheduleResume(row.id, row.resume_at);
          continue;
        }
        const definition = this.definitionOf(row);
        const { variables, secrets } = this.variablesOf(row, definition);
        const base = {
          id: row.id,
          workflowId: row.workflow_id,
          environment: row.environment,
          row,
          definition,
          variables,
          secrets,
          pinned: {},
          triggerOutput: JSON.parse(row.trigger_data),
        };
        if (row.status === "pending") {
          const state = row.state ? (JSON.parse(row.state) as PauseState & { payload?: Record<string, unknown> }) : undefined;
          this.queue(
            state ? { ...base, replay: state.log, resume: { payload: state.payload ?? { resumedBy: "restart" } }, activeMsBefore: state.activeMs } : base,
          );
          continue;
        }
        this.recoverRunning(row, base);
      } catch (error) {
        this.o.log.error("could not recover run", { runId: row.id, error: errorMessage(error) });
        row.error_message = `interrupted by a restart and could not be resumed: ${errorMessage(error)}`;
        void this.finish(row, { kind: "failed", message: row.error_message });
      }
    }
  }

  private recoverRunning(row: RunRow, base: PendingRun) {
    const steps = this.store.steps(row.id);
    let interrupted = steps.find((s) => s.status === "running");
    // A step that only reads (sideEffects "read") is safe to repeat: it runs again, once. The mark of that
    // retry (retry_count 1 on its running row) is committed first, so a second restart fails the run instead.
    let retry: StepRow | undefined;
    if (interrupted && interrupted.retry_count === 0 && this.o.pieces.action(interrupted.piece_id ?? "", interrupted.action_id ?? "")?.sideEffects === "read") {
      retry = { ...interrupted, retry_count: 1 };
      this.writes.fire({ op: "updateStep", row: retry });
      interrupted = undefined;
    }
    const truncated = steps.find((s) => s.output_truncated && s.status !== "running");
    if (interrupted || truncated) {
      const message = interrupted
        ? `interrupted by a restart while step "${interrupted.node_id}" was running; it may have partly happened, so it is not repeated automatically — retry the run (POST /api/runs/${row.id}/retry)`
        : `interrupted by a restart; step "${truncated!.node_id}" stored only a truncated output, so the run cannot resume — retry it (POST /api/runs/${row.id}/retry with "from": "start")`;
      if (interrupted) {
        const failed: StepRow = { ...interrupted, status: "failed", error_message: "interrupted by a restart", finished_at: new Date().toISOString() };
        this.writes.fire({ op: "updateStep", row: failed });
      }
      row.step_total = steps.length;
      row.step_failed = steps.filter((s) => s.status === "failed").length + (interrupted ? 1 : 0);
      row.event_seq = Math.max(row.event_seq, ...steps.map((s) => s.seq));
      void this.finish(row, { kind: "failed", message });
      return;
    }
    // Every recorded step finished: replay them and continue with the next one (nothing runs twice).
    row.step_total = steps.length;
    row.step_failed = steps.filter((s) => s.status === "failed").length;
    row.event_seq = Math.max(row.event_seq, ...steps.map((s) => s.seq), 0);
    row.status = "pending";
    this.writes.fire({
      op: "patchRun",
      id: row.id,
      patch: { status: "pending", step_total: row.step_total, step_failed: row.step_failed, event_seq: row.event_seq },
    });
    const state = row.state ? (JSON.parse(row.state) as PauseState) : undefined;
    // A step still `paused` was being resumed when the process died: it is resumed again with the same payload.
    const resumedStep = steps.some((s) => s.status === "paused");
    this.queue({
      ...base,
      replay: steps.map((s) =>
        s === retry || s.id === retry?.id
          ? { nodeId: s.node_id, stepId: s.id, status: "retry", output: null, error: null }
          : { nodeId: s.node_id, stepId: s.id, status: s.status, output: s.output_data === null ? null : JSON.parse(s.output_data), error: s.error_message },
      ),
      activeMsBefore: state?.activeMs,
      ...(resumedStep ? { resume: { payload: state?.payload ?? { resumedBy: "restart" } } } : {}),
    });
  }

  /** Enforces run time limits (the executor also checks between steps). */
  private sweep() {
    const now = Date.now();
    for (const exec of this.active.values()) if (!exec.stopReason && now > exec.deadline) exec.stop("timeout");
  }
}

/** The trigger's output always has `body` (DESIGN.md §3). */
function normalizeTrigger(input: StartRunInput): Record<string, unknown> {
  const data = input.triggerData;
  if (data && typeof data === "object" && !Array.isArray(data) && "body" in data) {
    return { ...data, headers: data.headers ?? {}, query: data.query ?? {} };
  }
  const body = input.input !== undefined ? input.input : (data ?? {});
  return { body: body ?? {}, headers: {}, query: {} };
}

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
