/**
 * The PostgreSQL schema (src/store/postgres) against a real server (Debian `postgresql`), compared with the
 * SQLite schema of the same migrations: a fresh database gets the same tables, columns, keys and indexes;
 * two instances migrating at once serialise; a second migrate applies nothing; a cascading foreign key,
 * the text comparisons and JSON text behave as on SQLite; runs stored before the kept run counts are counted
 * when their migration is applied.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { SQL } from "bun";
import { openDatabase, schemaVersion } from "../../src/store/sqlite/db";
import { migrations } from "../../src/store/sqlite/migrations";
import { MIGRATION_LOCK_KEY, migratePostgres, openPostgres, postgresSchemaVersion } from "../../src/store/postgres/db";
import { postgresMigrations } from "../../src/store/postgres/migrations";
import { RUN_COLUMN_TYPES, STEP_COLUMN_TYPES } from "../../src/store/postgres/run-batches";
import { openStore } from "../../src/store/open";
import { storageOf } from "../../src/store/storage";
import { storageError } from "../../src/store/storage-errors";
import { runRow } from "../support/run-rows";
import { announceMissingPostgres, postgresBinaries, startPostgres, type PostgresHandle } from "../support/postgres";

interface TableShape {
  columns: Array<{ name: string; type: string; notNull: boolean; default: string | null }>;
  primaryKey: string[];
  unique: string[];
  foreignKeys: string[];
}
interface IndexShape {
  table: string;
  unique: boolean;
  partial: boolean;
  columns: string[];
  /** Columns an index holds after its keys, not ordered by (PostgreSQL's INCLUDE). */
  include?: string[];
}
interface SchemaShape {
  tables: Record<string, TableShape>;
  indexes: Record<string, IndexShape>;
}

/**
 * SQLite's schema as PostgreSQL has it. Both store runs compact (SQLite's migration 018, PostgreSQL's 19:
 * src/store/run-layout.ts), but SQLite's `seq` is the rowid, which every index entry holds, where
 * PostgreSQL's is an identity column that its list indexes end with, and PostgreSQL's runs put their
 * fixed-width columns first (no padding between them): runs' columns are compared in name order.
 */
function asPostgresKeepsRuns(shape: SchemaShape): SchemaShape {
  const listIndexes = ["runs_workspace_started", "runs_workflow_started"];
  for (const name of listIndexes) shape.indexes[name]!.columns.push("seq");
  // The duration index names seq on SQLite, to order runs of equal duration by it before the columns it only
  // holds for the filters (migration 024), which PostgreSQL's INCLUDEs.
  const duration = shape.indexes.runs_workspace_duration!;
  const seq = duration.columns.indexOf("seq");
  shape.indexes.runs_workspace_duration = { ...duration, columns: duration.columns.slice(0, seq + 1), include: duration.columns.slice(seq + 1) };
  return runsColumnsByName(shape);
}

function runsColumnsByName(shape: SchemaShape): SchemaShape {
  shape.tables.runs!.columns.sort((a, b) => (a.name < b.name ? -1 : 1));
  return shape;
}

function sqliteSchema(db: Database): SchemaShape {
  const shape: SchemaShape = { tables: {}, indexes: {} };
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all();
  for (const { name: table } of tables) {
    const info = db.query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, []>(`PRAGMA table_info(${table})`).all();
    const indexList = db.query<{ name: string; unique: number; origin: string; partial: number }, []>(`PRAGMA index_list(${table})`).all();
    const columnsOf = (index: string) =>
      db
        .query<{ name: string | null; desc: number; coll: string; key: number }, []>(`PRAGMA index_xinfo(${index})`)
        .all()
        .filter((c) => c.key === 1)
        .map((c) => `${c.name}${c.coll === "NOCASE" ? " NOCASE" : ""}${c.desc ? " DESC" : ""}`);
    shape.tables[table] = {
      // A PRIMARY KEY column counts as NOT NULL: that is what it means (SQLite's rowid tables let a NULL
      // through a non-INTEGER key as a legacy quirk; PostgreSQL does not — see src/store/postgres/migrations/index.ts).
      columns: info.map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1 || c.pk > 0, default: c.dflt_value })),
      primaryKey: info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name),
      unique: indexList
        .filter((i) => i.origin === "u")
        .map((i) => columnsOf(i.name).join(","))
        .sort(),
      foreignKeys: db
        .query<{ table: string; from: string; to: string; on_delete: string }, []>(`PRAGMA foreign_key_list(${table})`)
        .all()
        .map((f) => `${f.from} -> ${f.table}(${f.to}) ON DELETE ${f.on_delete}`)
        .sort(),
    };
    for (const index of indexList.filter((i) => i.origin === "c")) {
      shape.indexes[index.name] = { table, unique: index.unique === 1, partial: index.partial === 1, columns: columnsOf(index.name) };
    }
  }
  return shape;
}

const onDelete: Record<string, string> = { a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };

async function postgresSchema(sql: SQL): Promise<SchemaShape> {
  const shape: SchemaShape = { tables: {}, indexes: {} };
  const columns: Array<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null }> = await sql`
    SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name <> 'weft_schema_migrations' ORDER BY table_name, ordinal_position`;
  const sqliteType: Record<string, string> = { text: "TEXT", bigint: "INTEGER", integer: "INTEGER", smallint: "INTEGER", bytea: "BLOB" };
  for (const c of columns) {
    // SQLite's implicit rowid of run_steps, made an explicit identity column on PostgreSQL.
    if (c.table_name === "run_steps" && c.column_name === "rowid") continue;
    shape.tables[c.table_name] ??= { columns: [], primaryKey: [], unique: [], foreignKeys: [] };
    shape.tables[c.table_name]!.columns.push({
      name: c.column_name,
      type: sqliteType[c.data_type] ?? c.data_type,
      notNull: c.is_nullable === "NO",
      default: c.column_default?.replace(/::text$/, "") ?? null,
    });
  }
  const constraints: Array<{
    table: string;
    type: string;
    columns: string[];
    target: string | null;
    target_columns: string[] | null;
    on_delete: string;
    equal: boolean | null;
  }> = await sql`
    SELECT c.conrelid::regclass::text AS table, c.contype AS type, c.confrelid::regclass::text AS target, c.confdeltype AS on_delete,
      (SELECT bool_and(o.oprname = '=') FROM unnest(c.conexclop) AS x(op) JOIN pg_operator o ON o.oid = x.op) AS equal,
      ARRAY(SELECT a.attname || CASE WHEN a.attcollation = 'weft_nocase'::regcollation THEN ' NOCASE' ELSE '' END
            FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
      ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS target_columns
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    WHERE t.relnamespace = current_schema()::regnamespace AND c.contype IN ('p', 'u', 'f', 'x') AND t.relname <> 'weft_schema_migrations'`;
  for (const c of constraints) {
    const table = shape.tables[c.table]!;
    if (c.type === "p") table.primaryKey = c.columns;
    // An exclusion constraint whose operators are all = is a unique constraint (runs' ids: a hash index, migration 20).
    if (c.type === "u" || (c.type === "x" && c.equal)) table.unique.push(c.columns.join(","));
    if (c.type === "f") table.foreignKeys.push(`${c.columns.join(",")} -> ${c.target}(${c.target_columns!.join(",")}) ON DELETE ${onDelete[c.on_delete]}`);
  }
  for (const table of Object.values(shape.tables)) {
    table.unique.sort();
    table.foreignKeys.sort();
  }
  // Indexes of their own, not the ones PostgreSQL builds for a primary key or UNIQUE constraint.
  const indexes: Array<{ name: string; table: string; unique: boolean; partial: boolean; columns: string[]; include: string[] }> = await sql`
    SELECT i.relname AS name, t.relname AS table, x.indisunique AS unique, x.indpred IS NOT NULL AS partial,
      ARRAY(SELECT pg_get_indexdef(x.indexrelid, k, true) || CASE WHEN x.indoption[k - 1] & 1 = 1 THEN ' DESC' ELSE '' END
            FROM generate_series(1, x.indnkeyatts) k ORDER BY k) AS columns,
      ARRAY(SELECT pg_get_indexdef(x.indexrelid, k, true) FROM generate_series(x.indnkeyatts + 1, x.indnatts) k ORDER BY k) AS include
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE t.relnamespace = current_schema()::regnamespace AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`;
  // lower(name) on a "C" column is how PostgreSQL spells SQLite's `name COLLATE NOCASE` in an index.
  for (const { name, include, ...index } of indexes) {
    shape.indexes[name] = {
      ...index,
      columns: index.columns.map((c) => c.replace(/^lower\((\w+)\)/, "$1 NOCASE")),
      ...(include.length > 0 ? { include } : {}),
    };
  }
  return shape;
}

/** Runs one statement on SQLite and one on PostgreSQL, and says whether each was accepted. */
async function outcomes(lite: Database, sql: SQL, text: string) {
  const sqlite = (() => {
    try {
      lite.run(text);
      return "accepted";
    } catch {
      return "rejected";
    }
  })();
  const postgres = await sql.unsafe(text).then(
    () => "accepted",
    () => "rejected",
  );
  return { sqlite, postgres };
}

/** A stored run's or count's workflow and status (`c`) as text. */
const NAMES = `(SELECT name FROM run_names WHERE key = c.workflow_id) AS workflow_id,
  CASE c.status WHEN 0 THEN 'completed' WHEN 1 THEN 'failed' ELSE c.status::text END AS status`;

const seedIdentity = `
INSERT INTO orgs (id, name, created_at) VALUES ('org1', 'Acme', '2025-01-01T00:00:00.000Z');
INSERT INTO workspaces (id, org_id, name, created_at) VALUES ('ws1', 'org1', 'Default', '2025-01-01T00:00:00.000Z');
INSERT INTO users (id, org_id, email, name, password_hash, role, default_workspace_id, created_at)
  VALUES ('user1', 'org1', 'Ada@Example.com', 'Ada', 'hash', 'owner', 'ws1', '2025-01-01T00:00:00.000Z');
`;

const pgBin = postgresBinaries();
announceMissingPostgres();
describe.skipIf(!pgBin)("PostgreSQL schema", () => {
  let pg: PostgresHandle;
  let admin: SQL;
  const clients: SQL[] = [];
  let made = 0;

  beforeAll(async () => {
    pg = await startPostgres();
    admin = new SQL(pg.url);
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.close();
    await admin?.close();
    await pg?.stop();
  }, 30_000);

  /** A new empty database on the test server: each test migrates its own. */
  async function freshDatabase(): Promise<string> {
    const name = `weft_schema_${++made}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(pg.url);
    url.pathname = `/${name}`;
    return url.toString();
  }
  function client(url: string, max = 1): SQL {
    const sql = new SQL(url, { max });
    clients.push(sql);
    return sql;
  }
  async function migrated(): Promise<SQL> {
    const sql = await openPostgres(await freshDatabase());
    clients.push(sql);
    return sql;
  }

  test("a fresh database gets SQLite's tables, columns (order, type, NOT NULL, default), keys and indexes", async () => {
    const sql = await migrated();
    const lite = openDatabase(":memory:");
    const expected = asPostgresKeepsRuns(sqliteSchema(lite));
    expect(Object.keys(expected.tables).length).toBeGreaterThan(20);
    expect(runsColumnsByName(await postgresSchema(sql))).toEqual(expected);
    const pgIndexes: Array<{ indexname: string }> = await sql`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()`;
    const sqliteIndexes = lite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'").all();
    expect(sqliteIndexes.length).toBeGreaterThan(10);
    for (const { name } of sqliteIndexes) expect(pgIndexes.map((i) => i.indexname)).toContain(name);
    // Migration 21: the run b-trees fill their pages (runs arrive in start order, mostly finished).
    const fill: Array<{ relname: string; reloptions: string[] | null }> = await sql`
      SELECT c.relname, c.reloptions FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'runs'::regclass AND c.relname NOT IN ('runs_unfinished', 'runs_id_hash') ORDER BY c.relname`;
    expect(fill.map((r) => `${r.relname} ${r.reloptions?.join(",")}`)).toEqual(
      ["runs_pkey", "runs_workflow_started", "runs_workspace_duration", "runs_workspace_started"].map((name) => `${name} fillfactor=100`),
    );
    lite.close();
  });

  test("the run writer's column types are the migrated database's, column for column", async () => {
    const sql = await migrated();
    const catalog = async (table: string) =>
      new Map(
        (
          (await sql.unsafe(
            `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = '${table}'::regclass AND attnum > 0 AND NOT attisdropped`,
          )) as Array<{ name: string; type: string }>
        ).map((row) => [row.name, row.type]),
      );
    expect(new Map([...RUN_COLUMN_TYPES].sort())).toEqual(new Map([...(await catalog("runs"))].sort()));
    expect(new Map([...STEP_COLUMN_TYPES].sort())).toEqual(new Map([...(await catalog("run_steps"))].sort()));
  });

  test("two instances migrating at once both succeed, and each migration is applied and recorded once", async () => {
    const url = await freshDatabase();
    const [one, two, holder] = [client(url), client(url), client(url)];
    expect(await postgresSchemaVersion(one)).toBe(0);
    // Hold the migration lock until both are waiting for it, so that the two really start together.
    let locked!: () => void;
    let release!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = holder.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
      locked();
      await released;
    });
    await isLocked;
    const both = Promise.allSettled([migratePostgres(one), migratePostgres(two)]);
    let waiting = 0;
    try {
      for (const deadline = Date.now() + 10_000; waiting < 2 && Date.now() < deadline; ) {
        await Bun.sleep(20);
        [{ waiting }] = await admin`SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
      }
    } finally {
      release();
      await holding;
    }
    const results = await both;
    expect(waiting).toBe(2);
    expect(results.map((r) => (r.status === "rejected" ? String(r.reason) : r.status))).toEqual(["fulfilled", "fulfilled"]);
    const [first, second] = results.map((r) => (r.status === "fulfilled" ? r.value : []));
    const versions = migrations.map((m) => m.version);
    expect([first, second].sort((a, b) => a.length - b.length)).toEqual([[], versions]);
    const recorded: Array<{ version: number; name: string; times: number }> =
      await one`SELECT version, min(name) AS name, count(*)::int AS times FROM weft_schema_migrations GROUP BY version ORDER BY version`;
    expect(recorded).toEqual(migrations.map((m) => ({ version: m.version, name: m.name, times: 1 })));
  }, 30_000);

  test("a second migrate applies nothing; the schema version is the newest SQLite migration's", async () => {
    expect(postgresMigrations.map((m) => [m.version, m.name])).toEqual(migrations.map((m) => [m.version, m.name]));
    const url = await freshDatabase();
    const unmigrated = await openPostgres(url, { migrate: false });
    clients.push(unmigrated);
    expect(await postgresSchemaVersion(unmigrated)).toBe(0);
    const sql = await openPostgres(url);
    clients.push(sql);
    expect(await migratePostgres(sql)).toEqual([]);
    expect(await migratePostgres(unmigrated)).toEqual([]);
    const lite = openDatabase(":memory:");
    expect(await postgresSchemaVersion(sql)).toBe(migrations.at(-1)!.version);
    expect(await postgresSchemaVersion(sql)).toBe(schemaVersion(lite));
    lite.close();
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM weft_schema_migrations`;
    expect(n).toBe(migrations.length);
  });

  test("a database a newer weft migrated is refused, naming both schema versions, and left as it was", async () => {
    const url = await freshDatabase();
    const sql = await openPostgres(url);
    clients.push(sql);
    const latest = postgresMigrations.at(-1)!.version;
    await sql`INSERT INTO weft_schema_migrations (version, name, applied_at) VALUES (${latest + 1}, 'from-the-future', 'now')`;
    const message = `the PostgreSQL database is at schema version ${latest + 1}, newer than this weft knows (${latest}): run the weft version that wrote it, or a newer one`;
    await expect(migratePostgres(sql)).rejects.toThrow(message);
    await expect(openStore({ databaseUrl: url, sqlitePath: "", synchronous: "FULL" })).rejects.toThrow(message);
    expect(await postgresSchemaVersion(sql)).toBe(latest + 1);
  });

  test("a run id stored twice is refused as on SQLite, also when two connections insert it at once", async () => {
    const url = await freshDatabase();
    const db = await openStore({ databaseUrl: url, sqlitePath: "", synchronous: "FULL" });
    const lite = openDatabase(":memory:");
    const first = runRow("run-1");
    for (const storage of [storageOf(db), storageOf(lite)]) {
      const definition = { hash: first.definition_hash, text: "{}" };
      await storage.runInserts.insert(first, definition);
      const refused = await storage.runInserts.insert({ ...first, workflow_name: "another" }, definition).catch((error: unknown) => error);
      expect(storageError(refused)?.kind).toBe("unique");
      expect(await storage.runReads.getRow("run-1")).toEqual(first);
    }
    // Two transactions inserting one new id together: one commits, the other is refused.
    const insert = `INSERT INTO runs (started_at, workspace_id, workflow_id, trigger_type, definition_hash, status, environment, id, org_id, workflow_name, trigger_data)
      SELECT started_at, workspace_id, workflow_id, trigger_type, definition_hash, status, environment, 'run-2', org_id, workflow_name, trigger_data FROM runs WHERE id = 'run-1'`;
    const [one, two] = [client(url), client(url)];
    const outcomes = await Promise.allSettled([
      one.begin(async (tx) => {
        await tx.unsafe(insert);
        await Bun.sleep(200);
      }),
      two.begin((tx) => tx.unsafe(insert)),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    // The exclusion constraint's refusal (23P01) is a unique violation to the code above the store.
    // With the error's own words beside the kind: a refusal of another kind says what it was when this fails.
    const refusal = (outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult | undefined)?.reason;
    expect({ kind: storageError(refusal)?.kind, error: String(refusal) }).toMatchObject({ kind: "unique" });
    expect((await one`SELECT count(*)::int AS n FROM runs WHERE id = 'run-2'`)[0].n).toBe(1);
    db.close();
    lite.close();
  });

  test("deleting a user deletes its sessions (ON DELETE CASCADE) and an org still in use cannot be deleted, as on SQLite", async () => {
    const sql = await migrated();
    const lite = openDatabase(":memory:");
    const session = `INSERT INTO sessions (id_hash, user_id, workspace_id, csrf_token, expires_at, created_at)
      VALUES ('sess1', 'user1', 'ws1', 'csrf', '2099-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`;
    for (const text of [seedIdentity, session]) {
      lite.run(text);
      await sql.unsafe(text);
    }
    const sessions = "SELECT id_hash FROM sessions";
    expect(lite.query(sessions).all()).toEqual([{ id_hash: "sess1" }]);
    expect([...(await sql.unsafe(sessions))]).toEqual([{ id_hash: "sess1" }]);

    expect(await outcomes(lite, sql, "DELETE FROM users WHERE id = 'user1'")).toEqual({ sqlite: "accepted", postgres: "accepted" });
    expect(lite.query(sessions).all()).toEqual([]);
    expect([...(await sql.unsafe(sessions))]).toEqual([]);

    expect(await outcomes(lite, sql, "DELETE FROM orgs WHERE id = 'org1'")).toEqual({ sqlite: "rejected", postgres: "rejected" });
    expect(await sql`SELECT id FROM orgs`).toEqual([{ id: "org1" }]);
    lite.close();
  });

  test("JSON text reads back byte for byte: spacing, key order, number spelling and Unicode untouched", async () => {
    const sql = await migrated();
    await sql.unsafe(seedIdentity);
    const json = '  { "b" :1,\t"a":[ 1.50 , 2e3 ,-0 ],\r\n  "naïve": "e\u0301 \u00e9 😀 \\u0000 \\"q\\"", "": null, "b": 2 }\n';
    await sql`INSERT INTO kv_entries (workspace_id, key, value, updated_at) VALUES ('ws1', 'k', ${json}, '2025-01-01T00:00:00.000Z')`;
    const [row] = await sql`SELECT value, octet_length(value)::int AS bytes FROM kv_entries WHERE key = 'k'`;
    expect(row.value).toBe(json);
    expect(row.bytes).toBe(Buffer.byteLength(json));
  });

  test("text compares as on SQLite: email ignores ASCII case, folder names are unique ignoring A–Z case, sorting is by bytes", async () => {
    const sql = await migrated();
    const lite = openDatabase(":memory:");
    lite.run(seedIdentity);
    await sql.unsafe(seedIdentity);

    const anotherAda = `INSERT INTO users (id, org_id, email, name, password_hash, role, default_workspace_id, created_at)
      VALUES ('user2', 'org1', 'ada@EXAMPLE.COM', 'Ada 2', 'hash', 'member', 'ws1', '2025-01-01T00:00:00.000Z')`;
    expect(await outcomes(lite, sql, anotherAda)).toEqual({ sqlite: "rejected", postgres: "rejected" });
    const byEmail = "SELECT id FROM users WHERE email = 'ADA@example.COM'";
    expect(lite.query(byEmail).all()).toEqual([{ id: "user1" }]);
    expect([...(await sql.unsafe(byEmail))]).toEqual([{ id: "user1" }]);

    const folder = (id: string, name: string) =>
      `INSERT INTO folders (id, workspace_id, name, created_at, updated_at) VALUES ('${id}', 'ws1', '${name}', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`;
    expect(await outcomes(lite, sql, folder("f1", "Reports"))).toEqual({ sqlite: "accepted", postgres: "accepted" });
    expect(await outcomes(lite, sql, folder("f2", "reports"))).toEqual({ sqlite: "rejected", postgres: "rejected" });
    // NOCASE folds A–Z only: É and é are different names.
    expect(await outcomes(lite, sql, folder("f3", "Émile"))).toEqual({ sqlite: "accepted", postgres: "accepted" });
    expect(await outcomes(lite, sql, folder("f4", "émile"))).toEqual({ sqlite: "accepted", postgres: "accepted" });
    expect(await outcomes(lite, sql, folder("f5", "apples"))).toEqual({ sqlite: "accepted", postgres: "accepted" });
    expect(await outcomes(lite, sql, folder("f6", "Zoo"))).toEqual({ sqlite: "accepted", postgres: "accepted" });

    const sorted = "SELECT name FROM folders ORDER BY name";
    const expected = ["Reports", "Zoo", "apples", "Émile", "émile"];
    expect(
      lite
        .query<{ name: string }, []>(sorted)
        .all()
        .map((r) => r.name),
    ).toEqual(expected);
    expect([...(await sql.unsafe(sorted))].map((r) => r.name)).toEqual(expected);
    lite.close();
  });

  test("runs stored before the kept counts (migrations 8 and 9) are counted when they are applied, tags, hours and definitions' uses included, and stored compact by 19 with the same values", async () => {
    const sql = client(await freshDatabase());
    await sql.begin(async (tx) => {
      await tx`CREATE TABLE weft_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`;
      for (const m of postgresMigrations.filter((m) => m.version < 8)) {
        await tx.unsafe(m.sql);
        await tx`INSERT INTO weft_schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, 'then')`;
      }
    });
    const runs = [
      ["r1", "wf1", "completed", "2026-11-01T10:05:00.000Z", "[]"],
      ["r2", "wf1", "completed", "2026-11-01T10:59:59.999Z", '["vip","eu"]'],
      ["r3", "wf1", "failed", "2026-11-01T11:00:00.000Z", '["vip"]'],
      ["r4", "wf2", "completed", "2026-11-02T08:00:00.000Z", "[]"],
    ];
    await sql`INSERT INTO run_definitions (hash, definition, created_at) VALUES ('h', '{}', 'then'), ('h2', '{}', 'then'), ('unused', '{}', 'then')`;
    for (const [id, workflow, status, started, tags] of runs) {
      const hash = workflow === "wf2" ? "h2" : "h";
      await sql`INSERT INTO runs (id, workspace_id, org_id, workflow_id, workflow_name, status, trigger_type, trigger_data, environment, definition_hash, started_at, tags)
        VALUES (${id}, 'ws', 'org', ${workflow}, 'w', ${status}, 'webhook', '{}', 'production', ${hash}, ${started}, ${tags})`;
    }
    // 8 and 9, and whatever came after them.
    expect(await migratePostgres(sql)).toEqual(postgresMigrations.filter((m) => m.version >= 8).map((m) => m.version));
    // What is counted: the kept total plus the changes not folded into it yet (migration 15).
    const uses = async () =>
      (
        await sql`SELECT hash, (runs + COALESCE((SELECT sum(n) FROM run_definition_uses u WHERE u.hash = d.hash), 0))::int AS runs
          FROM run_definitions AS d ORDER BY hash`
      ).map((r: any) => `${r.hash} ${r.runs}`);
    // Migration 9 counts each definition's runs.
    expect(await uses()).toEqual(["h 3", "h2 1", "unused 0"]);
    // Migration 19 stores them with names' keys and status codes (src/store/run-layout.ts): read as text here.
    const counts = await sql.unsafe(`SELECT ${NAMES}, tag, n::int AS n FROM run_counts c ORDER BY 1, 2, 3`);
    expect(counts.map((r: any) => `${r.workflow_id} ${r.status} ${r.tag || "*"} ${r.n}`)).toEqual([
      "wf1 completed * 2",
      "wf1 completed eu 1",
      "wf1 completed vip 1",
      "wf1 failed * 1",
      "wf1 failed vip 1",
      "wf2 completed * 1",
    ]);
    const hours = await sql.unsafe(
      `SELECT to_char(to_timestamp(hour * 3600) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour, ${NAMES}, n::int AS n FROM run_hours c ORDER BY 1, 2, 3`,
    );
    expect(hours.map((r: any) => `${r.hour} ${r.workflow_id} ${r.status} ${r.n}`)).toEqual([
      "2026-11-01T10 wf1 completed 2",
      "2026-11-01T11 wf1 failed 1",
      "2026-11-02T08 wf2 completed 1",
    ]);
    const tags = await sql`SELECT tag, run_id, started_at FROM run_tags ORDER BY tag, started_at`;
    expect(tags.map((r: any) => `${r.tag} ${r.run_id} ${new Date(Number(r.started_at)).toISOString()}`)).toEqual([
      "eu r2 2026-11-01T10:59:59.999Z",
      "vip r2 2026-11-01T10:59:59.999Z",
      "vip r3 2026-11-01T11:00:00.000Z",
    ]);
    const stored = await sql.unsafe(`SELECT id, ${NAMES}, started_at, tags FROM runs c ORDER BY seq`);
    expect(stored.map((r: any) => [r.id, r.workflow_id, r.status, new Date(Number(r.started_at)).toISOString(), r.tags])).toEqual(runs);
    // From now on the triggers keep them: r3 completes, r1 is deleted.
    await sql`UPDATE runs SET status = 0 WHERE id = 'r3'`;
    await sql`DELETE FROM runs WHERE id = 'r1'`;
    expect(await uses()).toEqual(["h 2", "h2 1", "unused 0"]);
    const after = await sql.unsafe(`SELECT ${NAMES}, tag, sum(n)::int AS n FROM run_counts c GROUP BY 1, 2, 3 HAVING sum(n) > 0 ORDER BY 1, 2, 3`);
    expect(after.map((r: any) => `${r.workflow_id} ${r.status} ${r.tag || "*"} ${r.n}`)).toEqual([
      "wf1 completed * 2",
      "wf1 completed eu 1",
      "wf1 completed vip 2",
      "wf2 completed * 1",
    ]);
  });
});
