/**
 * The engine's writes as data, applied by group commit: every write queued during one turn of the event
 * loop shares one transaction (one fsync). `write(ops)` resolves once its transaction committed, so a
 * caller answers only when its row is durable; `fire(op)` is the same for writes nobody waits on; an op
 * may be a function evaluated when the batch is built (a `running` status nobody needs once the run ended).
 *
 * What every run writer shares: the ops and their encoding as rows of values (WireOp), the packing of finished
 * runs into records, the queueing and batching (QueueingWriter) and the sending of each definition once.
 * SQLite's writers are sqlite/run-writers.ts (ThreadWriter, InlineWriter; sqlite/adaptive-writer.ts moves the
 * commits between them), PostgreSQL's is postgres/writer.ts; ./run-writer.ts picks the store's.
 */
import {
  MAX_PACKED_STEPS,
  RUN_COLUMNS,
  STEP_COLUMNS,
  STEP_UPDATE_COLUMNS,
  runValues,
  stepValues,
  type RowValues,
  type RunPatch,
  type RunRow,
  type StepRow,
} from "./run-rows";
import { errorOf, type Failure } from "./storage-errors";

export type WriteOp =
  | { op: "insertRun"; row: RunRow }
  | { op: "insertStep"; row: StepRow }
  | { op: "updateStep"; row: StepRow }
  | { op: "patchRun"; id: string; patch: RunPatch }
  | { op: "putDefinition"; hash: string; text: string }
  /** Deletes definitions no run refers to (retention), ordered with the writes around it. */
  | { op: "pruneDefinitions" }
  /** Deletes runs with their steps (retention): off the main thread, between the run writes. */
  | { op: "deleteRuns"; ids: string[] }
  /** Gives up to `pages` free pages of the database file back to the file system (incremental vacuum). */
  | { op: "returnFreePages"; pages: number }
  /** Counts a finished run whose row is not kept (settings.saveRuns "none", docs/engine.md "Run saving") in run_unsaved. */
  | { op: "countRun"; row: RunRow }
  /** Deletes a run's step rows (a successful run of a workflow that keeps failed runs only). */
  | { op: "dropSteps"; runId: string };

export type QueuedOp = WriteOp | (() => WriteOp | null);

export interface RunWrites {
  write(ops: QueuedOp[]): Promise<void>;
  fire(op: QueuedOp): void;
  /** Resolves once everything queued so far is committed. */
  drain(): Promise<void>;
  /**
   * Once everything queued so far is committed, checkpoints the WAL and truncates it, on the writer's
   * connection; false when a reader held it (a later call retries).
   */
  truncateWal(): Promise<boolean>;
  readonly pending: number;
  /** Commits what is queued and releases the writer. */
  close(): Promise<void>;
  /** Gets ready for the first batch in the background (a writer that connects lazily connects now). */
  warm?(): void;
  stats: { batches: number; ops: number };
}

/** Told of every batch once it is answered (committed, and synced where the writer syncs): for /metrics. */
export interface WriteObserver {
  /** `writes`: the callers' writes in the batch; `seconds`: from taking the batch to answering them. */
  batchCommitted(writes: number, seconds: number): void;
}

/**
 * An op as the store applies it, on either writer: rows as arrays of column values (no repeated keys to
 * serialise, parse or bind by name; the writer thread receives exactly this), tagged by a number.
 */
export type WireOp =
  | [0, RowValues]
  | [1, RowValues]
  | [2, StepRow]
  | [3, string, RunPatch]
  | [4, string, string]
  | [5]
  | [6, string[]]
  | [7, number]
  /** A finished run with its steps, stored as one record (packFinishedRuns; built where the ops are applied, never sent). */
  | [8, RowValues, RowValues[]]
  /** The step rows of a run that just finished, packed into its row (packFinishedRuns, likewise). */
  | [9, string]
  /**
   * PostgreSQL's form of op 8: the run's values with its cold columns blanked, its record, and the dictionary
   * the record needs when the writer has not yet seen it stored (postgres/record-dictionaries.ts).
   */
  | [10, RowValues, Uint8Array, AnnouncedDictionary | null]
  /** countRun: the run's cell in run_unsaved (migration 026). */
  | [11, UnsavedCell]
  /** dropSteps. */
  | [12, string];

/**
 * A run counted without its row (migration 026, run_unsaved): workspace, workflow, hour of its start (hours
 * since the epoch), environment, trigger type, status; as text, the table being small (one row per cell).
 */
export type UnsavedCell = [workspaceId: string, workflowId: string, hour: number, environment: string, triggerType: string, status: string];

/** The run_unsaved cell of a finished run. */
export function unsavedCell(row: RunRow): UnsavedCell {
  return [row.workspace_id, row.workflow_id, Math.floor(Date.parse(row.started_at) / 3_600_000), row.environment, row.trigger_type, row.status];
}

/** A dictionary a record needs, written with the record unless stored already. */
export interface AnnouncedDictionary {
  id: string;
  definitionHash: string;
  bytes: Uint8Array;
}

export function encodeOp(op: WriteOp): WireOp {
  switch (op.op) {
    case "insertRun":
      return [0, runValues(op.row)];
    case "insertStep":
      return [1, stepValues(op.row)];
    case "updateStep":
      return [2, op.row];
    case "patchRun":
      return [3, op.id, op.patch];
    case "putDefinition":
      return [4, op.hash, op.text];
    case "pruneDefinitions":
      return [5];
    case "deleteRuns":
      return [6, op.ids];
    case "returnFreePages":
      return [7, op.pages];
    case "countRun":
      return [11, unsavedCell(op.row)];
    case "dropSteps":
      return [12, op.runId];
  }
}

const RUN_STATUS = RUN_COLUMNS.indexOf("status");
const STEP_RUN = STEP_COLUMNS.indexOf("run_id");
const STEP_UPDATES = STEP_UPDATE_COLUMNS.map((name) => [name, STEP_COLUMNS.indexOf(name)] as const);
const FINISHED = new Set(["completed", "failed", "cancelled"]);

/**
 * One writer's ops with each run that is inserted already finished, together with the inserts (and updates)
 * of its steps, turned into one insert of the run with its steps in its record (run-records.ts): no step
 * rows, no step index entries. A run inserted earlier has its step rows packed when the op that finishes it
 * is applied (the rows are read back, packed into the run's record and deleted, in the same transaction).
 * Applied on the thread that commits (the compression stays off the main thread). `onFinish` false: runs
 * inserted earlier keep their step rows (PostgreSQL's writer, which would have to read them back first).
 */
export function packFinishedRuns(group: WireOp[], onFinish = true): WireOp[] {
  const runs = new Map<string, RowValues[]>();
  for (const op of group) {
    if (op[0] === 0 && FINISHED.has(op[1][RUN_STATUS] as string)) runs.set(op[1][0] as string, []);
  }
  if (runs.size === 0) return onFinish && finishing(group) ? packOnFinish(group) : group;
  // The steps of those runs as they stand after every op of the group (an update applied to its insert).
  const consumed = new Set<WireOp>();
  for (const op of group) {
    if (op[0] === 1) {
      const steps = runs.get(op[1][STEP_RUN] as string);
      if (!steps) continue;
      steps.push(op[1]);
      consumed.add(op);
    } else if (op[0] === 2) {
      const update = op[1];
      const step = runs.get(update.run_id)?.find((values) => values[0] === update.id);
      if (!step) continue;
      for (const [name, index] of STEP_UPDATES) step[index] = update[name] as RowValues[number];
      consumed.add(op);
    }
  }
  // A run without steps, or with too many, is written as it came.
  for (const [id, steps] of runs) if (steps.length === 0 || steps.length > MAX_PACKED_STEPS) runs.delete(id);
  const out: WireOp[] = [];
  for (const op of group) {
    const steps = op[0] === 0 ? runs.get(op[1][0] as string) : undefined;
    if (steps && op[0] === 0) out.push([8, op[1], steps]);
    else if (!consumed.has(op) || !runs.has(op[0] === 1 ? (op[1][STEP_RUN] as string) : (op[1] as StepRow).run_id)) out.push(op);
  }
  return onFinish && finishing(out) ? packOnFinish(out) : out;
}

const finishes = (op: WireOp): op is [3, string, RunPatch] => op[0] === 3 && op[2].status !== undefined && FINISHED.has(op[2].status);
const finishing = (group: WireOp[]) => group.some(finishes);

/** Each op that finishes a run followed by the packing of that run's step rows. */
function packOnFinish(group: WireOp[]): WireOp[] {
  const out: WireOp[] = [];
  for (const op of group) {
    out.push(op);
    if (finishes(op)) out.push([9, op[1]]);
  }
  return out;
}

/** A caller's ops as queued, with how to answer it (nobody waits on a fired op). */
export interface Entry {
  ops: QueuedOp[];
  resolve?: () => void;
  reject?: (error: Error) => void;
}

/**
 * Leaves out of `ops` the definitions already in `sent` (sent in a batch that committed or is in flight) and
 * adds the others; a prune forgets them all (it is ordered before every later insert, which then carries its
 * definition again). A run's definition text (often many kilobytes) is then serialised and bound once per
 * writer instead of once per run.
 */
export function dropSentDefinitions(ops: WriteOp[][], sent: Set<string>): void {
  for (let i = 0; i < ops.length; i++) {
    const group = ops[i]!;
    if (!group.some((op) => op.op === "putDefinition" || op.op === "pruneDefinitions")) continue;
    ops[i] = group.filter((op) => {
      if (op.op === "pruneDefinitions") sent.clear();
      if (op.op !== "putDefinition") return true;
      if (sent.has(op.hash)) return false;
      sent.add(op.hash);
      return true;
    });
  }
}

/** Shared queueing: entries accumulate until the next batch is taken. */
export abstract class QueueingWriter implements RunWrites {
  protected queue: Entry[] = [];
  private scheduled = false;
  private drainWaiters: Array<() => void> = [];
  stats = { batches: 0, ops: 0 };
  /** Set by the writer's opener (run-writer.ts); each batch's entries map to when it was taken. */
  observer: WriteObserver | undefined;
  private readonly takenAt = new WeakMap<Entry[], number>();

  constructor(
    protected readonly onError: (error: unknown) => void,
    protected readonly maxBatch = 4000,
  ) {}

  write(ops: QueuedOp[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, resolve, reject });
      this.schedule();
    });
  }

  fire(op: QueuedOp): void {
    this.queue.push({ ops: [op] });
    this.schedule();
  }

  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  protected abstract get inFlight(): number;

  drain(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
      this.schedule();
    });
  }

  protected schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.kick();
    });
  }

  /** Takes up to maxBatch entries, evaluating deferred ops now. */
  protected take(): { entries: Entry[]; ops: WriteOp[][] } {
    const entries = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = this.queue.length <= this.maxBatch ? [] : this.queue.slice(this.maxBatch);
    const ops = entries.map((entry) => {
      const out: WriteOp[] = [];
      for (const op of entry.ops) {
        const value = typeof op === "function" ? op() : op;
        if (value) out.push(value);
      }
      return out;
    });
    this.stats.batches++;
    this.stats.ops += entries.length;
    if (this.observer) this.takenAt.set(entries, performance.now());
    return { entries, ops };
  }

  /** Answers each entry: resolved, or rejected with its failure (a StorageError when it has a kind). */
  protected settle(entries: Entry[], failures: Array<Failure | null>) {
    const takenAt = this.takenAt.get(entries);
    if (takenAt !== undefined) {
      this.takenAt.delete(entries);
      this.observer?.batchCommitted(entries.length, (performance.now() - takenAt) / 1000);
    }
    entries.forEach((entry, i) => {
      const failure = failures[i];
      if (failure === null || failure === undefined) {
        entry.resolve?.();
        return;
      }
      const error = errorOf(failure);
      if (entry.reject) entry.reject(error);
      else this.onError(error);
    });
    if (this.pending === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }

  protected abstract kick(): void;
  abstract truncateWal(): Promise<boolean>;
  abstract close(): Promise<void>;
}
