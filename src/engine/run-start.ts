/**
 * Starting a run: a run is a row first. `begin` (startRun, startRunId) builds the pending row, hands its
 * insert to the group commit and queues the run at once — it executes while the commit is on its way, and
 * the caller answers only after the commit. `enqueue` inserts as part of the caller's own unit of work (a
 * trigger's bookkeeping commits with the run).
 */
import { AppError } from "../http/errors";
import { newId, sha256 } from "../lib/ids";
import { BoundedMap } from "../lib/bounded-map";
import type { Environment, RunT, RunTriggerType } from "../schema/run";
import type { FlowVersionT } from "../schema/workflow";
import { type RunRow, runFromRow } from "../store/run-rows";
import { isoTime } from "./iso-time";
import { FRESH_RUN, type PendingRun, type RunTable } from "./run-table";
import type { RunnableWorkflow } from "./workflow-source";
import type { QueuedOp, WriteOp } from "../store/run-writes";
import type { Storage } from "../store/port";

export const MAX_SUBFLOW_DEPTH = 10;
/** Runs whose caller's trace context is kept at most (RunStarter.traceparents). */
const TRACED_RUNS = 100_000;

export interface StartRunInput {
  /** The workspace the caller acts in; null for system callers holding only a workflow id (schedulers). */
  workspaceId: string | null;
  workflowId: string;
  environment: Environment;
  triggerType: RunTriggerType;
  /**
   * The trigger's full output when the caller has one (webhooks: method, headers, query, body).
   * Otherwise `input` becomes `trigger.body` with empty headers and query.
   */
  triggerData?: Record<string, unknown>;
  input?: unknown;
  /** Set by sub-flow calls. */
  parent?: { runId: string; depth: number };
  /** The caller's W3C trace context (a validated `traceparent` header, or the calling step's), kept while the run is in memory. */
  traceparent?: string;
}

/**
 * What starting needs from the rest of the engine: refuse while stopping, start recovery and timers on first
 * use, keep an early webhook reply for the starter (waiters.ts), and stop a run whose insert failed.
 */
export interface StartGate {
  stopping(): boolean;
  ensureStarted(): void;
  /** The starter of `runId` will ask for its webhook reply (Waiters.expectReply); `false`: it no longer will. */
  expectReply(runId: string, expect: boolean): void;
  /** Stops a run wherever it is (queued or executing): its insert failed. */
  stopLost(p: PendingRun): void;
}

/**
 * What the rest of the engine asks the starter about the runs it started: their insert while it is on its way,
 * and the trace context they were started with. The starter owns that state (lazyInsertOps, insertFailed,
 * prepareFor); the execution (run-lifecycle.ts, step-host.ts) and recovery only ask.
 */
export interface StartedRuns {
  /** The W3C `traceparent` the run was started with, while it is known (in memory only). */
  traceparentOf(runId: string): string | undefined;
  /** The run ended: its trace context is no longer needed. */
  forgetTraceparent(runId: string): void;
  /** The ops of the run's insert while it is queued and not yet taken into a batch: its step rows join them. */
  untakenInsert(runId: string): QueuedOp[] | undefined;
  /** The commit of the run's insert while its starter waits for it (not committed yet). */
  unackedInsert(runId: string): Promise<void> | undefined;
  /** The run's insert failed after it started executing: nothing more of it is written. */
  isLost(runId: string): boolean;
  /** True when an insert already carried the row at `seq` or later: a patch up to `seq` has nothing to add. */
  carried(row: RunRow, seq: number): boolean;
  /** The op standing for the run's insert was taken into a batch, carrying the row as it stands. */
  insertTaken(row: RunRow): void;
  /**
   * A successful run not kept whole (settings.saveRuns failed or none) ended before its insert was taken: there
   * is nothing left to redo if the insert were lost, so its starter stops waiting for the commit.
   */
  releaseStarter(runId: string): void;
}

export class RunStarter implements StartedRuns {
  private readonly definitionTexts = new BoundedMap<string, string>(500);
  private readonly hashByVersion = new Map<string, string>();
  private readonly hashByObject = new WeakMap<object, string>();
  private started = 0;
  /** Runs started by `startRun` whose insert is not committed yet: the commit they wait for. */
  private readonly unacked = new Map<string, Promise<void>>();
  /**
   * Starters waiting for the commit of a run's insert that may stop waiting sooner: a run of a workflow that
   * does not keep its successful runs whole (settings.saveRuns failed or none) that succeeded before its insert
   * was taken has nothing left to commit but its summary row or its count (RunLifecycle.unsavedInsert calls
   * releaseStarter).
   */
  private readonly releases = new Map<string, () => void>();
  /** Runs whose insert failed after they started executing: nothing more of them is written. */
  private readonly lost = new Set<string>();
  /** The row's event_seq when a lazy insert took it (see lazyInsertOps). */
  private readonly insertedSeq = new WeakMap<RunRow, number>();
  /**
   * Runs whose lazy insert is queued and not yet taken into a batch, with the ops of that insert: the run's
   * step rows join them, and a status change needs no write of its own (the insert will carry it).
   */
  private readonly untaken = new Map<string, QueuedOp[]>();
  /**
   * The W3C `traceparent` a run was started with (a webhook's or an API call's header, a calling step's span),
   * until it ends: in memory only, so a restart or another instance of a cluster executes it without
   * (docs/operations.md, "Traces"). Bounded: runs paused for long are the first to lose it.
   */
  private readonly traceparents = new BoundedMap<string, string>(TRACED_RUNS);

  constructor(
    private readonly t: RunTable,
    private readonly gate: StartGate,
  ) {}

  traceparentOf(runId: string): string | undefined {
    return this.traceparents.get(runId);
  }

  forgetTraceparent(runId: string): void {
    this.traceparents.delete(runId);
  }

  /** Runs started by this process (Engine.stats). */
  get startedCount(): number {
    return this.started;
  }

  untakenInsert(runId: string): QueuedOp[] | undefined {
    return this.untaken.get(runId);
  }

  unackedInsert(runId: string): Promise<void> | undefined {
    return this.unacked.get(runId);
  }

  isLost(runId: string): boolean {
    return this.lost.has(runId);
  }

  carried(row: RunRow, seq: number): boolean {
    const at = this.insertedSeq.get(row);
    return at !== undefined && at >= seq;
  }

  insertTaken(row: RunRow): void {
    this.untaken.delete(row.id);
    this.insertedSeq.set(row, row.event_seq);
  }

  releaseStarter(runId: string): void {
    this.releases.get(runId)?.();
  }

  /**
   * Starts a run: the pending row is committed (group commit) before this resolves, then it is queued.
   * Throws AppError NOT_FOUND / NOT_PUBLISHED before writing anything.
   */
  async startRun(input: StartRunInput): Promise<RunT> {
    const started = await this.begin(input, true);
    return started.run as RunT;
  }

  /**
   * startRun for callers that need only the new run's id (webhooks): no RunT snapshot is built. With
   * `keepReply`, a webhook.respond reply that comes before the caller's waitForReply is kept for it.
   */
  async startRunId(input: StartRunInput, options: { keepReply?: boolean } = {}): Promise<string> {
    return (await this.begin(input, false, options.keepReply === true)).id;
  }

  /**
   * Inserts the pending run as part of the caller's unit of work (a schedule's instant or a poll's baseline
   * commits together with its run, or neither does); the run is queued once the unit commits.
   */
  async enqueue(input: StartRunInput, unit: Storage): Promise<RunT> {
    const t = this.t;
    this.gate.ensureStarted();
    const rw = await t.source.forRun(input.workspaceId, input.workflowId, input.environment, unit);
    const { pending, definitionText } = this.prepareFor(rw, input);
    await unit.runInserts.insert(pending.row, { hash: pending.row.definition_hash, text: definitionText });
    unit.afterCommit(() => {
      t.o.observer?.runStarted(pending.row, this.traceparents.get(pending.row.id));
      t.queue.add(pending);
    });
    this.started++;
    return runFromRow(pending.row);
  }

  /** The row and everything a new run of `input` executes with; `overrides` set columns (a retry's links). */
  async prepare(input: StartRunInput, overrides: Partial<RunRow> = {}): Promise<{ pending: PendingRun; definitionText: string }> {
    return this.prepareFor(await this.t.source.forRun(input.workspaceId, input.workflowId, input.environment), input, overrides);
  }

  /** As prepare, with the workflow `rw` already read. */
  private prepareFor(rw: RunnableWorkflow, input: StartRunInput, overrides: Partial<RunRow> = {}): { pending: PendingRun; definitionText: string } {
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
      ...FRESH_RUN,
      id: newId(),
      workspace_id: rw.workspaceId,
      org_id: rw.orgId,
      workflow_id: rw.workflowId,
      workflow_name: rw.name,
      workflow_trigger_type: rw.triggerType ?? rw.definition.trigger.type ?? null,
      trigger_type: input.triggerType,
      trigger_data: JSON.stringify(triggerOutput),
      environment: input.environment,
      version_id: rw.versionId,
      version_number: rw.versionNumber,
      executed_version_id: rw.executedVersionId,
      executed_version_number: rw.executedVersionNumber,
      definition_hash: hash,
      started_at: isoTime(this.t.clock.now()),
      started_from_step: null,
      retry_of_run_id: null,
      parent_run_id: input.parent?.runId ?? null,
      depth,
      owner: this.t.owner,
      ...overrides,
    };
    if (input.traceparent) this.traceparents.set(row.id, input.traceparent);
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

  /** The ops that insert a run (and its definition when given), built now. */
  insertOps(p: PendingRun, definitionText: string | null): WriteOp[] {
    const ops: WriteOp[] = [];
    if (definitionText !== null) ops.push({ op: "putDefinition", hash: p.row.definition_hash, text: definitionText });
    ops.push({ op: "insertRun", row: { ...p.row } });
    return ops;
  }

  private async begin(input: StartRunInput, snapshot: boolean, keepReply = false): Promise<{ id: string; run?: RunT }> {
    const t = this.t;
    if (this.gate.stopping())
      throw new AppError("SERVICE_UNAVAILABLE", "the server is shutting down; retry shortly", undefined, undefined, { "retry-after": "1" });
    this.gate.ensureStarted();
    const { pending, definitionText } = await this.prepare(input);
    const row = pending.row;
    const started = snapshot ? runFromRow(row) : undefined;
    if (keepReply) this.gate.expectReply(row.id, true);
    // The run executes while its insert waits for the group commit: a run of main-thread steps usually
    // ends before the batch is taken, and then its row is inserted once, finished, next to its step rows
    // (no `running` or finish update). The caller still answers only after that commit; a worker step
    // (side effects) waits for it too (StepHost.invokeResolved).
    const committed = t.writes.write(this.lazyInsertOps(pending, definitionText));
    this.unacked.set(row.id, committed);
    // A workflow that does not keep its successful runs whole: one that succeeds before its insert is taken is
    // answered without waiting for a commit (docs/engine.md, "Run saving").
    const save = pending.definition.settings?.saveRuns;
    const released =
      save === "none" || save === "failed"
        ? new Promise<void>((resolve) => {
            this.releases.set(row.id, resolve);
          })
        : undefined;
    t.queue.add(pending);
    this.started++;
    try {
      await (released ? Promise.race([committed, released]) : committed);
    } catch (error) {
      this.insertFailed(pending);
      if (keepReply) this.gate.expectReply(row.id, false);
      throw error;
    } finally {
      this.unacked.delete(row.id);
      if (released) this.releases.delete(row.id);
    }
    t.o.observer?.runStarted(row, this.traceparents.get(row.id));
    return { id: row.id, run: started };
  }

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

  /** The pending insert as an op built at commit time: it carries the row as it stands then. */
  private lazyInsertOps(p: PendingRun, definitionText: string | null): QueuedOp[] {
    const ops: QueuedOp[] = [];
    if (definitionText !== null) ops.push({ op: "putDefinition", hash: p.row.definition_hash, text: definitionText });
    const row = p.row;
    // No copy: both writers bind or serialise the row in the same task that builds the batch.
    ops.push(() => {
      this.insertTaken(row);
      return { op: "insertRun", row };
    });
    this.untaken.set(row.id, ops);
    return ops;
  }

  /** The insert of a run that had started executing failed: it stops, and nothing more of it is written. */
  private insertFailed(p: PendingRun) {
    const row = p.row;
    this.lost.add(row.id);
    this.gate.stopLost(p);
    setTimeout(() => this.lost.delete(row.id), 60_000).unref?.();
  }
}

/** The trigger's output always has `body`, `headers` and `query`. */
function normalizeTrigger(input: StartRunInput): Record<string, unknown> {
  const data = input.triggerData;
  if (data && typeof data === "object" && !Array.isArray(data) && "body" in data) {
    return { ...data, headers: data.headers ?? {}, query: data.query ?? {} };
  }
  const body = input.input !== undefined ? input.input : (data ?? {});
  return { body: body ?? {}, headers: {}, query: {} };
}
