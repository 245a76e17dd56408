/**
 * The SQLite run writer that commits where it is cheapest at the moment (WEFT_RUN_WRITER=auto, the default
 * for a database file): on the main thread while it has time to spare, on the writer thread once it is
 * busy (./run-writers.ts has both).
 *
 * Why: a batch handed to the writer thread waits for two thread wake-ups (there and back) besides its
 * commit; at low concurrency every request waits for them, and on a machine where a wake-up is dear that is
 * most of a request's time (10 connections: inline +21–32 % req/s, docs/operations.md). Under load the
 * main thread is the bottleneck and the thread takes SQLite's work off it (50 connections, the engine
 * bench: thread +13–30 %). Which case holds is read from the main thread's own CPU time (Linux,
 * /proc/thread-self/stat), sampled by the writes themselves at most every SAMPLE_MS (an idle server reads
 * nothing): busy ≥ TO_THREAD of the time while committing inline moves the commits to the thread, ≤ TO_INLINE
 * while the thread commits brings them back. The gap is wide on purpose: handing its commits to the thread
 * takes ~40 % of the main thread's time off it (0.92 → 0.5 measured under the engine bench), so closer
 * thresholds would switch back and forth. A busy main thread is not enough, though: the thread pays off when
 * many writes wait together (it commits one batch while the next one gathers), not when a few requests take
 * turns, each then waiting for the two wake-ups. So the commits move to the thread only while the inline
 * commits average at least THREAD_MIN_WRITES writes, and come back once the thread's average fewer than
 * INLINE_MAX_WRITES (10 connections on the webhook bench: ~5 a commit, inline 8,400–9,600 req/s against
 * 7,300–8,800 with the switch; 50 connections: ~24 a commit, the thread as fast or faster; docs/operations.md).
 * Retention's deletions, the return of free pages and the WAL's truncation always go to the thread (tens of
 * milliseconds a batch that requests would wait behind), which then keeps the commits for MAINTENANCE_HOLD_MS
 * after the last of them. It starts inline: a server that
 * just started is idle, and the thread, spawned while the server started, took CPU from the start itself
 * (its loading on the other core, then two wake-ups for the first webhook's commit; spawn → first webhook
 * ~15 ms less without it on 2 cores, docs/operations.md). The thread is loaded THREAD_WARM_MS after the
 * start, before it is likely needed (a switch or a retention sweep would otherwise wait for it). Where /proc
 * does not tell a thread's CPU time (not Linux) the engine uses the thread alone, as before.
 *
 * A switch waits until everything the current writer holds is committed and synced, holding new writes
 * meanwhile (in call order): runs are then written by one connection at a time, in order. The connection
 * taking over forgets what it remembers having written (definitions, dictionaries, names' keys), since the
 * other one may have pruned them (retention deletes orphan definitions through the writer).
 */
import { readFileSync } from "node:fs";
import type { Db } from "../db";
import type { QueuedOp, RunWrites } from "../run-writes";
import { openDatabase } from "./db";
import { InlineWriter, ThreadWriter, WRITER_CACHE_KIB } from "./run-writers";

/** Main-thread CPU share (0–1) at or above which inline commits move to the thread. */
export const TO_THREAD = 0.9;
/** Main-thread CPU share at or below which the thread's commits come back inline. */
export const TO_INLINE = 0.35;
/** Writes per inline commit (the average since the last reading) from which a busy main thread hands its commits to the thread. */
export const THREAD_MIN_WRITES = 8;
/** Writes per thread commit, on average since the last reading, below which the commits come back inline. */
export const INLINE_MAX_WRITES = 4;
/** Shortest interval the CPU share is measured over. */
export const SAMPLE_MS = 500;
/**
 * How long the thread keeps the commits after retention's last maintenance op: a sweep's deletions come in
 * batches ~20 ms apart, and a main thread idle in between would otherwise bring the commits back inline
 * between each two (every switch makes new writes wait for the batch in flight: the prune bench's slowest
 * answers went from 73 to 90–103 ms with that).
 */
export const MAINTENANCE_HOLD_MS = 5_000;
/** How long after the start (warm()) the thread is loaded, when the writer starts inline. */
export const THREAD_WARM_MS = 1_000;

/** The calling thread's CPU time in ms (user + system), or undefined where /proc does not say. */
export function threadCpuMs(): number | undefined {
  try {
    const stat = readFileSync("/proc/thread-self/stat", "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, in clock ticks of 10 ms (USER_HZ is 100 on Linux).
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** The main thread's CPU share since the last sample, once at least SAMPLE_MS passed; undefined otherwise. */
export function mainThreadLoad(cpuMs: () => number | undefined = threadCpuMs, now: () => number = performance.now.bind(performance)) {
  let last: { at: number; cpu: number } | undefined;
  return (): number | undefined => {
    const at = now();
    if (last && at - last.at < SAMPLE_MS) return undefined;
    const cpu = cpuMs();
    if (cpu === undefined) return undefined;
    const previous = last;
    last = { at, cpu };
    return previous ? (cpu - previous.cpu) / (at - previous.at) : undefined;
  };
}

export type WriterMode = "inline" | "thread";

/** An op of retention's maintenance (a deferred op is always a run's write). */
const isMaintenance = (op: QueuedOp): boolean => typeof op !== "function" && (op.op === "deleteRuns" || op.op === "returnFreePages");

export interface AdaptiveWriterOptions {
  /** The main thread's CPU share now (default mainThreadLoad()), or undefined when there is no new reading. */
  load?: () => number | undefined;
  /** Told of each switch once the other writer took over, with the reading that caused it (none: forced). */
  onSwitch?: (mode: WriterMode, load: number | undefined) => void;
  /** The clock of MAINTENANCE_HOLD_MS, ms (default performance.now). */
  now?: () => number;
  /** Told what went wrong outside any write (the main thread's connection could not open, onSwitch threw). */
  onError?: (error: unknown) => void;
  /** Which writer commits first (default inline). */
  start?: WriterMode;
}

/** A write made while the writer switches, handed to the writer taking over in call order. */
type Held = { ops: QueuedOp[]; resolve: () => void; reject: (error: Error) => void } | { op: QueuedOp };

export class AdaptiveWriter implements RunWrites {
  private mode: WriterMode;
  /** The mode a switch in progress goes to (= mode when none is). */
  private target: WriterMode;
  /** Settles once the switch in progress is over; writes meanwhile wait in `held`. */
  private switching: Promise<void> | undefined;
  private held: Held[] = [];
  private closed = false;
  switches = 0;

  private readonly load: () => number | undefined;
  private readonly onSwitch: AdaptiveWriterOptions["onSwitch"];
  private readonly onError: (error: unknown) => void;
  private readonly now: () => number;
  /** Until when the thread keeps the commits whatever the load (MAINTENANCE_HOLD_MS). */
  private heldOnThreadUntil = Number.NEGATIVE_INFINITY;
  private made: InlineWriter | undefined;
  private warming: ReturnType<typeof setTimeout> | undefined;
  /** The current writer's batch and write counts at the last reading (or at the switch to it). */
  private counted = { batches: 0, ops: 0 };

  /** `inline` is made when first needed (opening its connection takes milliseconds a start can spare). */
  constructor(
    private readonly makeInline: () => InlineWriter,
    private readonly thread: ThreadWriter,
    options: AdaptiveWriterOptions = {},
  ) {
    this.load = options.load ?? mainThreadLoad();
    this.onSwitch = options.onSwitch;
    this.onError = options.onError ?? (() => {});
    this.now = options.now ?? performance.now.bind(performance);
    this.mode = this.target = options.start ?? "inline";
  }

  /** Which writer commits now. */
  get current(): WriterMode {
    return this.mode;
  }

  private get writer(): RunWrites {
    if (this.mode === "thread") return this.thread;
    if (this.inline()) return this.made!;
    // Starting inline, the connection could not open: the thread commits instead.
    this.mode = this.target = "thread";
    return this.thread;
  }

  /**
   * Makes the inline side if it is not made yet; false (and said why) when its connection cannot open, which is
   * not expected (the server's own connection to the same file is open): the thread then keeps committing.
   */
  private inline(): boolean {
    try {
      this.made ??= this.makeInline();
      return true;
    } catch (error) {
      this.onError(new Error(`the run writer commits on its thread: the main thread's connection could not open: ${(error as Error)?.message ?? error}`));
      return false;
    }
  }

  write(ops: QueuedOp[]): Promise<void> {
    if (ops.some(isMaintenance)) this.offMainThread();
    else this.consider();
    if (!this.switching) return this.writer.write(ops);
    return new Promise((resolve, reject) => this.held.push({ ops, resolve, reject }));
  }

  fire(op: QueuedOp): void {
    if (isMaintenance(op)) this.offMainThread();
    else this.consider();
    if (!this.switching) this.writer.fire(op);
    else this.held.push({ op });
  }

  /**
   * Retention's deletions, the return of free pages and the WAL's truncation take tens of milliseconds a
   * batch (and more): the thread does them, whatever the load, as it did before this writer existed. One
   * that arrives while a switch to inline drains turns that switch back.
   */
  private offMainThread(): void {
    this.heldOnThreadUntil = this.now() + MAINTENANCE_HOLD_MS;
    if (this.target === "inline") void this.switchTo("thread");
  }

  /** Reads the load and the writes per commit, and switches when they crossed their thresholds. */
  private consider(): void {
    if (this.switching || this.closed) return;
    const load = this.load();
    if (load === undefined) return;
    const perCommit = this.writesPerCommit();
    if (this.mode === "inline" && load >= TO_THREAD && perCommit >= THREAD_MIN_WRITES) void this.switchTo("thread", load);
    else if (this.mode === "thread" && (load <= TO_INLINE || perCommit < INLINE_MAX_WRITES) && this.now() >= this.heldOnThreadUntil)
      void this.switchTo("inline", load);
  }

  /** The current writer's stats (an inline side not made yet has none). */
  private currentStats(): { batches: number; ops: number } {
    return (this.mode === "inline" ? this.made?.stats : this.thread.stats) ?? { batches: 0, ops: 0 };
  }

  /** Writes per commit of the current writer since the last reading (0 when it committed nothing). */
  private writesPerCommit(): number {
    const last = this.counted;
    this.counted = { ...this.currentStats() };
    const commits = this.counted.batches - last.batches;
    return commits > 0 ? (this.counted.ops - last.ops) / commits : 0;
  }

  /**
   * Switches once the current writer committed and synced all it holds (tests call it to force a switch).
   * Settles when no switch is in progress any more.
   */
  switchTo(mode: WriterMode, load?: number): Promise<void> {
    if (this.closed) return this.switching ?? Promise.resolve();
    this.target = mode;
    if (!this.switching) {
      if (mode === this.mode) return Promise.resolve();
      // takeOver awaits the drain before it ends, so `switching` is set before it is cleared.
      this.switching = this.takeOver(load);
    }
    return this.switching;
  }

  private async takeOver(load: number | undefined): Promise<void> {
    while (this.mode !== this.target) {
      await this.drainCurrent();
      const goal = this.target;
      if (goal === this.mode) break; // turned back while the current writer drained
      // Made before anything changes: a connection that cannot open leaves the thread committing.
      if (goal === "inline" && !this.inline()) {
        this.target = this.mode;
        break;
      }
      this.mode = goal;
      this.switches++;
      this.counted = { ...this.currentStats() };
      if (goal === "inline") this.made!.forget();
      else {
        this.thread.forget();
        // Its checkpoints would contend with the thread's; it starts again with the next inline commit.
        this.made?.stopCheckpointer();
      }
      try {
        this.onSwitch?.(goal, load);
      } catch (error) {
        this.onError(error);
      }
    }
    // Synchronously, before anything else can write: the held writes, in call order, then the others.
    const held = this.held;
    this.held = [];
    for (const entry of held) {
      if ("ops" in entry) this.writer.write(entry.ops).then(entry.resolve, entry.reject);
      else this.writer.fire(entry.op);
    }
    this.switching = undefined;
  }

  get pending(): number {
    return (this.made?.pending ?? 0) + this.thread.pending + this.held.length;
  }

  get stats() {
    const inline = this.made?.stats ?? { batches: 0, ops: 0 };
    return { batches: inline.batches + this.thread.stats.batches, ops: inline.ops + this.thread.stats.ops };
  }

  async drain(): Promise<void> {
    while (this.switching) await this.switching;
    await this.drainCurrent();
  }

  /** The current writer's drain (an inline side not made yet holds nothing). */
  private async drainCurrent(): Promise<void> {
    await (this.mode === "inline" ? this.made?.drain() : this.thread.drain());
  }

  async truncateWal(): Promise<boolean> {
    this.offMainThread();
    while (this.switching) await this.switching;
    return this.writer.truncateWal();
  }

  /**
   * Called as the server starts. The thread loads now if it commits first, else THREAD_WARM_MS later (not
   * while the server starts): a switch to it then does not wait for that.
   */
  warm(): void {
    if (this.mode === "thread") {
      this.thread.warm();
      return;
    }
    this.warming ??= setTimeout(() => {
      if (!this.closed) this.thread.warm();
    }, THREAD_WARM_MS);
    (this.warming as { unref?: () => void }).unref?.();
  }

  /** No switch after this (a write still arriving goes to the writer in place, as with one writer alone). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.warming);
    while (this.switching) await this.switching;
    await this.made?.close();
    await this.thread.close();
  }
}

export interface SqliteRunWriterOptions {
  /** The server's connection (an in-memory database's only one). */
  db: Db;
  /** The database file, null when in memory. */
  dbPath: string | null;
  /** Where other threads open the database when dbPath is null (store/open.ts storeAddress). */
  storeAddress: string | null;
  mode: "auto" | "thread" | "inline";
  synchronous: "FULL" | "NORMAL";
  onError: (error: unknown) => void;
  onSwitch?: AdaptiveWriterOptions["onSwitch"];
}

/**
 * The SQLite run writer WEFT_RUN_WRITER asks for. The thread opens its own connection to the file, never to an
 * in-memory database (which a second connection cannot share): that one commits inline on the server's
 * connection. `auto` needs a file and a readable CPU time (Linux), else it is the thread alone. The adaptive
 * writer's inline side commits through a connection of its own with the thread's small cache: the pages it
 * writes are not read again, and in the server's 16 MB cache they took ~16 MiB of its peak RSS (140 against
 * 124 MiB, bench/peers.ts).
 */
export function sqliteRunWriter(o: SqliteRunWriterOptions): RunWrites {
  const address = o.dbPath ?? o.storeAddress;
  if (!address || o.mode === "inline") return new InlineWriter(o.db, o.onError, { syncWal: o.dbPath ? `${o.dbPath}-wal` : null });
  const thread = new ThreadWriter({ dbPath: address, synchronous: o.synchronous }, o.onError);
  const path = o.dbPath;
  if (o.mode !== "auto" || !path || threadCpuMs() === undefined) return thread;
  const inline = () =>
    new InlineWriter(openDatabase(path, { synchronous: o.synchronous, migrate: false, cacheKiB: WRITER_CACHE_KIB }), o.onError, {
      syncWal: `${path}-wal`,
      ownsDb: true,
    });
  return new AdaptiveWriter(inline, thread, { onError: o.onError, onSwitch: o.onSwitch });
}
