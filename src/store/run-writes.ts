/**
 * The engine's writes as data, applied by group commit: every write queued during one turn of the event
 * loop shares one transaction (one fsync). `write(ops)` resolves once its transaction committed, so a
 * caller answers only when its row is durable; `fire(op)` is the same for writes nobody waits on; an op
 * may be a function evaluated when the batch is built (a `running` status nobody needs once the run ended).
 *
 * Two implementations for SQLite: `ThreadWriter` commits on a dedicated thread with its own connection (the
 * main thread never waits for SQLite or fsync); `InlineWriter` commits on the calling thread (in-memory
 * databases, which a second connection cannot share). PostgreSQL's (postgres/writer.ts) shares the queueing.
 *
 * One file on purpose: both writers share the op encoding, the batching and the failure rules, and a change
 * to one must be made to the other; the writer thread's entry is writer-thread.ts.
 */
import type { Statement } from "bun:sqlite";
import { closeSync, fdatasync, fstatSync, openSync } from "node:fs";
import type { Db } from "./db";
import {
  MAX_PACKED_STEPS,
  RUN_COLUMNS,
  RunStore,
  STEP_COLUMNS,
  STEP_UPDATE_COLUMNS,
  forgetWrites,
  runValues,
  stepValues,
  type RowValues,
  type RunPatch,
  type RunRow,
  type StepRow,
} from "./runs";
import { threadEntry } from "../lib/thread-entry";
import { returnFreePages, truncateWal } from "./maintenance";
import { errorOf, type Failure, failureOf } from "./storage-errors";
import { turnsFor } from "./sqlite/connection";

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
  | { op: "returnFreePages"; pages: number };

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
  | [10, RowValues, Uint8Array, AnnouncedDictionary | null];

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
  }
}

export function applyWireOp(db: Db, store: RunStore, op: WireOp): void {
  switch (op[0]) {
    case 0:
      store.insertRunValues(op[1]);
      return;
    case 1:
      store.insertStepValues(op[1]);
      return;
    case 2:
      store.updateStep(op[1]);
      return;
    case 3:
      store.patchRun(op[1], op[2]);
      return;
    case 4:
      store.putDefinition(op[1], op[2]);
      return;
    case 5: {
      store.deleteOrphanDefinitions();
      return;
    }
    case 6:
      store.deleteRunRows(op[1]);
      return;
    case 7:
      returnFreePages(db, op[1]);
      return;
    case 8:
      store.insertFinishedRun(op[1], op[2]);
      return;
    case 9:
      store.packStoredSteps(op[1]);
      return;
    case 10:
      throw new Error("op 10 is PostgreSQL's (run-batches.ts)");
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

/**
 * Applies a batch (one group of ops per writer) in one transaction; if it fails, each group alone, so one bad
 * op cannot sink the others. Returns the failures, each with its storage kind when it has one.
 */
export function applyBatch<Op>(db: Db, groups: Op[][], apply: (op: Op) => void): Array<Failure | null> {
  try {
    inTransactionRetried(db, () => {
      for (const group of groups) for (const op of group) apply(op);
    });
    return groups.map(() => null);
  } catch (batchError) {
    forgetWrites(db);
    if (groups.length === 1) return [failureOf(batchError)];
    return groups.map((group) => {
      try {
        inTransactionRetried(db, () => {
          for (const op of group) apply(op);
        });
        return null;
      } catch (error) {
        forgetWrites(db);
        return failureOf(error);
      }
    });
  }
}

/** PostgreSQL chose this transaction to break a deadlock (40P01) or could not serialise it: running it again is right. */
export const TRANSIENT = /deadlock detected|could not serialize access/;

/**
 * Runs `work` in one transaction; one that PostgreSQL aborted to break a deadlock with another instance's
 * writer (both update the same counter rows, in the order their runs come) is run again, up to three times.
 */
function inTransactionRetried(db: Db, work: () => void): void {
  for (let attempt = 1; ; attempt++) {
    try {
      db.transaction(work).immediate();
      return;
    } catch (error) {
      if (attempt >= 3 || !TRANSIENT.test(String((error as Error)?.message ?? error))) throw error;
      forgetWrites(db);
    }
  }
}

interface Entry {
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

export interface InlineWriterOptions {
  /**
   * The WAL file of the database. When the connection uses synchronous=FULL, batches are then committed with
   * synchronous=NORMAL (no fsync while the main thread waits) and the WAL is fdatasync'ed on the I/O
   * thread pool; a batch's writers are answered only after the fsync that follows its commit returned.
   * What is acknowledged is as durable as under FULL (WAL frames on disk before the answer), while the
   * main thread keeps serving requests during the fsync and one fsync covers every batch committed
   * while the previous one ran. Checkpoints still sync the WAL and the database file (SQLite does so
   * under NORMAL), so an acknowledged write is never only in a WAL that a checkpoint could recycle.
   */
  syncWal?: string | null;
  /** The connection is the writer's own (AdaptiveWriter's): closed with the writer. */
  ownsDb?: boolean;
}

/** Frames in the WAL beyond which the writer pauses its commits until the checkpointer caught up, so the WAL restarts from its start. */
const WAL_RESTART_FRAMES = 4000;
/** Longest pause of the commits for the checkpointer to catch up (a disk that stalls; a thread that died). */
const RESTART_WAIT_MS = 2_000;
const CHECKPOINT_URL = threadEntry("store/checkpoint-thread.ts");

/** What checkpoint-thread.ts tells the writer. */
type CheckpointerMessage =
  | { t: "ready" }
  | { t: "init-failed"; error: string }
  /** The WAL's length at the thread's last checkpoint. */
  | { t: "frames"; log: number }
  /** The answer to `finish`: the thread checkpointed as far as it could. */
  | { t: "finished" };

interface Committed {
  entries: Entry[];
  failures: Array<Failure | null>;
}

export class InlineWriter extends QueueingWriter {
  private readonly store: RunStore;
  private readonly setNormal: Statement | undefined;
  private readonly setFull: Statement | undefined;
  /** Committed, waiting for the next fsync. */
  private unsynced: Committed[] = [];
  private unsyncedEntries = 0;
  /** Covered by the fsync now running. */
  private syncing: Committed[] | undefined;
  private syncingEntries = 0;
  private walFd: number | undefined;
  /** Copies WAL frames into the database file off this thread (see checkpoint-thread.ts). */
  private checkpointer: Worker | undefined;
  private walFrames = 0;
  /** Commits wait while the checkpointer copies the WAL's last frames (restartWal); the timer ends the wait anyway. */
  private restarting: ReturnType<typeof setTimeout> | undefined;
  /** Set by close(): a write that comes later still fails or commits on its own, but starts no checkpointer. */
  private closed = false;
  private readonly apply = (op: WireOp) => applyWireOp(this.db, this.store, op);

  constructor(
    private readonly db: Db,
    onError: (error: unknown) => void,
    private readonly options: InlineWriterOptions = {},
  ) {
    super(onError);
    // Shares the connection with the retention sweep, which forgets remembered definitions when it deletes any.
    this.store = new RunStore(db, true);
    // Only a connection that would fsync every commit (FULL) gains from moving the fsync off this thread.
    const level = options.syncWal ? (db.query("PRAGMA synchronous").get() as { synchronous: number } | null)?.synchronous : undefined;
    if (options.syncWal && level === 2) {
      this.setNormal = db.prepare("PRAGMA synchronous = NORMAL");
      this.setFull = db.prepare("PRAGMA synchronous = FULL");
    }
  }

  protected get inFlight() {
    return this.unsyncedEntries + this.syncingEntries;
  }

  protected kick() {
    // While an fsync runs, writes gather and are committed together when it returns: none of them could be
    // acknowledged before the next fsync anyway, and one transaction of hundreds of runs writes each touched
    // page once instead of once per small batch. Runs that end meanwhile are then inserted already finished.
    // Likewise while the checkpointer finishes the WAL (restartWal): a commit meanwhile would add frames to copy.
    if ((this.syncing || this.restarting) && this.queue.length < this.maxBatch) return;
    // A unit of the storage port holds the connection between its own awaits (sqlite/connection.ts): a batch
    // committed now would join the unit's transaction, and leave with it on a rollback. It goes right after.
    const unit = turnsFor(this.db).free();
    if (unit) {
      void unit.then(() => this.kick());
      return;
    }
    while (this.queue.length > 0) {
      const { entries, ops: taken } = this.take();
      const ops = taken.map((group) => packFinishedRuns(group.map(encodeOp)));
      if (!this.setNormal) {
        this.settle(entries, applyBatch(this.db, ops, this.apply));
        continue;
      }
      this.setNormal.run();
      let failures: Array<Failure | null>;
      try {
        failures = applyBatch(this.db, ops, this.apply);
      } finally {
        this.setFull!.run();
      }
      this.unsynced.push({ entries, failures });
      this.unsyncedEntries += entries.length;
    }
    if (this.setNormal && !this.closed) this.checkpointer ??= this.startCheckpointer();
    this.sync();
    if (this.walFrames > WAL_RESTART_FRAMES) this.restartWal();
    this.settle([], []);
  }

  /**
   * SQLite checkpoints the WAL itself after a commit once it holds 1,000 pages: on the committing thread,
   * copying pages and fsyncing twice. A thread of its own does that here instead; this connection stops
   * checkpointing once it runs (and resumes if it fails).
   */
  private startCheckpointer(): Worker | undefined {
    try {
      const worker = new Worker(CHECKPOINT_URL, { smol: true } as WorkerOptions);
      (worker as { unref?: () => void }).unref?.();
      worker.addEventListener("message", (event: MessageEvent) => {
        // A message sent before the thread was stopped may still arrive, after this connection closed.
        if (this.checkpointer !== worker || this.closed) return;
        const message = event.data as CheckpointerMessage;
        if (message.t === "ready") this.db.run("PRAGMA wal_autocheckpoint = 0");
        else if (message.t === "frames") this.walFrames = message.log;
        else if (message.t === "finished") this.endRestart();
        else this.onError(new Error(`the WAL checkpointer could not start: ${message.error}`));
      });
      worker.addEventListener("error", (event: ErrorEvent) => {
        if (this.checkpointer !== worker || this.closed) return;
        this.db.run("PRAGMA wal_autocheckpoint = 1000");
        this.onError(new Error(`the WAL checkpointer failed: ${event.message}`));
        this.endRestart();
      });
      worker.postMessage({ t: "init", dbPath: this.db.filename, intervalMs: 100 });
      return worker;
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }

  /**
   * Under steady load the background checkpoint never catches the last frames, so the WAL would only grow.
   * So new commits wait (like they do during an fsync) while the checkpointer copies what is left; once it
   * caught up, the next commit starts the WAL over from its beginning. The checkpoint and its fsyncs stay off
   * this thread: when the disk stalls, webhooks wait for their commit as they would for its fsync, but the
   * API keeps answering (it once waited up to 135 ms here for a checkpoint this thread finished itself).
   * Whether it caught up or not (a reader holding an old snapshot), the next attempt waits for the thread's
   * next count of the frames.
   */
  private restartWal() {
    if (this.restarting || !this.checkpointer) return;
    this.walFrames = 0;
    this.restarting = setTimeout(() => this.endRestart(), RESTART_WAIT_MS);
    this.checkpointer.postMessage({ t: "finish" });
  }

  private endRestart() {
    if (!this.restarting) return;
    clearTimeout(this.restarting);
    this.restarting = undefined;
    this.kick();
  }

  /** One fsync at a time; it covers every batch committed before it started. */
  private sync() {
    if (this.syncing || this.unsynced.length === 0) return;
    const batches = this.unsynced;
    this.syncing = batches;
    this.syncingEntries = this.unsyncedEntries;
    this.unsynced = [];
    this.unsyncedEntries = 0;
    const done = (error: Error | null) => {
      this.syncing = undefined;
      this.syncingEntries = 0;
      for (const { entries, failures } of batches) {
        this.settle(entries, error ? entries.map(() => failureOf(error, "the run database could not be synced to disk: ")) : failures);
      }
      this.kick();
    };
    const fd = this.wal();
    if (fd === undefined) {
      // No WAL file to open (not expected in WAL mode): a full checkpoint syncs the WAL and the database file.
      try {
        this.db.run("PRAGMA wal_checkpoint(FULL)");
        done(null);
      } catch (error) {
        done(error as Error);
      }
      return;
    }
    fdatasync(fd, done);
  }

  /** The WAL's descriptor, reopened when the file was replaced (a closed and reopened database). */
  private wal(): number | undefined {
    try {
      if (this.walFd !== undefined && fstatSync(this.walFd).nlink > 0) return this.walFd;
      if (this.walFd !== undefined) closeSync(this.walFd);
      this.walFd = undefined;
      this.walFd = openSync(this.options.syncWal!, "r");
      return this.walFd;
    } catch {
      return undefined;
    }
  }

  async truncateWal(): Promise<boolean> {
    await this.drain();
    return truncateWal(this.db);
  }

  /**
   * Forgets what this connection remembers having written (definitions, dictionaries, names' keys): another
   * connection committed runs meanwhile and may have pruned what it remembers (AdaptiveWriter's switch).
   */
  forget(): void {
    forgetWrites(this.db);
  }

  async close() {
    this.kick();
    await this.drain();
    this.closed = true;
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
    this.stopCheckpointer();
    if (this.options.ownsDb) this.db.close();
  }

  /** Stops the checkpoint thread (the next batch starts it again); this connection checkpoints by itself meanwhile. */
  stopCheckpointer(): void {
    if (!this.checkpointer) return;
    this.checkpointer.postMessage({ t: "stop" });
    this.checkpointer.terminate();
    this.checkpointer = undefined;
    this.endRestart();
    try {
      this.db.run("PRAGMA wal_autocheckpoint = 1000");
    } catch {
      // Already closed.
    }
  }
}

const WRITER_URL = threadEntry("store/writer-thread.ts");
/**
 * Page cache of a writer's own connection, KiB: it only appends, so the tail and inner pages of a few
 * b-trees are all it rereads (a 16 MB cache only held pages it had written, ~15 MB of the process's peak).
 */
export const WRITER_CACHE_KIB = 2_000;
/** Batches handed to the writer thread and not yet answered. */
const MAX_FLIGHTS = 2;

export interface WriterThreadInit {
  /** The SQLite file. */
  dbPath: string;
  synchronous: "FULL" | "NORMAL";
}

/**
 * Commits on a dedicated thread. Up to MAX_FLIGHTS batches are in flight (the thread commits them in order,
 * each in its own transaction): the main thread never waits for the writer to answer before handing over
 * what gathered meanwhile, so neither thread idles while the other works.
 */
export class ThreadWriter extends QueueingWriter {
  private worker: Worker | undefined;
  /** Spawned on the first batch, so start-up work (recovery, VACUUM) finishes before a second connection opens. */
  private ready: Promise<void> | undefined;
  private readonly flights = new Map<number, Entry[]>();
  private inFlightEntries = 0;
  private nextId = 0;
  private closed = false;
  /**
   * Definitions already sent in a batch that committed or is in flight: a run's definition text (often many
   * kilobytes) is serialised once per thread instead of once per run. Forgotten when a batch fails, the thread
   * is replaced, or definitions are pruned (the prune op is ordered before every later insert, which then
   * carries its definition again).
   */
  private sentDefinitions = new Set<string>();
  /** Answers of truncateWal calls the thread has not answered yet, by message id. */
  private readonly truncations = new Map<number, (ok: boolean) => void>();

  constructor(
    private readonly init: WriterThreadInit,
    onError: (error: unknown) => void,
  ) {
    super(onError);
  }

  protected get inFlight() {
    return this.inFlightEntries;
  }

  /** Takes a batch off the in-flight list (once). */
  private land(id: number): Entry[] | undefined {
    const entries = this.flights.get(id);
    if (!entries) return undefined;
    this.flights.delete(id);
    this.inFlightEntries -= entries.length;
    return entries;
  }

  private spawn(): Promise<void> {
    const worker = new Worker(WRITER_URL, { smol: true } as WorkerOptions);
    (worker as { unref?: () => void }).unref?.();
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      worker.addEventListener("open", () => worker.postMessage(JSON.stringify({ t: "init", ...this.init })));
      worker.addEventListener("message", (event: MessageEvent) => {
        const message = JSON.parse(event.data as string) as
          | { t: "ready" }
          | { t: "init-failed"; error: string }
          | { t: "done"; id: number; failures: Array<Failure | null> }
          | { t: "truncated"; id: number; ok: boolean };
        if (message.t === "ready") return resolve();
        if (message.t === "init-failed") return reject(new Error(message.error));
        if (message.t === "truncated") {
          this.truncations.get(message.id)?.(message.ok);
          this.truncations.delete(message.id);
          return;
        }
        const entries = this.land(message.id);
        if (!entries) return;
        if (message.failures.some((failure) => failure !== null)) this.sentDefinitions.clear();
        this.settle(entries, message.failures);
        if (this.queue.length > 0) this.kick();
      });
      worker.addEventListener("error", (event: ErrorEvent) => {
        this.onError(new Error(`run writer thread failed: ${event.message}`));
        for (const answer of this.truncations.values()) answer(false);
        this.truncations.clear();
        // What it held is unknown: fail it (callers see an error, nothing is answered as durable) and start afresh.
        this.sentDefinitions.clear();
        for (const id of [...this.flights.keys()]) {
          const entries = this.land(id)!;
          this.settle(
            entries,
            entries.map(() => ({ message: `the run writer thread failed: ${event.message}` })),
          );
        }
        if (!this.closed) {
          this.ready = this.spawn();
          this.schedule();
        }
      });
    });
  }

  protected kick() {
    if (this.flights.size >= MAX_FLIGHTS || this.queue.length === 0) return;
    const { entries, ops } = this.take();
    dropSentDefinitions(ops, this.sentDefinitions);
    const id = ++this.nextId;
    this.flights.set(id, entries);
    this.inFlightEntries += entries.length;
    const payload = JSON.stringify({ t: "batch", id, ops: ops.map((group) => group.map(encodeOp)) });
    this.started().then(
      () => this.worker!.postMessage(payload),
      (error) => {
        this.land(id);
        this.sentDefinitions.clear();
        this.settle(
          entries,
          entries.map(() => failureOf(error, "the run writer thread could not start: ")),
        );
      },
    );
  }

  /**
   * Starts the thread now (the engine's start), in the background: it loads its code and opens its connection
   * on the other core while the server finishes starting, instead of in the first webhook's answer.
   */
  warm() {
    this.started().catch(() => {});
  }

  /** The thread, spawned by the first caller that needs it. */
  private started(): Promise<void> {
    this.ready ??= this.spawn();
    return this.ready;
  }

  /**
   * The thread forgets what it remembers having written, before the next batch, and this side what it sent:
   * another connection committed runs meanwhile and may have pruned definitions (AdaptiveWriter's switch).
   */
  forget(): void {
    this.sentDefinitions.clear();
    if (!this.ready) return; // not spawned: a new thread remembers nothing
    this.ready.then(
      () => this.worker?.postMessage(JSON.stringify({ t: "forget" })),
      () => {},
    );
  }

  /** The thread checkpoints after the batches already handed to it, outside a transaction. */
  async truncateWal(): Promise<boolean> {
    await this.started();
    const worker = this.worker;
    if (!worker) return false;
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.truncations.set(id, resolve);
      worker.postMessage(JSON.stringify({ t: "truncateWal", id }));
    });
  }

  async close() {
    await this.drain();
    this.closed = true;
    await this.ready?.catch(() => {});
    this.worker?.terminate();
  }
}
