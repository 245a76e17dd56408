/**
 * The run writer of the store the process opened: on PostgreSQL the asynchronous client commits batches from
 * the serving thread without blocking it (postgres/writer.ts); on SQLite WEFT_RUN_WRITER picks the writer
 * (sqlite/adaptive-writer.ts). The engine asks for "the run writer" and never learns which database it writes to.
 */
import { sqliteRunWriter, type SqliteRunWriterOptions } from "./sqlite/adaptive-writer";
import { PostgresWriter } from "./postgres/writer";
import { isPostgres } from "./postgres/handle";
import { postgresPoolOf } from "./storage";
import type { RunWrites } from "./run-writes";

export interface RunWriterOptions extends SqliteRunWriterOptions {
  /** Connections a database server's writer may commit on at once (WEFT_DATABASE_POOL). */
  pool: number;
}

export function openRunWriter(options: RunWriterOptions): RunWrites {
  return isPostgres(options.db) ? new PostgresWriter(options.db, postgresPoolOf(options.db), options.onError, options.pool) : sqliteRunWriter(options);
}
