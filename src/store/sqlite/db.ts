/**
 * Opens the embedded SQLite database with the pragmas Weft relies on and applies migrations.
 * One connection per process does the writing; bun:sqlite calls are synchronous, so the
 * process itself is the single writer. (The store's `Db` type and what PostgreSQL's opener shares with
 * this one are ../db.ts.)
 */
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Synchronous } from "../../config";
import { type Db, NewerSchemaError, type UpgradeListener } from "../db";
import { migrations } from "./migrations";

export interface OpenOptions {
  synchronous?: Synchronous;
  /** Apply pending migrations (default true). `weft migrate` applies them explicitly. */
  migrate?: boolean;
  /** Page cache of this connection, KiB (default 16,000). */
  cacheKiB?: number;
  /** Told before and after migrations upgrade a database that had a schema (not a new one). */
  onUpgrade?: UpgradeListener;
}

export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  // busy_timeout first so that every later pragma waits instead of failing on a lock.
  db.run("PRAGMA busy_timeout = 5000");
  // A new database starts in incremental auto-vacuum mode (retention gives freed pages back to the file
  // system); it can be set without a VACUUM only before the first page is written, so before WAL mode.
  if ((db.query("PRAGMA page_count").get() as { page_count: number }).page_count === 0) db.run("PRAGMA auto_vacuum = INCREMENTAL");
  db.run("PRAGMA journal_mode = WAL");
  db.run(`PRAGMA synchronous = ${options.synchronous ?? "FULL"}`);
  db.run("PRAGMA journal_size_limit = 67108864");
  db.run("PRAGMA foreign_keys = ON");
  db.run("PRAGMA temp_store = MEMORY");
  db.run(`PRAGMA cache_size = -${options.cacheKiB ?? 16_000}`);
  if (options.migrate !== false) migrate(db, options.onUpgrade);
  return db;
}

/**
 * Applies every migration newer than the database's `user_version`, each in its own transaction. A database
 * of a newer schema is refused (an older weft would write rows the newer layout reads wrongly).
 */
export function migrate(db: Db, onUpgrade?: UpgradeListener): number[] {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) throw new NewerSchemaError(`the database ${db.filename}`, current, latest);
  const applied: number[] = [];
  if (current === latest) return applied;
  const pending = migrations.filter((m) => m.version > current);
  const upgrade = {
    from: current,
    to: latest,
    migrations: pending.map((m) => `${m.version} ${m.name}`),
    notes: pending.flatMap((m) => (m.note ? [`${m.version} ${m.name}: ${m.note}`] : [])),
  };
  const started = performance.now();
  if (current > 0) onUpgrade?.(upgrade);
  // A migration may rewrite a large table and build its indexes: their sorts spill to temporary files instead
  // of memory (schema 18 on 10,000,000 runs: 825 MiB of memory otherwise). Not changeable inside a transaction.
  const tempStore = (db.query("PRAGMA temp_store").get() as { temp_store: number }).temp_store;
  db.run("PRAGMA temp_store = FILE");
  try {
    for (const migration of pending) {
      db.transaction(() => {
        db.run(migration.sql);
        db.run(`PRAGMA user_version = ${migration.version}`);
      }).immediate();
      applied.push(migration.version);
    }
  } finally {
    db.run(`PRAGMA temp_store = ${tempStore}`);
  }
  if (current > 0) onUpgrade?.({ ...upgrade, ms: Math.round(performance.now() - started) });
  return applied;
}

export function schemaVersion(db: Db): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/**
 * A row object as named parameters for a statement (`$column` placeholders). bun:sqlite types bindings as
 * a union its typings cannot infer from an interface; this is the one place that says the row fits.
 */
export const bindRow = (row: object): SQLQueryBindings => row as SQLQueryBindings;

/** The number a `SELECT COUNT(*) AS n` statement answered (such a statement always answers one row). */
export const countOf = (row: { n: number } | null | undefined): number => row?.n ?? 0;
