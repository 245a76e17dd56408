/**
 * The engine: a run is a row first. Every start inserts a `pending` run (group-committed before the caller
 * answers), the dispatcher hands runs to execution in order under each workflow's concurrencyLimit and
 * maintenanceMode, the executor walks the tree — pure steps on this thread, others on the worker pool — and
 * step rows are written as they finish, in batched commits. Pauses free the run's slot and resume on a timer
 * or a resume link, also after a restart; runs left `running` by a crash are resumed from their recorded
 * steps or failed with a clear message.
 *
 * This file builds the parts and is the one door the rest of Weft uses. Where each part lives:
 *   run-start.ts      starting runs (startRun, startRunId, enqueue)
 *   dispatcher.ts     lanes: order, concurrencyLimit, maintenanceMode, the engine's ceiling
 *   run-queue.ts      the runs queued here, by id, in the dispatcher's lanes
 *   run-lifecycle.ts  a dispatched run from running to paused or finished
 *   executor.ts       walking a run's tree; step-host.ts places and invokes each step
 *   waiters.ts        waiting for a run's end or a webhook reply
 *   run-control.ts    cancel and retry
 *   resumes.ts        paused runs coming back (timers, resume links)
 *   recovery.ts       start-up recovery of unfinished runs
 *   claims.ts         a cluster: runs taken over from instances that died, and from the shared queue
 *   cluster-links.ts  a cluster: what crosses instances on the bus (cancel, streams, wake-ups, replies)
 *   run-table.ts      what the parts share: the index of runs held in memory, events, limits, options;
 *                     src/store/run-writes.ts the group commit
 */
import { errorMessage } from "./invoke-action";
import type { Clock } from "../lib/clock";
import type { RunT } from "../schema/run";
import type { Environment } from "../schema/run";
import type { FlowVersionT, SettingsT } from "../schema/workflow";
import type { RunListFilter, RunPage, RunRow, StepRow } from "../store/run-rows";
import { storageOf } from "../store/storage";
import type { Storage } from "../store/port";
import { Claims } from "./claims";
import { ClusterLinks } from "./cluster-links";
import { Dispatcher } from "./dispatcher";
import { Executor } from "./executor";
import type { WorkerPool } from "./pool";
import { recoverRuns } from "./recovery";
import { Resumes } from "./resumes";
import { Retention } from "./retention";
import { type RetryOptions, RunControl } from "./run-control";
import { ExecutingRuns } from "./run-execution";
import { RunLifecycle } from "./run-lifecycle";
import { RunQueue } from "./run-queue";
import { RunStarter, type StartRunInput } from "./run-start";
import { type EngineOptions, type PendingRun, RunTable } from "./run-table";
import type { RunWrites } from "../store/run-writes";
import { openRunReads, type RunReads } from "../store/run-reads";
import type { HourCount, RunCountFilter } from "../store/run-read-repository";
import { openRunWriter } from "../store/run-writer";
import type { WorkflowRepository } from "../store/workflows";
import type { WebhookReply } from "./step-context";
import { StepHost } from "./step-host";
import { type ReplyResult, Waiters } from "./waiters";

export type { EngineOptions } from "./run-table";
export { MAX_SUBFLOW_DEPTH, type StartRunInput } from "./run-start";

export class Engine {
  /**
   * Group-committed run and step writes (on a writer thread when the database is a file). Private: outside the
   * engine, runs are read and waited for through the methods below (docs/architecture.md, "Engine").
   */
  private readonly writes: RunWrites;
  /** List pages and run details, read on reader threads (store/run-reads.ts). */
  private readonly reads: RunReads;
  readonly dispatcher: Dispatcher<PendingRun>;
  readonly retention: Retention;
  /** What the engine reads the time from and waits on (EngineOptions.clock; docs/architecture.md, "Time"). */
  get clock(): Clock {
    return this.table.clock;
  }
  /** Fires on shutdown: run event streams end so the HTTP server can stop. */
  readonly closing = new AbortController();
  private readonly table: RunTable;
  private readonly starter: RunStarter;
  private readonly host: StepHost;
  private readonly lifecycle: RunLifecycle;
  private readonly waiters: Waiters;
  private readonly resumes: Resumes;
  private readonly control: RunControl;
  /** A cluster's links to the other instances (cancel and follow runs they hold); null alone. */
  readonly links: ClusterLinks | null;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private startPromise: Promise<void> | undefined;
  /** Recovery is done and the timers run (start() resolved). */
  private started = false;
  /** A cluster: which runs this instance takes from others and from the shared queue; null alone. */
  private readonly claims: Claims | null;
  private stopping = false;
  private readonly workflows: WorkflowRepository;

  constructor(private readonly o: EngineOptions) {
    const onWriteError = (error: unknown) => o.log.error("run write failed", { error: errorMessage(error) });
    // The store picks the writer for its database (store/run-writer.ts; on SQLite, WEFT_RUN_WRITER).
    this.writes = openRunWriter({
      db: o.db,
      dbPath: o.dbPath ?? null,
      storeAddress: o.storeAddress ?? null,
      mode: o.config.runWriter,
      synchronous: o.config.dbSynchronous,
      pool: o.config.databasePool,
      onError: onWriteError,
      observer: o.observer,
      onSwitch: (to, load) => o.log.debug("run writer switched", { commitsOn: to === "inline" ? "main thread" : "writer thread", mainThreadBusy: load }),
    });
    this.reads = openRunReads(o.db, o.storeAddress ?? null, { threads: o.config.readerThreads, synchronous: o.config.dbSynchronous });
    this.dispatcher = new Dispatcher<PendingRun>(o.maxActiveRuns ?? 1000, (p) => void this.lifecycle.execute(p));
    const queue = new RunQueue(this.dispatcher, o.cluster?.role !== "api");
    const t = new RunTable(o, this.writes, queue, new ExecutingRuns(), storageOf(o.db).runClaims, storageOf(o.db).runReads);
    this.table = t;
    const workflows = storageOf(o.db).workflows;
    this.workflows = workflows;
    this.retention = new Retention({
      runs: storageOf(o.db).runRetention,
      log: o.log,
      onDeleted: (ids) => t.forget(ids),
      writes: this.writes,
      retentionDays: o.config.runRetentionDays,
      retentionMax: o.config.runRetentionMax,
      overrides: () => workflows.retentionOverrides(),
      intervalMs: o.config.runRetentionIntervalSeconds * 1000,
      clock: t.clock,
    });
    this.waiters = new Waiters(t);
    this.starter = new RunStarter(t, {
      stopping: () => this.stopping,
      ensureStarted: () => this.ensureStarted(),
      expectReply: (runId, expect) => this.waiters.expectReply(runId, expect),
      stopLost: (p) => {
        t.executing.get(p.id)?.stop("cancelled");
        queue.withdraw(p.id);
      },
    });
    this.resumes = new Resumes(t);
    this.host = new StepHost(t, this.starter, {
      stopping: () => this.stopping,
      startRun: (input) => this.starter.startRun(input),
      waitForRow: (runId, ms, signal) => this.waiters.waitForRow(runId, ms, signal),
      cancel: (workspaceId, runId) => this.control.cancel(workspaceId, runId),
      deliverReply: (runId, reply) => this.waiters.deliverReply(runId, reply),
    });
    this.lifecycle = new RunLifecycle(t, new Executor(this.host), this.starter, this.waiters, (runId, at) => this.resumes.schedule(runId, at));
    this.links = o.cluster
      ? new ClusterLinks(t, this.waiters, o.cluster.instanceId, {
          cancel: (workspaceId, runId) => this.control.cancel(workspaceId, runId),
          deliverReply: (runId, reply) => this.waiters.deliverReply(runId, reply),
          workArrived: () => this.claims?.workArrived(),
          onFinished: (listener) => this.lifecycle.onFinished(listener),
        })
      : null;
    this.claims =
      o.cluster && this.links
        ? new Claims(t, o.cluster, this.links, {
            recover: (rows) => this.recover(rows),
            ready: () => !this.stopping && this.startPromise !== undefined,
            onFinished: (listener) => this.lifecycle.onFinished(listener),
          })
        : null;
    if (this.links) {
      const links = this.links;
      // An `api` instance stores a run and leaves it to the workers, which the bus wakes once it is committed.
      queue.handOff = (p) => {
        if (p.row.owner !== null) {
          p.row.owner = null;
          t.writes.fire({ op: "patchRun", id: p.id, patch: { owner: null } });
        }
        void t.writes.drain().then(() => links.wakeWorkers());
      };
    }
    this.control = new RunControl(t, { lifecycle: this.lifecycle, waiters: this.waiters, resumes: this.resumes, starter: this.starter, links: this.links });
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Recovers unfinished runs and starts the timers. Idempotent; also called by the first run start, so an
   * app that never runs a workflow (most tests) never spawns threads. The worker pool starts with the first
   * step that needs it, so an idle server holds no worker threads (idle RSS).
   */
  start(): Promise<void> {
    this.startPromise ??= this.starting().then(() => {
      this.started = true;
    });
    return this.startPromise;
  }

  /** Where the engine is in its life (readiness, /readyz): `started` once recovery is done, until stop() begins. */
  get state(): "not started" | "starting" | "started" | "stopping" {
    if (this.stopping) return "stopping";
    if (this.started) return "started";
    return this.startPromise ? "starting" : "not started";
  }

  private async starting(): Promise<void> {
    // A server with a live workflow is about to take runs: its writer gets ready now (the SQLite writer's thread
    // loads on the other core while the server finishes starting). One with none starts it with its first run.
    // Not waited for: a failure only leaves the writer to get ready with the first run.
    void this.workflows.live().then(
      (live) => live.length > 0 && this.writes.warm?.(),
      () => {},
    );
    // Recovery comes first. Alone (SQLite) every unfinished run is this process's; a run this process started
    // meanwhile may be among them (the read waits for a unit under way, which may have inserted one), and
    // recovery leaves the runs it already holds alone. In a cluster only the runs of instances that died,
    // which no run started here can be, claimed.
    let recovered: Promise<void> = Promise.resolve();
    if (this.claims) {
      try {
        recovered = this.recover(await this.claims.orphans());
      } catch (error) {
        this.o.log.error("could not take over the runs of instances that stopped; trying again after the next heartbeat", { error: errorMessage(error) });
      }
    } else {
      try {
        recovered = this.recover(await this.table.reads.unfinished());
      } catch (error) {
        this.o.log.error("could not read the runs a restart interrupted; they are recovered at the next start", { error: errorMessage(error) });
      }
    }
    try {
      if (!this.o.db.inTransaction) await this.retention.ensureIncrementalVacuum();
    } catch (error) {
      this.o.log.warn("could not switch the database to incremental vacuum", { error: errorMessage(error) });
    }
    this.retention.start();
    this.links?.start();
    this.sweeper = setInterval(() => this.sweep(), 200);
    (this.sweeper as { unref?: () => void }).unref?.();
    await recovered;
    // Runs left for workers (an `api` instance's intake, or copied from SQLite).
    this.claims?.work().catch((error) => this.o.log.warn("could not take runs from the shared queue", { error: errorMessage(error) }));
  }

  /** Stops taking runs, lets executing ones finish (up to `graceMs`), flushes writes and stops the pool. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.closing.abort();
    this.dispatcher.pause();
    // The grace is the process's own (a shutdown takes real time), measured on the monotonic timer, not the clock.
    const deadline = performance.now() + graceMs;
    while (this.table.executing.size > 0 && performance.now() < deadline) await Bun.sleep(20);
    if (this.sweeper) clearInterval(this.sweeper);
    // A sweep under way ends first: its deletions go through the writer closed below.
    await this.retention.stop();
    this.resumes.clearAll();
    await this.writes.close();
    await this.reads.close();
    await this.links?.stop();
    await this.host.stopPool();
  }

  closeStreams() {
    this.closing.abort();
  }

  get events() {
    return this.table.events;
  }

  get limits() {
    return this.table.limits;
  }

  /** Runs started and ended, steps run on worker threads and on this one, since the engine was built. */
  get stats(): { started: number; finished: number; workerSteps: number; inlineSteps: number } {
    const steps = this.host.stepCounts;
    return { started: this.starter.startedCount, finished: this.lifecycle.finishedCount, workerSteps: steps.worker, inlineSteps: steps.inline };
  }

  get workerPool(): WorkerPool | undefined {
    return this.host.workerPool;
  }

  /** A new SSRF allow-list (Settings → Network): steps started from now on obey it, on this thread and every worker. */
  setAllowedCidrs(cidrs: readonly string[]): void {
    this.host.setAllowedCidrs(cidrs);
  }

  /** Runs executing or waiting in memory (for tests and the bench). */
  get load() {
    return { active: this.table.executing.size, pending: this.dispatcher.pendingCount };
  }

  /** Runs per hour and status, kept or counted without their row (RunReadRepository.hourCounts). */
  hourCounts(filter: RunCountFilter, fromHour: number): Promise<HourCount[]> {
    return this.table.reads.hourCounts(filter, fromHour);
  }

  /** Called when a run ends: error workflows and run_finished triggers hang here. */
  onFinished(listener: (run: RunRow) => void) {
    this.lifecycle.onFinished(listener);
  }

  /** Called when a step replies to the webhook that started its run (webhook.respond). */
  onReply(listener: (runId: string, reply: WebhookReply) => void) {
    this.waiters.onReply(listener);
  }

  // ------------------------------------------------------------------ starting runs (run-start.ts)

  /** Starts a run; resolves once its pending row is committed. Throws NOT_FOUND / NOT_PUBLISHED before writing anything. */
  startRun(input: StartRunInput): Promise<RunT> {
    return this.starter.startRun(input);
  }

  /** startRun answering only the id (webhooks); `keepReply` keeps an early webhook.respond reply for waitForReply. */
  startRunId(input: StartRunInput, options: { keepReply?: boolean } = {}): Promise<string> {
    return this.starter.startRunId(input, options);
  }

  /** Inserts the run as part of the caller's unit of work (storage.atomically); it is queued once the unit commits. */
  enqueue(input: StartRunInput, unit: Storage): Promise<RunT> {
    return this.starter.enqueue(input, unit);
  }

  /** A workflow's settings changed (publish, draft save): lanes re-read concurrencyLimit and maintenanceMode. */
  settingsChanged(workflowId: string, environment: Environment, settings: SettingsT | undefined) {
    this.dispatcher.setSettings(workflowId, environment, settings ?? {});
  }

  // ------------------------------------------------------------------ reading and waiting (waiters.ts)

  /** The run as shown, with the wait of its running step (or its place in the queue) if it has one. */
  withWait(run: RunT): RunT {
    return this.table.withWait(run);
  }

  /** The freshest row of a run of `workspaceId` (in memory while it executes), or null. */
  row(workspaceId: string, runId: string): Promise<RunRow | null> {
    return this.waiters.row(workspaceId, runId);
  }

  /** One page of a workspace's runs, as the API's JSON, and the exact number that match (what is committed: see `committed`). */
  listRuns(filter: RunListFilter): Promise<RunPage> {
    return this.reads.list(filter);
  }

  /** A run's stored steps for its detail, at most `max`: the first and last, and how many are left out. */
  storedStepsBounded(runId: string, max: number): Promise<{ steps: StepRow[]; omitted: number }> {
    return this.reads.stepsBounded(runId, max);
  }

  /**
   * Resolves once the run and step writes queued so far are committed (then the stored reads above see them),
   * or after `maxWaitMs` when given, whichever comes first: a read that must not be held by a slow commit.
   */
  committed(maxWaitMs?: number): Promise<void> {
    const writes = this.writes;
    if (writes.pending === 0) return Promise.resolve();
    if (maxWaitMs === undefined) return writes.drain();
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([
      writes.drain(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxWaitMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /**
   * Tests only: the group-committed writer underneath, for tests that seed stored rows as an older version or
   * another process left them, hold a commit, or count the ops written (test/engine, test/runs). Nothing in
   * src/ uses it.
   */
  get writerForTests(): RunWrites {
    return this.writes;
  }

  /** A run's stored steps, in order (what is committed: wait for `committed()` first to see every step). */
  storedSteps(runId: string): Promise<StepRow[]> {
    return this.table.reads.steps(runId);
  }

  /** A run's stored row (what is committed), or null. */
  storedRow(runId: string): Promise<RunRow | null> {
    return this.table.reads.getRow(runId);
  }

  /** The trigger output of a workflow's newest `limit` runs of one trigger type, newest first (what is committed). */
  recentTriggerData(workflowId: string, triggerType: string, limit: number): Promise<unknown[]> {
    return this.table.reads.recentTriggerData(workflowId, triggerType, limit);
  }

  /** The definition a stored run executes (parsed, kept by its content hash); rejects when it is missing. */
  definitionOf(row: RunRow): Promise<FlowVersionT> {
    return this.table.definitionOf(row);
  }

  /** True when this process executes, queues or is committing the run (in a cluster, another instance may hold it). */
  holds(runId: string): boolean {
    return this.table.holds(runId);
  }

  /** The run as it stands now (in-memory when executing). */
  current(runId: string): Promise<RunT | null> {
    return this.waiters.current(runId);
  }

  /** The value a run's `subflows.return_response` step set (null when none). */
  responseOf(runId: string): Promise<unknown> {
    return this.waiters.responseOf(runId);
  }

  /** Waits up to `ms` for the run to finish; returns it finished, or as it stands. */
  waitFor(runId: string, ms: number): Promise<RunT | null> {
    return this.waiters.waitFor(runId, ms);
  }

  /** Waits up to `ms`; a run that finished comes with its steps in execution order. */
  waitForResult(workspaceId: string, runId: string, ms: number): Promise<RunT | null> {
    return this.waiters.waitForResult(workspaceId, runId, ms);
  }

  /** Synchronous webhooks: the first webhook.respond reply, or the run when it ends without one, or timedOut. */
  waitForReply(runId: string, ms: number): Promise<ReplyResult> {
    return this.waiters.waitForReply(runId, ms);
  }

  // ------------------------------------------------------------------ cancel, retry, resume (run-control.ts, resumes.ts)

  cancel(workspaceId: string, runId: string): Promise<RunT> {
    return this.control.cancel(workspaceId, runId);
  }

  retry(workspaceId: string, runId: string, options: RetryOptions): Promise<RunT> {
    return this.control.retry(workspaceId, runId, options);
  }

  /** A resume link (approval) was opened: the token is the credential. */
  resumeByToken(runId: string, token: string, payload: Record<string, unknown>): Promise<RunT> {
    return this.resumes.resumeByToken(runId, token, payload);
  }

  /**
   * A cluster: takes over the unfinished runs of instances that are not alive and recovers them as a restart
   * would, then takes work from the shared queue (claims.ts). Called after every heartbeat; a no-op alone.
   */
  async claimOrphans(): Promise<number> {
    try {
      return (await this.claims?.afterHeartbeat()) ?? 0;
    } catch (error) {
      this.o.log.warn("could not take over the runs of instances that stopped; trying again after the next heartbeat", { error: errorMessage(error) });
      return 0;
    }
  }

  private recover(rows: RunRow[]): Promise<void> {
    return recoverRuns(this.table, rows, {
      started: this.starter,
      scheduleResume: (runId, at) => this.resumes.schedule(runId, at),
      finish: (row, outcome) => this.lifecycle.finish(row, outcome),
    });
  }

  private ensureStarted() {
    if (!this.startPromise) void this.start();
  }

  /** Enforces run time limits (the executor also checks between steps). */
  private sweep() {
    const now = this.table.clock.now();
    for (const exec of this.table.executing.values()) if (!exec.stopReason && now > exec.deadline) exec.stop("timeout");
  }
}
