/**
 * What the parts of the engine share, passed to each by engine.ts: the index of the runs this process holds —
 * queued (run-queue.ts), executing (run-execution.ts ExecutingRuns), being committed (`settling`) or just ended
 * (`recent`) — with the freshest row of each (rowInMemory: until a write commits this is the truth about a run;
 * after, the database is), the run event streams, the limits, options and the storage port's run repositories.
 * State that one part changes lives in that part (docs/architecture.md, "Engine"): inserts on their way and
 * trace contexts in run-start.ts, waiters and webhook replies in waiters.ts, the queue in run-queue.ts,
 * executing runs in run-execution.ts, run-finished listeners in run-lifecycle.ts, a cluster's intake in
 * cluster-links.ts.
 */
import type { Config } from "../config";
import { AppError } from "../http/errors";
import type { Logger } from "../http/logger";
import { BoundedMap } from "../lib/bounded-map";
import { type Clock, systemClock } from "../lib/clock";
import type { AddressPolicy } from "../net/address-policy";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { GuardedFetch, ResolvedAuth } from "../pieces-sdk/types";
import type { Environment, RunT } from "../schema/run";
import type { FlowVersionT } from "../schema/workflow";
import type { Db } from "../store/db";
import type { RunClaimRepository } from "../store/run-claims";
import type { RunReadRepository } from "../store/run-read-repository";
import { type RunRow, runFromRow, type StepRow } from "../store/run-rows";
import type { EngineObserver } from "./engine-observer";
import { RunEvents } from "./run-events";
import type { ExecutingRuns, ReplayEntry, RunExecution } from "./run-execution";
import type { PendingRun, RunQueue } from "./run-queue";
import type { QueuedOp, RunWrites } from "../store/run-writes";
import type { WorkflowSource } from "./workflow-source";

export type { PendingRun } from "./run-queue";

export const FINISHED = new Set(["completed", "failed", "cancelled"]);
/**
 * A cluster: how long after a run executed elsewhere ended its webhook reply and end notice may still be on
 * their way over the bus (they travel in that order, on one connection). Until then a waiter here trusts them
 * over the database, which can show the end first.
 */
export const BUS_GRACE_MS = 2_000;
/** Finished runs kept in memory for waiters that arrive right after the end (see RunTable.recent). */
export const RECENT_RUNS = 1024;

/** The columns every new run starts with (a start or a retry): nothing ran yet, nothing waits. */
export const FRESH_RUN = {
  status: "pending",
  finished_at: null,
  duration_ms: null,
  error_message: null,
  tags: "[]",
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
  owner: null,
} as const satisfies Partial<RunRow>;

/**
 * This process's place in a cluster of instances on one PostgreSQL database. The runs it starts carry its id
 * as their owner; runs whose owner is not alive (docs/scaling.md) are claimed and recovered here. Absent: this
 * process owns every run (SQLite, where the data dir's lock keeps it alone).
 */
export interface ClusterMembership {
  instanceId: string;
  /** `api`: runs started here are left for the cluster's workers (owner null); `worker` and `all` execute runs. */
  role: "all" | "api" | "worker";
  /** Ids of the instances alive now (heartbeat within the lease, this one included). */
  aliveIds(): Set<string>;
}

export interface EngineOptions {
  db: Db;
  config: Config;
  log: Logger;
  pieces: PieceRegistry;
  /** Resolved lazily: the workflows core may be built after the engine. */
  workflows: () => WorkflowSource | undefined;
  resolveAuth?: () => ((ref: { workspaceId: string; connectionId: string; pieceId: string }) => Promise<ResolvedAuth>) | undefined;
  /** The SSRF-guarded fetch for steps run on this thread; default: one built from `addressPolicy` (never the global fetch). */
  fetch?: () => GuardedFetch | undefined;
  /** The SSRF allow-list of this thread, shared with the app's guarded fetch; default: one from config.allowedCidrs. */
  addressPolicy?: AddressPolicy;
  /** Worker threads; 0 runs every step on the main thread. Default config.workers. */
  workers?: number;
  /** The SQLite database file, for the run writer thread; null when in memory or on PostgreSQL. */
  dbPath?: string | null;
  /** Where worker threads open the database for the key-value store (store/open.ts `storeAddress`); null when in memory. */
  storeAddress?: string | null;
  /** Runs executing at once, across workflows. */
  maxActiveRuns?: number;
  cluster?: ClusterMembership;
  /** Told of runs and steps as they start and end, and of the run writer's commits (/metrics, traces, log streaming). */
  observer?: EngineObserver;
  /** What the engine reads the time from and waits on (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

/** What a paused run keeps in its `state` column: the steps to replay, its active time, and the resume payload once given. */
export interface PauseState {
  log: ReplayEntry[];
  activeMs: number;
  payload?: Record<string, unknown>;
}

export interface EngineLimits {
  /** Largest stored step input/output, characters of JSON. */
  outputLimit: number;
  /** Largest total of step outputs one run may hold, characters of JSON. */
  memoryBudget: number;
  timeoutMs: number;
  /** Largest output of one step, characters of JSON (WEFT_STEP_MAX_OUTPUT_MB). */
  stepMaxOutput: number;
  /** Most items a loop iterates (WEFT_LOOP_MAX_ITEMS). */
  loopMaxItems: number;
  /** Most steps a run executes (WEFT_RUN_MAX_STEPS). */
  runMaxSteps: number;
}

export class RunTable {
  readonly events = new RunEvents();
  readonly limits: EngineLimits;
  /** The engine's clock (EngineOptions.clock): every part reads the time and arms its timers here. */
  readonly clock: Clock;
  /** Rows whose latest change is being committed (finish, pause, resume): written by `settle` only. */
  private readonly settling = new Map<string, RunRow>();
  /**
   * Runs that ended lately, with their step rows when this process executed them all: whoever waits for a
   * run (`?wait=`, a sub-flow call, a stream) asks right after it ended, and this spares the database reads.
   */
  private readonly recent = new BoundedMap<string, { row: RunRow; steps?: StepRow[] }>(RECENT_RUNS);

  constructor(
    readonly o: EngineOptions,
    /** Group-committed run and step writes (on a writer thread when the database is a file). */
    readonly writes: RunWrites,
    /** The runs queued here, not yet executing (run-queue.ts). */
    readonly queue: RunQueue,
    /** The runs executing here (run-execution.ts; the lifecycle adds and removes them). */
    readonly executing: ExecutingRuns,
    /** A cluster's claims on runs (the storage port: awaited, on either database). */
    readonly claims: RunClaimRepository,
    /** What the engine reads of stored runs (the storage port: awaited, on either database). */
    readonly reads: RunReadRepository,
  ) {
    this.clock = o.clock ?? systemClock;
    const c = o.config;
    this.limits = {
      outputLimit: c.stepOutputLimit,
      memoryBudget: c.runMemoryMb * 1024 * 1024,
      timeoutMs: c.runTimeoutSeconds * 1000,
      stepMaxOutput: c.stepMaxOutputMb * 1024 * 1024,
      loopMaxItems: c.loopMaxItems,
      runMaxSteps: c.runMaxSteps,
    };
  }

  /** The owner written on the runs this process starts: its instance id in a cluster (none on an `api` instance), else null. */
  get owner(): string | null {
    const c = this.o.cluster;
    return c && c.role !== "api" ? c.instanceId : null;
  }

  /** This instance's id in a cluster, else null. */
  get instanceId(): string | null {
    return this.o.cluster?.instanceId ?? null;
  }

  /** False on an `api` instance: it stores runs and leaves their execution to workers. */
  get executes(): boolean {
    return this.o.cluster?.role !== "api";
  }

  get source(): WorkflowSource {
    const source = this.o.workflows();
    if (!source) throw new AppError("SERVICE_UNAVAILABLE", "workflows are not available yet; retry shortly");
    return source;
  }

  /** True when this process executes, queues or is committing the run (in a cluster, another instance may hold it). */
  holds(runId: string): boolean {
    return this.executing.has(runId) || this.queue.has(runId) || this.settling.has(runId);
  }

  /** True while the run's latest change is being committed. */
  isSettling(runId: string): boolean {
    return this.settling.has(runId);
  }

  /** The run ended (RunLifecycle.finish): kept for whoever asks right after, with its step rows when all are known. */
  rememberEnded(row: RunRow, steps?: StepRow[]) {
    this.recent.set(row.id, { row, steps });
  }

  /** A run that ended lately, as remembered (rememberEnded). */
  recentlyEnded(runId: string): { row: RunRow; steps?: StepRow[] } | undefined {
    return this.recent.get(runId);
  }

  /** Runs deleted from the database (retention): forgotten here too. */
  forget(ids: readonly string[]) {
    for (const id of ids) this.recent.delete(id);
  }

  /** The freshest row this process holds: executing, queued, being committed or just ended; else undefined. */
  rowInMemory(runId: string): RunRow | undefined {
    return this.executing.get(runId)?.row ?? this.queue.get(runId)?.row ?? this.settling.get(runId) ?? this.recent.get(runId)?.row;
  }

  /** The freshest row: the one this process holds (rowInMemory), else the stored one. */
  async rowNow(runId: string): Promise<RunRow | null> {
    return this.rowInMemory(runId) ?? (await this.reads.getRow(runId));
  }

  /** Writes a run's status change (or waits for a write that carries it); until it is committed, readers get the row from memory. */
  async settle(row: RunRow, ops: QueuedOp[] | Promise<void>): Promise<void> {
    this.settling.set(row.id, row);
    try {
      await (Array.isArray(ops) ? this.writes.write(ops) : ops);
    } finally {
      if (this.settling.get(row.id) === row) this.settling.delete(row.id);
    }
  }

  emitRun(row: RunRow) {
    this.events.emit(row.id, () => ({ type: "run", id: row.event_seq, run: this.withWait(runFromRow(row)) }));
  }

  /** The run as shown, with the wait of its running step if it has one. */
  withWait(run: RunT): RunT {
    if (run.status === "pending") {
      // Held back by the dispatcher: a concurrency limit, maintenance mode or the engine's ceiling.
      const reason = this.queue.waitingReason({ id: run.id, workflowId: run.workflowId, environment: run.environment as Environment });
      return reason ? { ...run, waiting: { step: "", reason, since: run.startedAt } } : run;
    }
    const wait = this.executing.waitOf(run.id);
    return wait && run.status === "running" ? { ...run, waiting: wait } : run;
  }

  /** A step says it waits (reason) or goes on (null): the run shows it, and its stream gets a run event (same id: nothing new is stored). */
  stepWaiting(run: RunExecution, step: string, reason: string | null) {
    if (this.executing.setWait(run.row.id, step, reason, this.clock.now())) this.emitRun(run.row);
  }

  private readonly parsedDefinitions = new BoundedMap<string, FlowVersionT>(64);

  /**
   * The definition a stored run executes. Kept parsed by content hash (a definition never changes under its
   * hash; runs share it read-only, as runs started from one published version do): a worker claiming a
   * batch of one workflow's runs reads and parses it once, not once per run.
   */
  async definitionOf(row: RunRow): Promise<FlowVersionT> {
    const known = this.parsedDefinitions.get(row.definition_hash);
    if (known) return known;
    const text = await this.reads.definition(row.definition_hash);
    if (!text) throw new AppError("INTERNAL", `the definition run ${row.id} executed (${row.definition_hash}) is missing`);
    const definition = JSON.parse(text) as FlowVersionT;
    this.parsedDefinitions.set(row.definition_hash, definition);
    return definition;
  }

  /** The workflow's variables for a definition the engine already holds; the definition's own when the workflow is gone. */
  async variablesOf(row: RunRow, definition: FlowVersionT): Promise<{ variables: Record<string, unknown>; secrets: string[] }> {
    try {
      return await this.source.variablesFor(row.workflow_id, definition);
    } catch {
      return { variables: definition.variables ?? {}, secrets: [] };
    }
  }

  /** A PendingRun for a row the engine already stored (resume, retry), with the workflow's variables read now. */
  async pendingOf(row: RunRow, definition: FlowVersionT): Promise<PendingRun> {
    return this.pendingFor(row, definition, await this.variablesOf(row, definition));
  }

  /**
   * A PendingRun for a row the engine already stored, with its workflow's variables as read (recovering a batch
   * reads a workflow's variables once: recovery.ts).
   */
  pendingFor(row: RunRow, definition: FlowVersionT, read: { variables: Record<string, unknown>; secrets: string[] }): PendingRun {
    const { variables, secrets } = read;
    return {
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
  }
}
