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

/** What starting needs from the engine's lifecycle: refuse while stopping, start recovery and timers on first use. */
export interface StartGate {
  stopping(): boolean;
  ensureStarted(): void;
}

export class RunStarter {
  private readonly definitionTexts = new BoundedMap<string, string>(500);
  private readonly hashByVersion = new Map<string, string>();
  private readonly hashByObject = new WeakMap<object, string>();

  constructor(
    private readonly t: RunTable,
    private readonly gate: StartGate,
  ) {}

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
      t.o.observer?.runStarted(pending.row, t.traceparents.get(pending.row.id));
      t.queue(pending);
    });
    t.stats.started++;
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
      started_at: isoTime(Date.now()),
      started_from_step: null,
      retry_of_run_id: null,
      parent_run_id: input.parent?.runId ?? null,
      depth,
      owner: this.t.owner,
      ...overrides,
    };
    if (input.traceparent) this.t.traceparents.set(row.id, input.traceparent);
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
    if (keepReply) t.awaitingReply.add(row.id);
    // The run executes while its insert waits for the group commit: a run of main-thread steps usually
    // ends before the batch is taken, and then its row is inserted once, finished, next to its step rows
    // (no `running` or finish update). The caller still answers only after that commit; a worker step
    // (side effects) waits for it too (StepHost.invokeResolved).
    const committed = t.writes.write(this.lazyInsertOps(pending, definitionText));
    t.unacked.set(row.id, committed);
    // A workflow that keeps nothing of its successful runs: one that succeeds before its insert is taken is
    // answered without waiting for a commit (docs/engine.md, "Run saving").
    const released =
      pending.definition.settings?.saveRuns === "none"
        ? new Promise<void>((resolve) => {
            t.releases.set(row.id, resolve);
          })
        : undefined;
    t.queue(pending);
    t.stats.started++;
    try {
      await (released ? Promise.race([committed, released]) : committed);
    } catch (error) {
      this.insertFailed(pending);
      t.awaitingReply.delete(row.id);
      t.replies.delete(row.id);
      throw error;
    } finally {
      t.unacked.delete(row.id);
      if (released) t.releases.delete(row.id);
    }
    t.o.observer?.runStarted(row, t.traceparents.get(row.id));
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
    const t = this.t;
    const ops: QueuedOp[] = [];
    if (definitionText !== null) ops.push({ op: "putDefinition", hash: p.row.definition_hash, text: definitionText });
    const row = p.row;
    // No copy: both writers bind or serialise the row in the same task that builds the batch.
    ops.push(() => {
      t.untaken.delete(row.id);
      t.insertedSeq.set(row, row.event_seq);
      return { op: "insertRun", row };
    });
    t.untaken.set(row.id, ops);
    return ops;
  }

  /** The insert of a run that had started executing failed: it stops, and nothing more of it is written. */
  private insertFailed(p: PendingRun) {
    const t = this.t;
    const row = p.row;
    t.lost.add(row.id);
    t.active.get(row.id)?.stop("cancelled");
    if (t.pendingById.delete(row.id)) t.dispatcher.remove(p);
    setTimeout(() => t.lost.delete(row.id), 60_000).unref?.();
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
