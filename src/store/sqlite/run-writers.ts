/**
 * SQLite's run writers (../run-writes.ts says what a run writer does and holds what every writer shares):
 * `ThreadWriter` commits on a dedicated thread with its own connection (./writer-thread.ts: the main thread
 * never waits for SQLite or fsync); `InlineWriter` commits on the calling thread (in-memory databases, which a
 * second connection cannot share), its fsync off the thread and its WAL checkpoints on ./checkpoint-thread.ts.
 * ./adaptive-writer.ts moves the commits between the two. Both apply an op through ./run-store.ts.
 *
 * One file on purpose: both writers share how a batch is applied and the failure rules (applyBatch,
 * applyWireOp, which the writer thread runs too), and a change to one must be made to the other.
 */
import type { Statement } from "bun:sqlite";
import { fdatasync } from "node:fs";
import { threadEntry } from "../../lib/thread-entry";
import { WalFile } from "./commit-sync";
import type { Db } from "../db";
import { dropSentDefinitions, encodeOp, type Entry, packFinishedRuns, QueueingWriter, type WireOp } from "../run-writes";
import { type Failure, failureOf } from "../storage-errors";
import { turnsFor } from "./connection";
import { returnFreePages, truncateWal } from "./maintenance";
import { forgetWrites, RunStore } from "./run-store";

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
    case 11:
      store.countUnsaved(op[1]);
      return;
    case 12:
      store.dropSteps(op[1]);
      return;
  }
}

/**
 * Applies a batch (one group of ops per writer) in one transaction; if it fails, each group alone, so one bad
 * op cannot sink the others. Returns the failures, each with its storage kind when it has one.
 */
export function applyBatch<Op>(db: Db, groups: Op[][], apply: (op: Op) => void): Array<Failure | null> {
  try {
    db.transaction(() => {
      for (const group of groups) for (const op of group) apply(op);
    }).immediate();
    return groups.map(() => null);
  } catch (batchError) {
    forgetWrites(db);
    if (groups.length === 1) return [failureOf(batchError)];
    return groups.map((group) => {
      try {
        db.transaction(() => {
          for (const op of group) apply(op);
        }).immediate();
        return null;
      } catch (error) {
        forgetWrites(db);
        return failureOf(error);
      }
    });
  }
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
const CHECKPOINT_URL = threadEntry("store/sqlite/checkpoint-thread.ts");

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
  /** The WAL file fsync'ed after each commit (options.syncWal). */
  private readonly wal: WalFile | undefined;
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
    this.wal = options.syncWal ? new WalFile(options.syncWal) : undefined;
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
    const fd = this.wal?.descriptor();
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
    this.wal?.close();
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

const WRITER_URL = threadEntry("store/sqlite/writer-thread.ts");
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
