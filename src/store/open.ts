/**
 * Which database the process stores in: PostgreSQL when WEFT_DATABASE_URL is set, else SQLite in the data
 * directory. Both come back as the store's `Db`: SQLite's connection, or PostgreSQL's handle
 * (postgres/handle.ts), which answers through the storage port only; nothing above the store knows which it got.
 */
import type { Synchronous } from "../config";
import { NewerSchemaError, type Db, type UpgradeListener } from "./db";
import type { Migration } from "./migration";
import { BackupError, backupDatabase, backupOffThread } from "./sqlite/backup";
import { migrate, openDatabase, pendingSqliteMigrations, schemaVersion } from "./sqlite/db";
import { type BackupCheck, checkBackup, type Restored, restoreBackup } from "./sqlite/restore";
import { migratePostgres, openPostgres, pendingPostgresMigrations, postgresSchemaVersion } from "./postgres/db";
import { postgresMigrations } from "./postgres/migrations";
import { isPostgres, PostgresHandle } from "./postgres/handle";

export interface StoreLocation {
  /** A postgres:// URL, or undefined for SQLite at `sqlitePath`. */
  databaseUrl: string | undefined;
  sqlitePath: string;
  synchronous: Synchronous;
}

/**
 * Where another thread of this process can open the same database (`openStoreAt`): the SQLite file, or the
 * PostgreSQL URL; null for an in-memory SQLite database, which no second connection can share.
 */
export function storeAddress(db: Db): string | null {
  if (isPostgres(db)) return db.url;
  return db.filename && db.filename !== ":memory:" ? db.filename : null;
}

/** True when other processes may share the store (PostgreSQL): instances on it form a cluster. */
export const sharedStore = (db: Db): boolean => isPostgres(db);

/** The SQLite file of a store, for SQLite-only machinery (the run writer thread); null otherwise. */
export function sqliteFile(db: Db): string | null {
  return isPostgres(db) ? null : storeAddress(db);
}

/** Opens, from another thread, the database `storeAddress` named (no migrations: its opener applied them). */
export function openStoreAt(address: string, synchronous: Synchronous): Db {
  if (/^postgres(?:ql)?:/.test(address)) return new PostgresHandle(address).asDatabase();
  return openDatabase(address, { synchronous, migrate: false });
}

/** Opens the store, applying pending migrations unless `migrate` is false. */
export async function openStore(location: StoreLocation, options: { migrate?: boolean; onUpgrade?: UpgradeListener } = {}): Promise<Db> {
  if (!location.databaseUrl)
    return openDatabase(location.sqlitePath, { synchronous: location.synchronous, migrate: options.migrate, onUpgrade: options.onUpgrade });
  // The schema is checked, and pending migrations run, on a connection of their own, awaited; migrations under
  // an advisory lock (instances starting together wait). A schema already up to date, the usual start, costs
  // one query there. Without migrations the same connection only proves the server answers.
  await migratePostgresIfBehind(location.databaseUrl, options.migrate !== false, options.onUpgrade);
  return new PostgresHandle(location.databaseUrl).asDatabase();
}

/** `weft migrate`: applies what is pending and says where, what and the resulting schema version. */
export async function migrateStore(location: StoreLocation, onUpgrade?: UpgradeListener): Promise<{ applied: number[]; version: number }> {
  if (location.databaseUrl) {
    const sql = await openPostgres(location.databaseUrl, { migrate: false, max: 1 });
    try {
      const applied = await migratePostgres(sql, onUpgrade);
      return { applied, version: await postgresSchemaVersion(sql) };
    } finally {
      await sql.close();
    }
  }
  const db = openDatabase(location.sqlitePath, { synchronous: location.synchronous, migrate: false });
  try {
    const applied = migrate(db, onUpgrade);
    return { applied, version: schemaVersion(db) };
  } finally {
    db.close();
  }
}

/** `weft migrate --dry-run`: the schema version the database is at and the migrations this weft would apply. */
export async function pendingMigrations(location: StoreLocation): Promise<{ version: number; latest: number; pending: Migration[] }> {
  if (!location.databaseUrl) return pendingSqliteMigrations(location.sqlitePath);
  const sql = await openPostgres(location.databaseUrl, { migrate: false, max: 1 });
  try {
    return await pendingPostgresMigrations(sql);
  } finally {
    await sql.close();
  }
}

/**
 * How the running server copies its database into a new file (scheduled backups and POST /api/backups), off its
 * thread; null when it cannot: PostgreSQL is backed up with pg_dump, an in-memory database has no file.
 */
export function databaseBackups(db: Db): ((target: string) => Promise<{ path: string; bytes: number }>) | null {
  const file = sqliteFile(db);
  return file ? (target) => backupOffThread(file, target) : null;
}

/** `weft backup --verify FILE`: is FILE a SQLite backup this weft can restore (sqlite/restore.ts)? */
export const checkBackupFile = (file: string): BackupCheck => checkBackup(file);

/**
 * `weft restore FILE`: the backup in place of the SQLite database at `location`, the current one kept aside
 * (sqlite/restore.ts). The caller holds the data directory's lock. PostgreSQL is restored with pg_restore.
 */
export function restoreStore(location: StoreLocation, file: string): Restored {
  if (location.databaseUrl) throw new BackupError("a PostgreSQL store is restored with its own tools (pg_restore; docs/operations.md)");
  return restoreBackup(file, location.sqlitePath);
}

/**
 * `weft backup`: a consistent copy of the SQLite database at `location` in `target`, a new file, with the schema
 * version it holds. Opened without migrations: a backup taken before an upgrade keeps the old schema.
 * PostgreSQL is backed up with its own tools.
 */
export function backupStore(location: StoreLocation, target: string): { path: string; bytes: number; version: number } {
  if (location.databaseUrl) throw new BackupError("a PostgreSQL store is backed up with its own tools (pg_dump)");
  const db = openDatabase(location.sqlitePath, { synchronous: location.synchronous, migrate: false });
  try {
    return { ...backupDatabase(db, target), version: schemaVersion(db) };
  } finally {
    db.close();
  }
}

/**
 * Applies the migrations this build knows that the database at `url` lacks (all of them on a fresh database:
 * no table yet). Throws NewerSchemaError for a database of a newer schema, changing nothing.
 */
async function migratePostgresIfBehind(url: string, apply = true, onUpgrade?: UpgradeListener): Promise<void> {
  const latest = postgresMigrations.at(-1)?.version ?? 0;
  const sql = await openPostgres(url, { migrate: false, max: 1 });
  try {
    if (!apply) {
      await sql`SELECT 1`;
      return;
    }
    const version = await postgresSchemaVersion(sql);
    if (version > latest) throw new NewerSchemaError("the PostgreSQL database", version, latest);
    // Checked again under the migrations' lock: another instance may be applying them now.
    if (version < latest) await migratePostgres(sql, onUpgrade);
  } finally {
    await sql.close();
  }
}
