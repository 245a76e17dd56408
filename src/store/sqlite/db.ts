/**
 * Opens the embedded SQLite database with the pragmas Weft relies on and applies migrations.
 * One connection per process does the writing; bun:sqlite calls are synchronous, so the
 * process itself is the single writer. (The store's `Db` type and what PostgreSQL's opener shares with
 * this one are ../db.ts.)
 */
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Synchronous } from "../../config";
import { type Db, MigrationFailedError, NewerSchemaError, UpgradeBackupError, type UpgradeListener } from "../db";
import { describePending, type Migration } from "../migration";
import { backupDatabase, stampedPath } from "./backup";
import { migrations as shipped } from "./migrations";

export interface OpenOptions {
  synchronous?: Synchronous;
  /** Apply pending migrations (default true). `weft migrate` applies them explicitly. */
  migrate?: boolean;
  /** Page cache of this connection, KiB (default 16,000). */
  cacheKiB?: number;
  /** Told before and after migrations upgrade a database that had a schema (not a new one). */
  onUpgrade?: UpgradeListener;
  /** Test hook: the migrations to apply instead of the shipped ones (e.g. one made to fail). */
  migrations?: Migration[];
}

/** Where the copy written before an upgrade goes: `backups/` beside the database (docs/operations.md, "Upgrade"). */
export const upgradeBackupDir = (databaseFile: string) => join(dirname(databaseFile), "backups");

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
  if (options.migrate !== false) {
    try {
      migrate(db, options.onUpgrade, options.migrations);
    } catch (error) {
      db.close();
      throw error;
    }
  }
  return db;
}

/**
 * Applies every migration newer than the database's `user_version`, all of them in one transaction: a failing
 * one leaves the database exactly as it was (MigrationFailedError says how to go back). A database that had a
 * schema is first copied to backups/ beside it (`weft-schema-N-before-M-<time>.db`); no copy, no upgrade. A
 * database of a newer schema is refused (an older weft would write rows the newer layout reads wrongly).
 */
export function migrate(db: Db, onUpgrade?: UpgradeListener, migrations: Migration[] = shipped): number[] {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) throw new NewerSchemaError(`the database ${db.filename}`, current, latest);
  if (current === latest) return [];
  const pending = migrations.filter((m) => m.version > current);
  const upgrade = {
    from: current,
    to: latest,
    ...describePending(pending),
    backup: current > 0 ? upgradeBackupPath(db, current, latest) : undefined,
  };
  const started = performance.now();
  // Announced first: the copy of a large database takes a while too.
  if (current > 0) onUpgrade?.(upgrade);
  if (upgrade.backup) backupBeforeUpgrade(db, upgrade.backup);
  // A migration may rewrite a large table and build its indexes: their sorts spill to temporary files instead
  // of memory (schema 18 on 10,000,000 runs: 825 MiB of memory otherwise). Not changeable inside a transaction.
  const tempStore = (db.query("PRAGMA temp_store").get() as { temp_store: number }).temp_store;
  db.run("PRAGMA temp_store = FILE");
  let running: Migration | undefined;
  try {
    db.transaction(() => {
      for (const migration of pending) {
        running = migration;
        db.run(migration.sql);
        db.run(`PRAGMA user_version = ${migration.version}`);
      }
    }).immediate();
  } catch (error) {
    throw new MigrationFailedError({
      where: `the database ${db.filename}`,
      migration: running ? `${running.version} ${running.name}` : "(none started)",
      from: current,
      reason: (error as Error).message,
      backup: upgrade.backup,
    });
  } finally {
    db.run(`PRAGMA temp_store = ${tempStore}`);
  }
  if (current > 0) onUpgrade?.({ ...upgrade, ms: Math.round(performance.now() - started) });
  return pending.map((m) => m.version);
}

/** Where the copy of a database taken before its schema changes goes; undefined for an in-memory one. */
function upgradeBackupPath(db: Db, from: number, to: number): string | undefined {
  if (!db.filename || db.filename === ":memory:") return undefined;
  return stampedPath(join(upgradeBackupDir(db.filename), `weft-schema-${from}-before-${to}-`), ".db");
}

function backupBeforeUpgrade(db: Db, path: string): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true });
    backupDatabase(db, path);
  } catch (error) {
    throw new UpgradeBackupError(
      `nothing was upgraded: the copy of the database written before an upgrade could not be written to ${dir} (${(error as Error).message}); free space there, or move the database to a disk with room for a second copy`,
    );
  }
}

/** The migrations this weft would apply to the database at `path` (`weft migrate --dry-run`), changing nothing. */
export function pendingSqliteMigrations(path: string): { version: number; latest: number; pending: Migration[] } {
  const latest = shipped.at(-1)?.version ?? 0;
  if (!existsSync(path)) return { version: 0, latest, pending: shipped };
  const db = new Database(path, { readonly: true });
  try {
    const version = schemaVersion(db);
    return { version, latest, pending: shipped.filter((m) => m.version > version) };
  } finally {
    db.close();
  }
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
