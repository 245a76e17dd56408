/**
 * The engine's writes as data, applied by group commit: every write queued during one turn of the event
 * loop shares one transaction (one fsync). `write(ops)` resolves once its transaction committed, so a
 * caller answers only when its row is durable; `fire(op)` is the same for writes nobody waits on; an op
 * may be a function evaluated when the batch is built (a `running` status nobody needs once the run ended).
 *
 * Two implementations: `ThreadWriter` commits on a dedicated thread with its own connection (the main thread
 * never waits for SQLite or fsync); `InlineWriter` commits on the calling thread (in-memory databases, which
 * a second connection cannot share).
 */
import type { Db } from "../store/db";
import { RunStore, type RunPatch, type RunRow, type StepRow } from "../store/runs";

export type WriteOp =
  | { op: "insertRun"; row: RunRow }
  | { op: "insertStep"; row: StepRow }
  | { op: "updateStep"; row: StepRow }
  | { op: "patchRun"; id: string; patch: RunPatch }
  | { op: "putDefinition"; hash: string; text: string };

export type QueuedOp = WriteOp | (() => WriteOp | null);

export interface RunWrites {
  write(ops: WriteOp[]): Promise<void>;
  fire(op: QueuedOp): void;
  /** Resolves once everything queued so far is committed. */
  drain(): Promise<void>;
  readonly pending: number;
  /** Commits what is queued and releases the writer. */
  close(): Promise<void>;
  stats: { batches: number; ops: number };
}

export function applyOp(store: RunStore, op: WriteOp): void {
  switch (op.op) {
    case "insertRun": return store.insertRun(op.row);
    case "insertStep": return store.insertStep(op.row);
    case "updateStep": return store.updateStep(op.row);
    case "patchRun": return store.patchRun(op.id, op.patch);
    case "putDefinition": return store.putDefinition(op.hash, op.text);
  }
}

/** Applies a batch in one transaction; if it fails, each op alone, so one bad op cannot sink the others. Returns the failures. */
export function applyBatch(db: Db, store: RunStore, ops: WriteOp[][]): Array<string | null> {
  try {
    db.transaction(() => {
      for (const group of ops) for (const op of group) applyOp(store, op);
    }).immediate();
    return ops.map(() => null);
  } catch (batchError) {
    if (ops.length === 1) return [String((batchError as Error)?.message ?? batchError)];
    return ops.map((group) => {
      try {
        db.transaction(() => {
          for (const op of group) applyOp(store, op);
        }).immediate();
        return null;
      } catch (error) {
        return String((error as Error)?.message ?? error);
      }
    });
  }
}

interface Entry {
  ops: QueuedOp[];
  resolve?: () => void;
  reject?: (error: Error) => void;
}

/** Shared queueing: entries accumulate until the next batch is taken. */
abstract class QueueingWriter implements RunWrites {
  protected queue: Entry[] = [];
  private scheduled = false;
  private drainWaiters: Array<() => void> = [];
  stats = { batches: 0, ops: 0 };

  constructor(protected readonly onError: (error: unknown) => void, protected readonly maxBatch = 4000) {}

  write(ops: WriteOp[]): Promise<void> {
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
    return { entries, ops };
  }

  protected settle(entries: Entry[], failures: Array<string | null>) {
    entries.forEach((entry, i) => {
      const failure = failures[i];
      if (failure === null || failure === undefined) return entry.resolve?.();
      const error = new Error(failure);
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
  abstract close(): Promise<void>;
}

export class InlineWriter extends QueueingWriter {
  private readonly store: RunStore;

  constructor(private readonly db: Db, onError: (error: unknown) => void) {
    super(onError);
    this.store = new RunStore(db);
  }

  protected get inFlight() {
    return 0;
  }

  protected kick() {
    while (this.queue.length > 0) {
      const { entries, ops } = this.take();
      this.settle(entries, applyBatch(this.db, this.store, ops));
    }
    this.settle([], []);
  }

  async close() {
    this.kick();
  }
}

const WRITER_URL = new URL("./writer-thread.ts", import.meta.url);

export interface WriterThreadInit {
  dbPath: string;
  synchronous: "FULL" | "NORMAL";
}

/** Commits on a dedicated thread; one batch in flight at a time, the next one gathers meanwhile. */
export class ThreadWriter extends QueueingWriter {
  private worker: Worker | undefined;
  /** Spawned on the first batch, so start-up work (recovery, VACUUM) finishes before a second connection opens. */
  private ready: Promise<void> | undefined;
  private flight: { id: number; entries: Entry[] } | undefined;
  private nextId = 0;
  private closed = false;

  constructor(private readonly init: WriterThreadInit, onError: (error: unknown) => void) {
    super(onError);
  }

  protected get inFlight() {
    return this.flight ? this.flight.entries.length : 0;
  }

  private spawn(): Promise<void> {
    const worker = new Worker(WRITER_URL.href, { smol: true } as WorkerOptions);
    (worker as { unref?: () => void }).unref?.();
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      worker.addEventListener("open", () => worker.postMessage(JSON.stringify({ t: "init", ...this.init })));
      worker.addEventListener("message", (event: MessageEvent) => {
        const message = JSON.parse(event.data as string) as { t: "ready" } | { t: "init-failed"; error: string } | { t: "done"; id: number; failures: Array<string | null> };
        if (message.t === "ready") return resolve();
        if (message.t === "init-failed") return reject(new Error(message.error));
        if (!this.flight || this.flight.id !== message.id) return;
        const { entries } = this.flight;
        this.flight = undefined;
        this.settle(entries, message.failures);
        if (this.queue.length > 0) this.kick();
      });
      worker.addEventListener("error", (event: ErrorEvent) => {
        this.onError(new Error(`run writer thread failed: ${event.message}`));
        // What it held is unknown: fail it (callers see an error, nothing is answered as durable) and start afresh.
        if (this.flight) {
          const { entries } = this.flight;
          this.flight = undefined;
          this.settle(entries, entries.map(() => `the run writer thread failed: ${event.message}`));
        }
        if (!this.closed) {
          this.ready = this.spawn();
          this.schedule();
        }
      });
    });
  }

  protected kick() {
    if (this.flight || this.queue.length === 0) return;
    const { entries, ops } = this.take();
    const id = ++this.nextId;
    this.flight = { id, entries };
    const payload = JSON.stringify({ t: "batch", id, ops });
    this.ready ??= this.spawn();
    this.ready.then(
      () => this.worker!.postMessage(payload),
      (error) => {
        this.flight = undefined;
        this.settle(entries, entries.map(() => `the run writer thread could not start: ${(error as Error).message}`));
      },
    );
  }

  async close() {
    await this.drain();
    this.closed = true;
    await this.ready?.catch(() => {});
    this.worker?.terminate();
  }
}
