/**
 * Opens the PostgreSQL database (`WEFT_DATABASE_URL=postgres://…`) with Bun's SQL client and applies
 * pending migrations. Applied versions are rows of weft_schema_migrations (PostgreSQL has no user_version).
 *
 * Bun's client returns BIGINT columns as strings (BigInt with `bigint: true`); INTEGER and text as written.
 */
// Bun.SQL at the call: naming it at the top would load the client in every process, SQLite ones included.
import type { SQL } from "bun";
import { MigrationFailedError, NewerSchemaError, type UpgradeListener } from "../db";
import { describePending, type Migration } from "../migration";
import { postgresMigrations as shipped } from "./migrations";

export interface OpenPostgresOptions {
  /** Apply pending migrations (default true). `weft migrate` applies them explicitly. */
  migrate?: boolean;
  /** Connections in the pool (Bun's default: 10). */
  max?: number;
}

/** The key of the advisory lock that migrations hold: "weftmigr" in ASCII. */
export const MIGRATION_LOCK_KEY = 0x7765_6674_6d69_6772n;

export async function openPostgres(url: string, options: OpenPostgresOptions = {}): Promise<SQL> {
  // adapter: the URL alone would let a mysql:// or sqlite: URL pick another driver.
  const sql = new Bun.SQL(url, { adapter: "postgres", ...(options.max === undefined ? {} : { max: options.max }) });
  try {
    if (options.migrate !== false) await migratePostgres(sql);
  } catch (error) {
    await sql.close();
    throw error;
  }
  return sql;
}

/**
 * Applies every migration not yet recorded, in order, and returns their versions. The whole run is one
 * transaction holding an advisory lock: a second instance migrating at the same time waits for the lock,
 * then finds the versions recorded and applies nothing. A failing migration leaves the schema as it was
 * (MigrationFailedError says how to go back). `migrations`: a test hook, the shipped ones by default.
 */
export async function migratePostgres(sql: SQL, onUpgrade?: UpgradeListener, migrations: Migration[] = shipped): Promise<number[]> {
  let running: Migration | undefined;
  let from = 0;
  try {
    return await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
      // After the lock: two concurrent CREATE TABLE IF NOT EXISTS can both decide to create it.
      await tx`CREATE TABLE IF NOT EXISTS weft_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`;
      const rows: Array<{ version: number }> = await tx`SELECT version FROM weft_schema_migrations`;
      const recorded = new Set(rows.map((row) => row.version));
      from = Math.max(0, ...recorded);
      const latest = migrations.at(-1)?.version ?? 0;
      if (from > latest) throw new NewerSchemaError("the PostgreSQL database", from, latest);
      const pending = migrations.filter((m) => !recorded.has(m.version));
      const upgrade = { from, to: latest, ...describePending(pending) };
      const started = performance.now();
      if (from > 0 && pending.length) onUpgrade?.(upgrade);
      for (const migration of pending) {
        running = migration;
        // No values: Bun sends the text as a simple query, which may hold several statements.
        await tx.unsafe(migration.sql);
        await tx`INSERT INTO weft_schema_migrations (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${new Date().toISOString()})`;
      }
      running = undefined;
      if (from > 0 && pending.length) onUpgrade?.({ ...upgrade, ms: Math.round(performance.now() - started) });
      return pending.map((m) => m.version);
    });
  } catch (error) {
    if (!running) throw error;
    throw new MigrationFailedError({
      where: "the PostgreSQL database",
      migration: `${running.version} ${running.name}`,
      from,
      reason: (error as Error).message,
      backupHint: "a dump taken before the upgrade is restored with pg_restore (docs/operations.md)",
    });
  }
}

/** The migrations this weft would apply to the database (`weft migrate --dry-run`), changing nothing. */
export async function pendingPostgresMigrations(sql: SQL): Promise<{ version: number; latest: number; pending: Migration[] }> {
  const version = await postgresSchemaVersion(sql);
  const latest = shipped.at(-1)?.version ?? 0;
  if (version === 0) return { version, latest, pending: shipped };
  const rows: Array<{ version: number }> = await sql`SELECT version FROM weft_schema_migrations`;
  const recorded = new Set(rows.map((row) => row.version));
  return { version, latest, pending: shipped.filter((m) => !recorded.has(m.version)) };
}

/** The newest applied migration's version; 0 for a database never migrated. */
export async function postgresSchemaVersion(sql: SQL): Promise<number> {
  const [table]: Array<{ exists: boolean }> = await sql`SELECT to_regclass('weft_schema_migrations') IS NOT NULL AS exists`;
  if (!table?.exists) return 0;
  const [row]: Array<{ version: number | null }> = await sql`SELECT max(version) AS version FROM weft_schema_migrations`;
  return row?.version ?? 0;
}
