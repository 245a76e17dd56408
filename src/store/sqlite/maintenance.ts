/**
 * Keeping the SQLite database file small: incremental auto-vacuum, returning free pages to the file system, and
 * truncating the write-ahead log. Retention (src/engine/retention.ts) decides when; this says how. (PostgreSQL's
 * autovacuum does this work on its own: postgres/run-retention.ts answers that nothing is to be done.)
 */
import type { Db } from "../db";

const pragmaNumber = (db: Db, name: string): number => Object.values(db.query(`PRAGMA ${name}`).get() as Record<string, number>)[0] ?? 0;

/** What an operator runs, during maintenance, to let a database that predates incremental vacuum shrink. */
export const INCREMENTAL_VACUUM_HINT = "run `PRAGMA auto_vacuum = INCREMENTAL; VACUUM;` on the database during maintenance to let it shrink";

/**
 * Switches the database to incremental auto-vacuum once (needs a VACUUM; quick on a young database).
 * Answers false, changing nothing, when the database is already larger than `maxBytes` (VACUUM would
 * stall it), with its size and INCREMENTAL_VACUUM_HINT.
 */
export function ensureIncrementalVacuum(db: Db, maxBytes: number): { enabled: boolean; bytes: number; hint?: string } {
  const bytes = pragmaNumber(db, "page_count") * pragmaNumber(db, "page_size");
  if (pragmaNumber(db, "auto_vacuum") === 2) return { enabled: true, bytes };
  if (bytes > maxBytes) return { enabled: false, bytes, hint: INCREMENTAL_VACUUM_HINT };
  db.run("PRAGMA auto_vacuum = INCREMENTAL");
  db.run("VACUUM");
  return { enabled: true, bytes };
}

/** Pages of the database file that are free (0 outside incremental auto-vacuum mode, where they cannot be returned). */
export function freePages(db: Db): number {
  if (pragmaNumber(db, "auto_vacuum") !== 2) return 0;
  return pragmaNumber(db, "freelist_count");
}

/** Gives up to `maxPages` free pages back to the file system (all when not given); answers how many it gave. */
export function returnFreePages(db: Db, maxPages?: number): number {
  // Outside incremental auto-vacuum mode the pragma returns nothing (see INCREMENTAL_VACUUM_HINT).
  if (pragmaNumber(db, "auto_vacuum") !== 2) return 0;
  const free = pragmaNumber(db, "freelist_count");
  if (free === 0) return 0;
  const pages = maxPages === undefined ? free : Math.min(free, maxPages);
  db.run(`PRAGMA incremental_vacuum(${pages})`);
  return pages;
}

/** Checkpoints the WAL and truncates it; false when a reader holds it (busy), so a later call retries. */
export function truncateWal(db: Db): boolean {
  try {
    // A reader or another checkpointer in the way is not an error: the result row says busy.
    const result = db.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number } | null;
    return !result || result.busy === 0;
  } catch {
    return false;
  }
}
