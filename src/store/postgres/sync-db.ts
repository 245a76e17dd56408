/**
 * PostgreSQL behind the same synchronous surface as bun:sqlite, so every repository of src/store/ runs on
 * either database unchanged: `query(sql).get/all/run`, `run(sql)`, `transaction(fn).immediate()`.
 *
 * How: a worker thread (./sync-thread.ts) owns one connection through Bun's SQL client; a call posts its
 * request on a MessagePort, waits on a shared counter (Atomics.wait) and takes the answer off the port with
 * receiveMessageOnPort — about 120 µs a query on loopback against 70 µs awaited directly. The wait blocks
 * this thread as bun:sqlite's own calls do; a transaction holds the thread's connection from BEGIN to
 * COMMIT, and since the caller is blocked meanwhile, nothing else can slip into it.
 *
 * The statements are written for SQLite. `toPostgres` rewrites the few SQLite idioms the repositories use
 * (listed on it) and the placeholders (`?` and `$name` become `$1…`); anything else SQLite-only fails with
 * PostgreSQL's own error, naming the statement. A refusal Weft tells apart (a unique key, text PostgreSQL
 * cannot store, a full disk, …) is thrown as StorageError with its kind, from the SQLSTATE (../storage-errors.ts).
 */
import type { Database } from "bun:sqlite";
import { MessageChannel, type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import { threadEntry } from "../../lib/thread-entry";
import { storageErrorOf } from "../storage-errors";

export type SyncRequest =
  /** Without params the text goes as a simple query, which may hold several statements. */
  { op: "query"; text: string; params?: unknown[] } | { op: "begin" } | { op: "commit" } | { op: "rollback" } | { op: "close" };

/** The thread's first message: where to connect, where requests come from, the counter it wakes its caller with. */
export type ThreadStart = { url: string; port: MessagePort; counter: SharedArrayBuffer };

export type SyncReply = { rows: Array<Record<string, unknown>>; count: number } | { error: string; code?: string };

/**
 * An error of the database or of this client that is not one Weft tells apart (those are thrown as
 * StorageError, with a kind: ../storage-errors.ts); `code` is PostgreSQL's SQLSTATE when it sent one.
 */
export class PostgresError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * A statement written for SQLite, as PostgreSQL takes it, with the order in which to bind its parameters
 * (a name for `$name`, a position for `?`). Rewrites:
 * - `INSERT OR IGNORE INTO …` → `INSERT INTO … ON CONFLICT DO NOTHING`
 * - `instr(a, b)` → `strpos(a, b)`
 * - `x = ? COLLATE NOCASE` → `lower(x) = lower(?)`; `ORDER BY x COLLATE NOCASE` → `ORDER BY lower(x)`
 * - `json_each(x)` (a JSON array's items) → `jsonb_array_elements_text(x::jsonb) AS json_each(value)`
 */
export function toPostgres(sqlite: string): { text: string; order: Array<string | number> } {
  let text = sqlite
    .replace(/\bINSERT\s+OR\s+IGNORE\s+INTO\b([\s\S]*)$/i, (_, rest: string) => `INSERT INTO${rest.replace(/;\s*$/, "")} ON CONFLICT DO NOTHING`)
    .replace(/\binstr\(/gi, "strpos(")
    .replace(/([\w.]+)\s*=\s*(\?|\$\w+)\s+COLLATE\s+NOCASE\b/gi, "lower($1) = lower($2)")
    .replace(/ORDER\s+BY\s+([\w.]+)\s+COLLATE\s+NOCASE\b/gi, "ORDER BY lower($1)")
    .replace(/\bjson_each\(([^()]+)\)/gi, "jsonb_array_elements_text(($1)::jsonb) AS json_each(value)");
  const order: Array<string | number> = [];
  const named = new Map<string, number>();
  let positional = 0;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      // A literal or quoted identifier: copied as is (a doubled quote is two literals back to back).
      const end = text.indexOf(c, i + 1);
      const stop = end === -1 ? text.length : end + 1;
      out += text.slice(i, stop);
      i = stop - 1;
    } else if (c === "?") {
      order.push(positional++);
      out += `$${order.length}`;
    } else if (c === "$" && /[A-Za-z_]/.test(text[i + 1] ?? "")) {
      const name = /^[A-Za-z_]\w*/.exec(text.slice(i + 1))![0];
      let index = named.get(name);
      if (index === undefined) {
        order.push(name);
        index = order.length;
        named.set(name, index);
      }
      out += `$${index}`;
      i += name.length;
    } else {
      out += c;
    }
  }
  text = out;
  return { text, order };
}

/** A value as bun:sqlite would bind it: booleans as 1/0, undefined as NULL. */
export function bindable(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === undefined) return null;
  return value;
}

class PostgresStatement {
  private readonly text: string;
  private readonly order: Array<string | number>;

  constructor(
    private readonly db: PostgresDb,
    readonly source: string,
  ) {
    ({ text: this.text, order: this.order } = toPostgres(source));
  }

  private params(args: unknown[]): unknown[] {
    const first = args[0];
    const byName = args.length === 1 && first !== null && typeof first === "object" && !Array.isArray(first) && !(first instanceof Uint8Array);
    return this.order.map((key) => {
      if (typeof key === "number") return bindable(args[key]);
      if (!byName) throw new PostgresError(`statement needs named parameter $${key}: ${this.source.slice(0, 200)}`, undefined);
      const values = first as Record<string, unknown>;
      if (!(key in values)) throw new PostgresError(`missing parameter "${key}" for: ${this.source.slice(0, 200)}`, undefined);
      return bindable(values[key]);
    });
  }

  all(...args: unknown[]) {
    return this.db.call({ op: "query", text: this.text, params: this.params(args) }).rows;
  }
  get(...args: unknown[]) {
    return this.all(...args)[0] ?? null;
  }
  run(...args: unknown[]) {
    const { count } = this.db.call({ op: "query", text: this.text, params: this.params(args) });
    return { changes: count, lastInsertRowid: 0 };
  }
  finalize() {}
}

/** A connection thread and the first query it was given (SELECT 1), whose answer its opener waits for. */
interface Thread {
  url: string;
  worker: Worker;
  port: MessagePort;
  wake: Int32Array;
  /** The counter's value when the first query was posted. */
  seen: number;
}

function spawnThread(url: string): Thread {
  const wake = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  // A web Worker, not node:worker_threads' (which costs this thread ~10 ms more to create, and starts the
  // thread ~10 ms later): its first message gives it the URL, its port and the shared counter.
  const worker = new Worker(threadEntry("store/postgres/sync-thread.ts"));
  worker.postMessage({ url, port: port2, counter: wake.buffer } satisfies ThreadStart, [port2]);
  (worker as { unref?: () => void }).unref?.();
  const seen = Atomics.load(wake, 0);
  // The first query also proves the server answers (and fails the open with its error if not).
  port1.postMessage({ op: "query", text: "SELECT 1" } satisfies SyncRequest);
  return { url, worker, port: port1, wake, seen };
}

let early: Thread | undefined;

/**
 * `weft serve` on PostgreSQL: starts the store's connection thread before the program is loaded, so that
 * loading the thread, connecting and authenticating (~25 ms) happen while the main thread loads the rest;
 * the store opened later on the same URL takes this thread. Unused, it keeps nothing alive.
 */
export function startEarly(url: string): void {
  early ??= spawnThread(url);
}

export class PostgresDb {
  readonly dialect = "postgres";
  /** Not a file: the engine treats a database without a file name like an in-memory one. */
  readonly filename = "";
  private readonly worker: Worker;
  private readonly port;
  private readonly wake;
  private depth = 0;
  private closed = false;
  private readonly statements = new Map<string, PostgresStatement>();

  constructor(readonly url: string) {
    let thread = early;
    early = undefined;
    if (thread?.url !== url) {
      if (thread) void thread.worker.terminate();
      thread = spawnThread(url);
    }
    this.worker = thread.worker;
    this.port = thread.port;
    this.wake = thread.wake;
    this.answer({ op: "query", text: "SELECT 1" }, thread.seen);
  }

  get inTransaction() {
    return this.depth > 0;
  }

  call(request: SyncRequest): { rows: Array<Record<string, unknown>>; count: number } {
    if (this.closed) throw new PostgresError("the database connection is closed", undefined);
    const seen = Atomics.load(this.wake, 0);
    this.port.postMessage(request);
    return this.answer(request, seen);
  }

  /** Waits for the answer to `request`, posted when the counter was `seen`. */
  private answer(request: SyncRequest, seen: number): { rows: Array<Record<string, unknown>>; count: number } {
    // Atomics.wait may return before the thread answered (a signal such as SIGCHLD ends it early, the counter
    // unchanged): taking no answer then would hand this request's late answer to the next one. So wait until
    // the counter moved; the thread posts its answer before it moves the counter.
    while (Atomics.load(this.wake, 0) === seen) Atomics.wait(this.wake, 0, seen, 1_000);
    let received = receiveMessageOnPort(this.port);
    for (let tries = 0; !received && tries < 1_000; tries++) {
      Atomics.wait(this.wake, 0, Atomics.load(this.wake, 0), 1);
      received = receiveMessageOnPort(this.port);
    }
    const reply = received?.message as SyncReply | undefined;
    if (!reply) throw new PostgresError("the database thread did not answer", undefined);
    if ("error" in reply) {
      const where = request.op === "query" ? ` (in: ${request.text.replace(/\s+/g, " ").slice(0, 200)})` : "";
      const message = `${reply.error}${where}`;
      throw storageErrorOf(reply.code, message) ?? new PostgresError(message, reply.code);
    }
    return reply;
  }

  query(source: string) {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = new PostgresStatement(this, source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  prepare(source: string) {
    return this.query(source);
  }

  run(source: string, ...args: unknown[]) {
    return this.query(source).run(...args);
  }

  /**
   * As bun:sqlite's: the returned function runs `work` in a transaction; a nested call is a savepoint, so an
   * error it throws undoes only its own writes.
   */
  transaction<T>(work: (...args: unknown[]) => T) {
    const wrapped = (...args: unknown[]): T => {
      const depth = this.depth;
      const savepoint = `weft_${depth}`;
      if (depth === 0) this.call({ op: "begin" });
      else this.call({ op: "query", text: `SAVEPOINT ${savepoint}` });
      this.depth = depth + 1;
      let result: T;
      try {
        result = work(...args);
      } catch (error) {
        this.depth = depth;
        if (depth === 0) this.call({ op: "rollback" });
        else this.call({ op: "query", text: `ROLLBACK TO SAVEPOINT ${savepoint}` });
        throw error;
      }
      this.depth = depth;
      if (depth === 0) this.call({ op: "commit" });
      else this.call({ op: "query", text: `RELEASE SAVEPOINT ${savepoint}` });
      return result;
    };
    return Object.assign(wrapped, { immediate: wrapped, deferred: wrapped, exclusive: wrapped });
  }

  private readonly closers: Array<() => Promise<unknown>> = [];

  /** `close` is called as this connection closes (the storage port's pool: ../storage.ts). */
  whenClosed(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  close() {
    if (this.closed) return;
    for (const close of this.closers.splice(0)) void close().catch(() => {});
    try {
      this.call({ op: "close" });
    } finally {
      this.closed = true;
      this.port.close();
      void this.worker.terminate();
    }
  }

  /** Seen by the repositories as bun:sqlite's Database: the members they use are the ones above. */
  asDatabase(): Database {
    return this as unknown as Database;
  }
}

export const isPostgres = (db: unknown): db is PostgresDb => db instanceof PostgresDb;
