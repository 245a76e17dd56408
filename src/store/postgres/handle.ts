/**
 * The open PostgreSQL store as the rest of the process holds it: where it is (`url`) and what closes with it
 * (the storage port's pools: ../storage.ts). It answers no SQL itself: every query goes through the storage
 * port (../port.ts), awaited on a pool, so nothing ever waits for the database on the thread that serves
 * HTTP. Seen above src/store as the store's `Db`, like SQLite's; the members SQLite's handle answers
 * synchronously (`query`, `prepare`, `run`, `transaction`) throw here, naming the port to use instead.
 */
import type { Db } from "../db";

export class PostgresHandle {
  readonly dialect = "postgres";
  /** Not a file: the engine treats a database without a file name like an in-memory one. */
  readonly filename = "";
  /** Units of work hold a pooled connection of the port, never this handle. */
  readonly inTransaction = false;
  private closed = false;
  private readonly closers: Array<() => Promise<unknown>> = [];

  constructor(readonly url: string) {}

  /** `close` is called as the store closes (the storage port's pools: ../storage.ts). */
  whenClosed(close: () => Promise<unknown>): void {
    if (this.closed) void close().catch(() => {});
    else this.closers.push(close);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const close of this.closers.splice(0)) void close().catch(() => {});
  }

  private synchronous(): never {
    throw new Error("PostgreSQL answers only through the storage port (src/store/port.ts: storageOf(db)), awaited; this handle runs no SQL");
  }

  query(): never {
    return this.synchronous();
  }
  prepare(): never {
    return this.synchronous();
  }
  run(): never {
    return this.synchronous();
  }
  transaction(): never {
    return this.synchronous();
  }

  /** Seen by the code above the store as its `Db` (../db.ts). */
  asDatabase(): Db {
    return this as unknown as Db;
  }
}

export const isPostgres = (db: unknown): db is PostgresHandle => db instanceof PostgresHandle;
