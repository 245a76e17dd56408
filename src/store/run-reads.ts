/**
 * The heavy reads of runs — a list page with its exact total, a run's steps for its detail — answered without
 * holding the thread that serves HTTP. Each costs a few queries (a sum of counts, an hour walk, a page; a run's
 * records and step rows).
 *
 * They run on reader threads (READER_THREADS by default): on SQLite a deep page or a long run holds the thread
 * that reads it for milliseconds (bun:sqlite answers synchronously), and on the serving thread 20 list reads at
 * once held every other request (a webhook, /healthz) for 50–400 ms; on PostgreSQL each read is the storage
 * port's (./postgres/run-reads.ts), awaited on the thread's own small pool, and decoding its rows and records
 * is the thread's work, not the serving thread's (read there, 20 reads at once held /healthz for 25 ms at the
 * median). Each thread has connections of its own (SQLite: one reading a WAL snapshot beside the writer), so
 * reads also overlap one another; a read queues for a thread, never the serving thread for a read. A database
 * no second connection can open (in memory) is read on the calling thread; so are PostgreSQL's reads with
 * WEFT_READER_THREADS=0.
 *
 * A list page comes back as the API's JSON (RunPage): the serving thread neither parses the reader's rows nor
 * serialises (and checks) the answer. Measured with one client reading 250,000 runs, its CPU per read fell from
 * 650–880 to 420–560 µs for a page of 20 runs and from ~1,250 to ~650 µs for a page of 100 (docs/scaling.md).
 *
 * Reads see what is committed: callers that must see their own queued writes wait for the run writer first
 * (src/core/runs/runs.ts).
 */
import { threadEntry } from "../lib/thread-entry";
import type { Synchronous } from "../config";
import { isPostgres } from "./postgres/handle";
import type { RunReadRepository } from "./run-read-repository";
import { pageOfRuns, type RunListFilter, type RunPage, type StepRow } from "./run-rows";
import { RunStore } from "./sqlite/run-store";
import type { Db } from "./db";
import { storageOf } from "./storage";
import { errorOf, type Failure } from "./storage-errors";

/** Reader threads by default: two reads at once, which two cores can serve beside the requests. */
export const READER_THREADS = 2;
/** How long closing waits for the reads already sent. */
const CLOSE_WAIT_MS = 2_000;

export interface RunReads {
  /** One page of a workspace's runs, as the API's JSON, and the exact number that match (RunStore.list). */
  list(filter: RunListFilter): Promise<RunPage>;
  /** A run's steps for its detail, at most `max` (RunStore.stepsBounded). */
  stepsBounded(runId: string, max: number): Promise<{ steps: StepRow[]; omitted: number }>;
  /** Ends the threads once the reads sent are answered; new reads fail. */
  close(): Promise<void>;
}

/** What the serving thread asks a reader thread (./reader-thread.ts), as JSON. */
export type ReaderRequest = { t: "list"; id: number; filter: RunListFilter } | { t: "steps"; id: number; runId: string; max: number };
/** A reader thread's answer: `id` 0 answers the start; a failed read has the storage error's kind when it had one. */
export type ReaderReply = { id: number; result: unknown } | { id: number; failure: Failure };
/**
 * What a reader thread posts: its reply as JSON and, for a list page, the page's runs (RunPage.runs) beside
 * it, so that JSON text is not escaped into the reply and parsed back on the serving thread.
 */
export type ReaderMessage = [reply: string, runs?: string];

/** A read that failed, or a reader thread that could not start or stopped. */
export class ReadError extends Error {}

/**
 * The reads of `store`: on PostgreSQL the storage port's, awaited; on SQLite on `threads` reader threads opening
 * `address` (store/open.ts storeAddress), or on the calling thread when `address` is null or `threads` is 0.
 */
export function openRunReads(db: Db, address: string | null, options: { threads?: number; synchronous: Synchronous }): RunReads {
  const threads = options.threads ?? READER_THREADS;
  if (isPostgres(db) && (address === null || threads <= 0)) return portReads(storageOf(db).runReads);
  if (address === null || threads <= 0) return inlineReads(new RunStore(db));
  return new ThreadedReads(address, options.synchronous, threads);
}

/** The port's reads (PostgreSQL: its own statements on the pool); nothing to close (the pool closes with the store). */
function portReads(reads: RunReadRepository): RunReads {
  return {
    list: async (filter) => pageOfRuns(await reads.list(filter)),
    stepsBounded: (runId, max) => reads.stepsBounded(runId, max),
    close: async () => {},
  };
}

function inlineReads(store: RunStore): RunReads {
  return {
    list: async (filter) => pageOfRuns(store.list(filter)),
    stepsBounded: async (runId, max) => store.stepsBounded(runId, max),
    close: async () => {},
  };
}

interface Reader {
  worker: Worker;
  /** Reads sent and not answered. */
  waiting: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
  /** Settles once the thread's connection is open (rejects when it cannot open). */
  ready: Promise<void>;
}

/**
 * Settles a read's promise (and so runs the rest of its request's handler and writes the answer) on a later turn of
 * the event loop rather than at once. Readers' answers arrive as messages, and Bun runs the messages it has before it
 * reads its sockets again: with 20 list reads answered back to back, up to 20 answers were written between two
 * reads of the sockets (each is 19 send(2) calls: Bun writes an answer that completes after an await piece by
 * piece), and a /healthz that arrived meanwhile waited for all of them. setImmediate's callbacks wait for the
 * loop's next turn, so fewer answers go out between two reads of the sockets (at most 14 in the sitting that
 * measured 20) and /healthz's slowest answer during 20 list reads fell from 13–37 ms to 10–27 ms, under 20 ms
 * in 14 of 15 rounds, against 2 of 9 before (docs/scaling.md, "Where the serving thread's time goes").
 */
const settleLater = (settle: () => void) => void setImmediate(settle);

class ThreadedReads implements RunReads {
  private readonly readers: Reader[] = [];
  private next = 0;
  private closed = false;

  constructor(
    private readonly address: string,
    private readonly synchronous: Synchronous,
    private readonly threads: number,
  ) {}

  list(filter: RunListFilter) {
    return this.ask<RunPage>((id) => ({ t: "list", id, filter }));
  }

  stepsBounded(runId: string, max: number) {
    return this.ask<{ steps: StepRow[]; omitted: number }>((id) => ({ t: "steps", id, runId, max }));
  }

  /** Lets the reads sent finish (up to CLOSE_WAIT_MS: a server stopping still answers them), then ends the threads. */
  async close(): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + CLOSE_WAIT_MS;
    while (this.readers.some((reader) => reader.waiting.size > 0) && Date.now() < deadline) await Bun.sleep(5);
    for (const reader of this.readers.splice(0)) {
      for (const waiter of reader.waiting.values()) waiter.reject(new ReadError("the store is closed"));
      reader.waiting.clear();
      reader.worker.terminate();
    }
  }

  /** Sends a read to the reader with the fewest reads waiting (threads start on first use, not at the server's start). */
  private async ask<T>(request: (id: number) => ReaderRequest): Promise<T> {
    if (this.closed) throw new ReadError("the store is closed");
    const reader = this.pick();
    await reader.ready;
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      reader.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      (reader.worker as { ref?: () => void }).ref?.();
      reader.worker.postMessage(JSON.stringify(request(id)));
    });
  }

  private pick(): Reader {
    let best: Reader | undefined;
    for (const reader of this.readers) if (!best || reader.waiting.size < best.waiting.size) best = reader;
    if (best && (best.waiting.size === 0 || this.readers.length >= this.threads)) return best;
    const reader = this.spawn();
    this.readers.push(reader);
    return reader;
  }

  private spawn(): Reader {
    const worker = new Worker(threadEntry("store/reader-thread.ts"));
    const waiting: Reader["waiting"] = new Map();
    let started!: (error?: string) => void;
    const ready = new Promise<void>((resolve, reject) => {
      started = (error) => (error === undefined ? resolve() : reject(new ReadError(`the run reader could not open the store: ${error}`)));
    });
    const reader: Reader = { worker, waiting, ready };
    worker.onmessage = (event: MessageEvent) => {
      const [text, runs] = event.data as ReaderMessage;
      const reply = JSON.parse(text) as ReaderReply;
      if (reply.id === 0) return started("failure" in reply ? reply.failure.message : undefined);
      const waiter = waiting.get(reply.id);
      waiting.delete(reply.id);
      // Held open only while a read is due: an idle server (or a test's app) can end without closing it.
      if (waiting.size === 0) (worker as { unref?: () => void }).unref?.();
      // Settled on a later turn of the event loop (see settleLater).
      if ("failure" in reply) settleLater(() => waiter?.reject(errorOf(reply.failure)));
      // A list page's reply holds its total; its runs come beside it (ReaderMessage): together a RunPage.
      else settleLater(() => waiter?.resolve(runs === undefined ? reply.result : { total: (reply.result as { total: number }).total, runs }));
    };
    worker.onerror = (event) => {
      // A thread that died fails what it held; the next read starts another.
      const error = new ReadError(`the run reader stopped: ${event.message}`);
      started(error.message);
      for (const waiter of waiting.values()) waiter.reject(error);
      waiting.clear();
      const at = this.readers.indexOf(reader);
      if (at >= 0) this.readers.splice(at, 1);
    };
    worker.postMessage(JSON.stringify({ t: "init", address: this.address, synchronous: this.synchronous }));
    (worker as { unref?: () => void }).unref?.();
    // Not awaited by anyone yet: a failed start is reported to the read that waits for it.
    ready.catch(() => {
      const at = this.readers.indexOf(reader);
      if (at >= 0) this.readers.splice(at, 1);
      worker.terminate();
    });
    return reader;
  }
}
