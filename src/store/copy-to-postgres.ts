/**
 * `weft migrate --from DIR --to postgres://…`: copies a data directory's SQLite database into PostgreSQL, every
 * table and every column as stored — ids, encrypted secrets (the key stays in the data directory), JSON text,
 * timestamps — so a server started on the same data directory with WEFT_DATABASE_URL carries on where the
 * SQLite one stopped.
 *
 * - The source is read in one read transaction (one consistent snapshot) and never written: an older schema
 *   is refused with a message to run `weft migrate` on it first, so the copy never changes what it copies.
 * - The target's schema is migrated to the same version by its own migrations (weft_schema_migrations is not
 *   copied). A target with rows in any table is refused unless `replace` (--force), which empties every
 *   table first.
 * - The whole copy is one PostgreSQL transaction: it is all there or, after any failure, nothing is.
 * - Tables go parents first (foreign keys), 1,000 rows per INSERT at most. The counts kept by triggers
 *   (run_counts, run_hours, run_tags, run_definitions.runs) are copied as stored, with the user triggers of
 *   every table switched off inside the transaction, so the runs copied after them are not counted twice.
 * - A large table's indexes other than its keys are dropped before its rows are copied and built again after
 *   (same definitions, inside the transaction): one sorted build is faster than an insert per row, and the
 *   index comes out packed, where rows arriving in the middle of an index leave its pages half full
 *   (1,000,000 runs: the workflow and duration indexes ~150 bytes a run instead of ~270).
 * - Both store runs compact (run-layout.ts): run_names, the keys, codes and millisecond times are copied as
 *   stored. Identity columns (run_steps.rowid: SQLite's implicit rowid; runs.seq and run_names.key, SQLite's
 *   rowids by name) keep their values; their sequences move past the largest one copied.
 * - Before the commit, every table's row count is compared with the source's; a difference rolls all back.
 * - After it, the copied tables are vacuumed and analysed, so the first queries are planned on their real
 *   sizes and index-only scans work from the start.
 */
import { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { migrations } from "./sqlite/migrations";
import { migratePostgres, openPostgres, postgresSchemaVersion } from "./postgres/db";

export interface CopyToPostgresOptions {
  /** The SQLite file (`<data dir>/weft.db`). */
  sqlitePath: string;
  /** postgres://user:password@host:5432/database */
  databaseUrl: string;
  /** Empty every table of the target first instead of refusing a target that holds rows (--force). */
  replace: boolean;
}

export interface TableCount {
  table: string;
  rows: number;
}

export interface CopyReport {
  /** Every table copied, in the order copied, with its verified row count. */
  tables: TableCount[];
  rows: number;
  schemaVersion: number;
  /** What the target held before `replace` emptied it (tables with rows only). */
  replaced: TableCount[];
}

/** A copy that was not made, and why; nothing was written to the target. */
export class CopyRefusedError extends Error {}

/** At most this many rows per INSERT, and at most this many values (PostgreSQL allows 65,535 parameters). */
const BATCH_ROWS = 1_000;
const BATCH_VALUES = 60_000;

const LATEST = migrations.at(-1)?.version ?? 0;

/** A table with at least this many rows has its secondary indexes built after its rows are copied. */
const BUILD_INDEXES_AFTER = 10_000;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Where the target is, without its password, for messages. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "the PostgreSQL database";
  }
}

interface SourceTable {
  name: string;
  columns: string[];
  primaryKey: string[];
  /** Parent tables (foreign keys). */
  parents: string[];
  withoutRowid: boolean;
}

interface TargetColumn {
  name: string;
  /** text, bigint or integer */
  type: string;
  identity: boolean;
}

/** The plan for one table: which source expression fills which target column. */
interface TablePlan {
  name: string;
  targetColumns: TargetColumn[];
  sourceExpressions: string[];
  /** The primary key's columns and their positions in a row, to name a row in a message. */
  key: Array<{ name: string; position: number }>;
}

/** Not data: the fleet registry lists the processes running on a database (each registers itself). */
const NOT_COPIED = new Set(["instances"]);

function readSource(source: Database): SourceTable[] {
  const tables = source
    .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .filter(({ name }) => !NOT_COPIED.has(name));
  return tables.map(({ name, sql }) => {
    const info = source.query<{ name: string; pk: bigint }, []>(`PRAGMA table_info(${quote(name)})`).all();
    const parents = source.query<{ table: string }, []>(`PRAGMA foreign_key_list(${quote(name)})`).all();
    return {
      name,
      columns: info.map((column) => column.name),
      primaryKey: info
        .filter((column) => column.pk > 0n)
        .sort((a, b) => Number(a.pk - b.pk))
        .map((column) => column.name),
      parents: [...new Set(parents.map((fk) => fk.table))].filter((parent) => parent !== name),
      withoutRowid: /\)\s*WITHOUT\s+ROWID\s*;?\s*$/i.test(sql),
    };
  });
}

/** Parents before children; ties by name, so the order is the same on every run. */
function foreignKeyOrder(tables: SourceTable[]): SourceTable[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: SourceTable[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const visit = (table: SourceTable) => {
    if (placed.has(table.name)) return;
    if (visiting.has(table.name)) throw new CopyRefusedError(`the foreign keys of table ${table.name} form a cycle; the copy cannot order its tables`);
    visiting.add(table.name);
    for (const parent of table.parents) {
      const found = byName.get(parent);
      if (found) visit(found);
    }
    visiting.delete(table.name);
    placed.add(table.name);
    ordered.push(table);
  };
  for (const table of tables) visit(table);
  return ordered;
}

async function readTarget(sql: SQL): Promise<Map<string, TargetColumn[]>> {
  const rows: Array<{ table_name: string; column_name: string; data_type: string; is_identity: string }> = await sql`
    SELECT c.table_name, c.column_name, c.data_type, c.is_identity FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
    WHERE c.table_schema = current_schema() AND c.table_name <> 'weft_schema_migrations'
    ORDER BY c.table_name, c.ordinal_position`;
  const tables = new Map<string, TargetColumn[]>();
  for (const row of rows) {
    if (NOT_COPIED.has(row.table_name)) continue;
    const columns = tables.get(row.table_name) ?? [];
    columns.push({ name: row.column_name, type: row.data_type, identity: row.is_identity === "YES" });
    tables.set(row.table_name, columns);
  }
  return tables;
}

/** Matches the two schemas table by table and column by column; any difference is refused by name. */
function planTables(source: SourceTable[], target: Map<string, TargetColumn[]>): TablePlan[] {
  const onlyTarget = [...target.keys()].filter((name) => !source.some((table) => table.name === name));
  if (onlyTarget.length) throw new CopyRefusedError(`the PostgreSQL database has table(s) the SQLite database lacks: ${onlyTarget.join(", ")}`);
  return source.map((table) => {
    const columns = target.get(table.name);
    if (!columns) throw new CopyRefusedError(`table ${table.name} of the SQLite database is missing in the PostgreSQL database`);
    const missing = table.columns.filter((name) => !columns.some((column) => column.name === name));
    if (missing.length) throw new CopyRefusedError(`table ${table.name}: column(s) ${missing.join(", ")} are missing in the PostgreSQL database`);
    const sourceExpressions = columns.map((column) => {
      if (table.columns.includes(column.name)) return quote(column.name);
      // SQLite's implicit rowid, an explicit column on PostgreSQL (run_steps: steps of one seq in insertion order).
      if (column.name === "rowid" && !table.withoutRowid) return "rowid";
      throw new CopyRefusedError(`table ${table.name}: column ${column.name} of the PostgreSQL database is missing in the SQLite database`);
    });
    const keyNames = table.primaryKey.length ? table.primaryKey : table.withoutRowid ? [] : ["rowid"];
    return {
      name: table.name,
      targetColumns: columns,
      sourceExpressions,
      key: keyNames.map((name) => ({ name, position: columns.findIndex((column) => column.name === name) })).filter((key) => key.position >= 0),
    };
  });
}

function rowName(plan: TablePlan, row: unknown[]): string {
  if (!plan.key.length) return `a row of table ${plan.name}`;
  return `table ${plan.name}, row ${plan.key.map(({ name, position }) => `${name}=${String(row[position])}`).join(", ")}`;
}

/**
 * Refuses, with the row and column, a value PostgreSQL would reject or store differently: SQLite's flexible
 * typing can hold text in an INTEGER column or bytes anywhere, and its text can hold U+0000.
 */
function checkRow(plan: TablePlan, row: unknown[]): void {
  for (const [index, column] of plan.targetColumns.entries()) {
    const value = row[index];
    if (value === null) continue;
    const integer = column.type === "bigint" || column.type === "integer" || column.type === "smallint";
    let problem: string | undefined;
    if (value instanceof Uint8Array) {
      if (column.type !== "bytea") problem = `holds ${value.byteLength} bytes of binary data; only ${integer ? "integers" : "text"} can be copied`;
    } else if (column.type === "bytea") problem = `holds ${JSON.stringify(value).slice(0, 40)} where PostgreSQL's bytea column takes only bytes`;
    else if (integer && typeof value !== "bigint")
      problem = `holds ${JSON.stringify(value).slice(0, 40)} where PostgreSQL's ${column.type} column takes only integers`;
    else if (typeof value === "string" && value.includes("\u0000"))
      problem = "holds the character U+0000, which PostgreSQL text cannot store; remove it from the value in SQLite and copy again";
    if (problem) throw new CopyRefusedError(`${rowName(plan, row)}: column ${column.name} ${problem}`);
  }
}

async function copyTable(source: Database, tx: SQL, plan: TablePlan): Promise<number> {
  const names = plan.targetColumns.map((column) => quote(column.name)).join(", ");
  const overriding = plan.targetColumns.some((column) => column.identity) ? " OVERRIDING SYSTEM VALUE" : "";
  const width = plan.targetColumns.length;
  const perBatch = Math.max(1, Math.min(BATCH_ROWS, Math.floor(BATCH_VALUES / width)));
  const insertText = (rows: number) => {
    const tuples: string[] = [];
    for (let row = 0; row < rows; row++) tuples.push(`(${plan.targetColumns.map((_, column) => `$${row * width + column + 1}`).join(", ")})`);
    return `INSERT INTO ${quote(plan.name)} (${names})${overriding} VALUES ${tuples.join(", ")}`;
  };
  const fullBatch = insertText(perBatch);
  let params: unknown[] = [];
  let copied = 0;
  const flush = async () => {
    const rows = params.length / width;
    try {
      await tx.unsafe(rows === perBatch ? fullBatch : insertText(rows), params);
    } catch (error) {
      throw new Error(`copying table ${plan.name}, rows ${copied + 1}–${copied + rows}: ${(error as Error).message}`);
    }
    copied += rows;
    params = [];
  };
  const select = source.query<Record<string, unknown>, []>(`SELECT ${plan.sourceExpressions.join(", ")} FROM ${quote(plan.name)}`);
  for (const record of select.iterate()) {
    const row = Object.values(record);
    checkRow(plan, row);
    for (const value of row) params.push(value);
    if (params.length === perBatch * width) await flush();
  }
  if (params.length) await flush();
  return copied;
}

async function countTarget(tx: SQL, table: string): Promise<number> {
  const [row]: Array<{ n: string }> = await tx.unsafe(`SELECT count(*) AS n FROM ${quote(table)}`);
  return Number(row?.n ?? 0);
}

function openSource(path: string): Database {
  // Opened read-write (a read-only connection cannot recover a WAL left by a crash) but never written.
  const source = new Database(path, { readwrite: true, create: false, strict: true, safeIntegers: true });
  source.run("PRAGMA busy_timeout = 5000");
  const version = Number((source.query("PRAGMA user_version").get() as { user_version: bigint }).user_version);
  if (version < LATEST) {
    source.close();
    throw new CopyRefusedError(
      `the SQLite database ${path} is at schema version ${version}, this weft's is ${LATEST}: upgrade it first with \`weft migrate\` (WEFT_DATA_DIR set to its data directory, after a \`weft backup\`), then copy it`,
    );
  }
  if (version > LATEST) {
    source.close();
    throw new CopyRefusedError(
      `the SQLite database ${path} is at schema version ${version}, newer than this weft knows (${LATEST}): copy it with the weft version that wrote it`,
    );
  }
  return source;
}

/** Makes sure the target's schema is this weft's (applies what is pending) and answers its version. */
async function prepareTarget(sql: SQL, where: string): Promise<number> {
  let before: number;
  try {
    before = await postgresSchemaVersion(sql);
  } catch (error) {
    throw new CopyRefusedError(
      `cannot use ${where}: ${(error as Error).message}; check that PostgreSQL listens there, that the user and password are right and that the database exists (createdb)`,
    );
  }
  if (before > LATEST)
    throw new CopyRefusedError(`${where} is at schema version ${before}, newer than this weft knows (${LATEST}): copy with the weft version that wrote it`);
  await migratePostgres(sql);
  return await postgresSchemaVersion(sql);
}

/** Copies everything; see the top of this file. Throws CopyRefusedError (or the database's error) with nothing written. */
export async function copySqliteToPostgres(options: CopyToPostgresOptions): Promise<CopyReport> {
  const where = describeDatabaseUrl(options.databaseUrl);
  const source = openSource(options.sqlitePath);
  let target: SQL | undefined;
  try {
    // One snapshot for the whole read: counts and rows agree even if something wrote meanwhile.
    source.run("BEGIN");
    const sourceTables = foreignKeyOrder(readSource(source));
    const sourceCounts = new Map(
      sourceTables.map((table) => [table.name, Number((source.query(`SELECT count(*) AS n FROM ${quote(table.name)}`).get() as { n: bigint }).n)]),
    );
    target = await openPostgres(options.databaseUrl, { migrate: false, max: 1 });
    const schemaVersion = await prepareTarget(target, where);
    const plans = planTables(sourceTables, await readTarget(target));
    const report = await target.begin(async (tx) => {
      const held: TableCount[] = [];
      for (const plan of plans) {
        const rows = await countTarget(tx, plan.name);
        if (rows > 0) held.push({ table: plan.name, rows });
      }
      const [first] = held;
      if (first && !options.replace) {
        throw new CopyRefusedError(
          `${where} already holds Weft data (table ${first.table} has ${first.rows} row${first.rows === 1 ? "" : "s"}${held.length > 1 ? `, ${held.length - 1} more table(s) too` : ""}); copy into an empty database, or add --force to delete everything in it and replace it with the copy`,
        );
      }
      if (held.length) await tx.unsafe(`TRUNCATE ${plans.map((plan) => quote(plan.name)).join(", ")} RESTART IDENTITY`);
      const triggered: Array<{ table: string }> = await tx`
        SELECT DISTINCT c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace`;
      // Inside this transaction only: no other session ever sees the triggers off.
      for (const { table } of triggered) await tx.unsafe(`ALTER TABLE ${quote(table)} DISABLE TRIGGER USER`);
      const tables: TableCount[] = [];
      // Indexes that are not a key (a key checks uniqueness and foreign keys as rows arrive), of the large tables.
      const large = plans.filter((plan) => (sourceCounts.get(plan.name) ?? 0) >= BUILD_INDEXES_AFTER).map((plan) => plan.name);
      const deferred: Array<{ name: string; def: string }> = large.length
        ? await tx`
            SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            WHERE t.relnamespace = current_schema()::regnamespace AND t.relname IN ${tx(large)}
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)
            ORDER BY i.relname`
        : [];
      for (const { name } of deferred) await tx.unsafe(`DROP INDEX ${quote(name)}`);
      for (const plan of plans) {
        const copied = await copyTable(source, tx, plan);
        for (const column of plan.targetColumns.filter((c) => c.identity)) {
          await tx.unsafe(
            `SELECT setval(pg_get_serial_sequence('${quote(plan.name)}', '${column.name}'), coalesce(max(${quote(column.name)}), 0) + 1, false) FROM ${quote(plan.name)}`,
          );
        }
        tables.push({ table: plan.name, rows: copied });
      }
      if (deferred.length) await tx.unsafe("SET LOCAL maintenance_work_mem = '256MB'");
      for (const { def } of deferred) await tx.unsafe(def);
      for (const { table } of triggered) await tx.unsafe(`ALTER TABLE ${quote(table)} ENABLE TRIGGER USER`);
      for (const { table, rows } of tables) {
        const expected = sourceCounts.get(table) ?? 0;
        const stored = await countTarget(tx, table);
        if (stored !== expected || rows !== expected) {
          throw new Error(
            `verification failed, nothing was kept: table ${table} has ${expected} rows in SQLite, ${rows} were read and ${stored} are in PostgreSQL`,
          );
        }
      }
      return { tables, replaced: held };
    });
    // Statistics and visibility map of the copied tables now, not when autovacuum gets to them: until then
    // PostgreSQL plans the first queries (the run list's among them) as if the tables were nearly empty, and
    // its index-only scans read every row's table page anyway.
    await target.unsafe(`VACUUM (ANALYZE) ${plans.map((plan) => quote(plan.name)).join(", ")}`);
    return { ...report, rows: report.tables.reduce((sum, table) => sum + table.rows, 0), schemaVersion };
  } finally {
    if (source.inTransaction) source.run("ROLLBACK");
    source.close();
    await target?.close();
  }
}
