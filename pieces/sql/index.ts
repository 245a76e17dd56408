/**
 * SQL: PostgreSQL and MySQL/MariaDB through Bun's built-in SQL client, SQLite through bun:sqlite.
 * Values are always bound as parameters, never spliced into the SQL text; table and column names come
 * from the database's own catalogue and are quoted as identifiers. A connection is opened for the step
 * and closed after it (steps are short, and a pool would outlive a changed connection). Hosts pass the
 * SSRF policy first (allowedAddress); SQLite files must lie in a WEFT_SQLITE_DIRS directory.
 */
import { Database } from "bun:sqlite";
import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { sqliteDirsFrom } from "../../src/config";
import { action, allowedAddress, Auth, connectionCheck, definePiece, labelled, Property } from "../../src/pieces-sdk";
import type { DynamicOptionsContext, GuardedFetch, ResolvedAuth } from "../../src/pieces-sdk/types";

type Dialect = "postgres" | "mysql" | "sqlite";

/** One open database for one step: parameterised queries, the table list, and closing. */
interface Db {
  dialect: Dialect;
  query(text: string, params: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

function settingsOf(auth: ResolvedAuth | undefined): Record<string, unknown> {
  if (auth?.kind !== "custom") throw new Error("this step needs a SQL connection (PostgreSQL, MySQL/MariaDB or SQLite); set its connectionId");
  return auth.values;
}

/** The SQLite file, when it lies inside an allowed directory (symbolic links resolved). */
function sqliteFile(path: unknown): string {
  const dirs = sqliteDirsFrom();
  if (dirs.length === 0) throw new Error("SQLite connections are off: the operator allows them by listing directories in WEFT_SQLITE_DIRS");
  const raw = String(path ?? "").trim();
  if (!isAbsolute(raw)) throw new Error(`the SQLite file "${raw}" must be an absolute path inside ${dirs.join(" or ")}`);
  let real: string;
  try {
    real = realpathSync(resolve(raw));
  } catch {
    throw new Error(`the SQLite file ${raw} does not exist`);
  }
  const inside = dirs.some((dir) => {
    let root: string;
    try {
      root = realpathSync(dir);
    } catch {
      return false;
    }
    const rel = relative(root, real);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  });
  if (!inside) throw new Error(`the SQLite file ${raw} is outside the directories allowed by WEFT_SQLITE_DIRS (${dirs.join(", ")})`);
  return real;
}

async function open(fetch: GuardedFetch, auth: ResolvedAuth | undefined): Promise<Db> {
  const s = settingsOf(auth);
  const dialect = String(s.database_type ?? "") as Dialect;
  if (dialect === "sqlite") {
    const db = new Database(sqliteFile(s.file), { strict: true });
    return {
      dialect,
      async query(text, params) {
        return db.query(text).all(...(params as never[])) as Record<string, unknown>[];
      },
      async close() {
        db.close();
      },
    };
  }
  if (dialect !== "postgres" && dialect !== "mysql") throw new Error(`database_type "${s.database_type}" is unknown; use postgres, mysql or sqlite`);
  const host = String(s.host ?? "").trim();
  if (!host) throw new Error("the connection has no host");
  const ssl = s.ssl === true;
  // The policy is checked on the resolved address; without TLS the step connects to exactly that address.
  // With TLS the certificate is checked for the host name, so the name is used (after the check).
  const address = await allowedAddress(fetch, host);
  // Bun.SQL at the call: naming it at the top would load the client in every process at start.
  const sql = new Bun.SQL({
    adapter: dialect === "postgres" ? "postgres" : "mysql",
    hostname: ssl ? host : address,
    port: Number(s.port ?? (dialect === "postgres" ? 5432 : 3306)),
    database: String(s.database ?? ""),
    username: String(s.user ?? ""),
    password: String(s.password ?? ""),
    tls: ssl,
    max: 1,
    connectionTimeout: 10,
  });
  return {
    dialect,
    async query(text, params) {
      return [...((await sql.unsafe(text, params as never[])) as Record<string, unknown>[])];
    },
    async close() {
      await sql.close();
    },
  };
}

async function withDb<T>(fetch: GuardedFetch, auth: ResolvedAuth | undefined, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await open(fetch, auth);
  try {
    return await fn(db);
  } finally {
    await db.close().catch(() => undefined);
  }
}

/** Tables the connection's user sees, as `schema.table` on PostgreSQL (public tables without the schema). */
async function tables(db: Db): Promise<string[]> {
  if (db.dialect === "postgres") {
    const rows = await db.query(
      "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
      [],
    );
    return rows.map((r) => (r.s === "public" ? String(r.t) : `${r.s}.${r.t}`));
  }
  if (db.dialect === "mysql") {
    const rows = await db.query("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1", []);
    return rows.map((r) => String(r.t));
  }
  const rows = await db.query("SELECT name AS t FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1", []);
  return rows.map((r) => String(r.t));
}

async function columns(db: Db, table: string): Promise<string[]> {
  if (db.dialect === "sqlite") return (await db.query(`SELECT name FROM pragma_table_info(?)`, [table])).map((r) => String(r.name));
  if (db.dialect === "mysql")
    return (
      await db.query("SELECT column_name AS c FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position", [
        table,
      ])
    ).map((r) => String(r.c));
  const [schema, name] = table.includes(".") ? [table.slice(0, table.indexOf(".")), table.slice(table.indexOf(".") + 1)] : ["public", table];
  return (
    await db.query("SELECT column_name AS c FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position", [
      schema,
      name,
    ])
  ).map((r) => String(r.c));
}

const quote = (db: Db, name: string) => (db.dialect === "mysql" ? `\`${name.replaceAll("`", "``")}\`` : `"${name.replaceAll('"', '""')}"`);
const quoteTable = (db: Db, table: string) =>
  db.dialect === "postgres" && table.includes(".")
    ? `${quote(db, table.slice(0, table.indexOf(".")))}.${quote(db, table.slice(table.indexOf(".") + 1))}`
    : quote(db, table);
const placeholder = (db: Db, n: number) => (db.dialect === "postgres" ? `$${n}` : "?");

/** The table as the database lists it, or an error naming the tables there are. */
async function knownTable(db: Db, table: unknown): Promise<string> {
  const name = String(table ?? "").trim();
  const list = await tables(db);
  if (!list.includes(name)) throw new Error(`table "${name}" does not exist; tables: ${list.join(", ") || "none"}`);
  return name;
}

/** Row values as the drivers take them: objects and arrays as JSON text. */
const bindable = (value: unknown) => (value !== null && typeof value === "object" && !(value instanceof Date) ? JSON.stringify(value) : value);

const tableProp = () =>
  Property.dropdown({
    displayName: "Table",
    required: true,
    refreshers: ["auth"],
    description: "listed from the database",
    options: async (ctx: DynamicOptionsContext) => {
      const list = await withDb(ctx.fetch, ctx.auth, tables);
      return list.length ? { options: list.map((t) => ({ label: t, value: t })) } : { options: [], placeholder: "The database has no tables" };
    },
  });

export default definePiece({
  id: "sql",
  name: "SQL database",
  version: "1.0.0",
  icon: "🗄️",
  description: "Query PostgreSQL, MySQL/MariaDB and SQLite databases with bound parameters",
  auth: Auth.custom({
    database_type: Property.staticDropdown({
      displayName: "Database",
      required: true,
      options: labelled({ postgres: "PostgreSQL", mysql: "MySQL / MariaDB", sqlite: "SQLite file" }),
    }),
    host: Property.shortText({
      displayName: "Host",
      description: "PostgreSQL / MySQL: name or address (a LAN address needs its range allowed in Settings → Network)",
    }),
    port: Property.integer({ displayName: "Port", description: "default 5432 (PostgreSQL) or 3306 (MySQL)", min: 1, max: 65535 }),
    database: Property.shortText({ displayName: "Database name" }),
    user: Property.shortText({ displayName: "User" }),
    password: Property.secretText({ displayName: "Password" }),
    ssl: Property.checkbox({ displayName: "Use TLS", default: false }),
    file: Property.shortText({ displayName: "SQLite file", description: "an absolute path inside a directory listed in WEFT_SQLITE_DIRS" }),
  }),
  checkConnection: connectionCheck(async ({ auth, fetch }) => {
    await withDb(fetch, auth, (db) => db.query("SELECT 1 AS ok", []));
    return "SELECT 1 answered";
  }),
  actions: [
    action({
      id: "run_query",
      name: "Run a query",
      description: "Run one SQL statement with bound parameters ($1, $2 on PostgreSQL; ? on MySQL and SQLite)",
      sideEffects: "external",
      props: {
        query: Property.longText({
          displayName: "SQL",
          required: true,
          description: "e.g. SELECT * FROM readings WHERE sensor = $1 — never put values in the text: pass them as parameters",
        }),
        params: Property.json({
          displayName: "Parameters",
          description: 'values for the placeholders, in order, e.g. ["{{trigger.body.sensor}}"]',
          default: [],
        }),
      },
      sampleData: { rows: [{ id: 1, sensor: "kitchen", value: 21.5 }], rowCount: 1 },
      async run(ctx) {
        const params = ctx.config.params ?? [];
        if (!Array.isArray(params)) throw new Error("params must be a list of values, one per placeholder");
        const rows = await withDb(ctx.fetch, ctx.auth, (db) => db.query(String(ctx.config.query ?? ""), params.map(bindable)));
        return { rows, rowCount: rows.length };
      },
    }),
    action({
      id: "insert_rows",
      name: "Insert rows",
      description: "Insert rows (objects keyed by column name) into a table",
      sideEffects: "write",
      props: {
        table: tableProp(),
        rows: Property.json({ displayName: "Rows", required: true, description: 'a list of objects, e.g. [{"sensor": "kitchen", "value": 21.5}]' }),
      },
      sampleData: { inserted: 1 },
      async run(ctx) {
        const rows = ctx.config.rows;
        if (!Array.isArray(rows) || rows.length === 0 || !rows.every((r) => r !== null && typeof r === "object" && !Array.isArray(r))) {
          throw new Error("rows must be a non-empty list of objects keyed by column name");
        }
        return withDb(ctx.fetch, ctx.auth, async (db) => {
          const table = await knownTable(db, ctx.config.table);
          const known = await columns(db, table);
          let inserted = 0;
          for (const row of rows as Record<string, unknown>[]) {
            const names = Object.keys(row);
            const unknown = names.filter((n) => !known.includes(n));
            if (unknown.length) throw new Error(`table "${table}" has no column ${unknown.map((n) => `"${n}"`).join(", ")}; columns: ${known.join(", ")}`);
            const text = `INSERT INTO ${quoteTable(db, table)} (${names.map((n) => quote(db, n)).join(", ")}) VALUES (${names.map((_, i) => placeholder(db, i + 1)).join(", ")})`;
            await db.query(
              text,
              names.map((n) => bindable(row[n])),
            );
            inserted++;
          }
          return { inserted };
        });
      },
    }),
    action({
      id: "select_rows",
      name: "Select rows",
      description: "Read rows of a table, filtered by column = value",
      sideEffects: "read",
      props: {
        table: tableProp(),
        where: Property.keyValue({ displayName: "Where (column = value)", description: "all must match; leave empty for every row" }),
        limit: Property.integer({ displayName: "Most rows", min: 1, max: 10_000, default: 100 }),
      },
      sampleData: { rows: [{ id: 1, sensor: "kitchen", value: 21.5 }], rowCount: 1 },
      async run(ctx) {
        return withDb(ctx.fetch, ctx.auth, async (db) => {
          const table = await knownTable(db, ctx.config.table);
          const where = (ctx.config.where ?? {}) as Record<string, unknown>;
          const known = await columns(db, table);
          const names = Object.keys(where);
          const unknown = names.filter((n) => !known.includes(n));
          if (unknown.length) throw new Error(`table "${table}" has no column ${unknown.map((n) => `"${n}"`).join(", ")}; columns: ${known.join(", ")}`);
          const limit = Math.max(1, Math.min(10_000, Number(ctx.config.limit ?? 100)));
          const clause = names.length ? ` WHERE ${names.map((n, i) => `${quote(db, n)} = ${placeholder(db, i + 1)}`).join(" AND ")}` : "";
          const rows = await db.query(
            `SELECT * FROM ${quoteTable(db, table)}${clause} LIMIT ${limit}`,
            names.map((n) => bindable(where[n])),
          );
          return { rows, rowCount: rows.length };
        });
      },
    }),
  ],
});
