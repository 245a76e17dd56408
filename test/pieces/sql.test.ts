/**
 * The sql piece against real databases started by the test: PostgreSQL (Debian `postgresql`), MariaDB
 * (Debian `mariadb-server`) and an SQLite file. For each: a published workflow inserts rows and selects
 * them back, the table dropdown lists the real tables through the options endpoint, an injection attempt
 * through a bound value stays a value, and the SSRF policy / WEFT_SQLITE_DIRS guard the way in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp, type TestApp } from "../support/app";
import { announceMissingMariadb, hasMariadb, startMariadb, type MariadbHandle } from "../support/mariadb";
import { announceMissingPostgres, postgresBinaries, startPostgres, type PostgresHandle } from "../support/postgres";

const sqliteDir = mkdtempSync(join(tmpdir(), "weft-sqlite-"));
let t: TestApp;
// Like the sandbox's settings, the piece reads WEFT_SQLITE_DIRS from the process environment (worker
// threads inherit it): set for this file, restored after it.
const previousDirs = process.env.WEFT_SQLITE_DIRS;
beforeAll(async () => {
  process.env.WEFT_SQLITE_DIRS = sqliteDir;
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_SQLITE_DIRS: sqliteDir });
});
afterAll(() => {
  if (previousDirs === undefined) delete process.env.WEFT_SQLITE_DIRS;
  else process.env.WEFT_SQLITE_DIRS = previousDirs;
});

let made = 0;
async function connection(values: Record<string, unknown>, app = t): Promise<string> {
  const res = await app.req("POST", "/api/connections", { body: { pieceId: "sql", name: `db ${++made}`, values } });
  if (res.status !== 201) throw new Error(`connection: ${res.text}`);
  return res.body.data.id;
}

async function runSteps(connectionId: string, steps: Array<Record<string, unknown>>, body: Record<string, unknown> = {}, app = t) {
  let next: Record<string, unknown> | undefined;
  for (const step of [...steps].reverse()) next = { type: "PIECE", pieceId: "sql", connectionId, ...step, ...(next ? { nextAction: next } : {}) };
  const definition = { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {}, nextAction: next } };
  const wf = await app.req("POST", "/api/workflows", { body: { name: `sql ${++made}`, definition } });
  const published = await app.req("POST", `/api/workflows/${wf.body.data.id}/publish`);
  if (published.status !== 200) throw new Error(`publish: ${published.text}`);
  return (await app.req("POST", `/api/workflows/${wf.body.data.id}/run?environment=production&wait=20`, { body })).body.data;
}

/** The same checks for every database: `exec` runs set-up SQL directly, `p(n)` is its placeholder. */
function databaseSuite(
  name: string,
  setup: () => Promise<{ values: Record<string, unknown>; exec: (sql: string) => Promise<unknown>; p: (n: number) => string; stop: () => Promise<void> }>,
) {
  let db: Awaited<ReturnType<typeof setup>>;
  let conn: string;
  beforeAll(async () => {
    db = await setup();
    await db.exec("CREATE TABLE readings (id INTEGER PRIMARY KEY, sensor VARCHAR(50) NOT NULL, value REAL, note VARCHAR(200))");
    await db.exec("CREATE TABLE other_table (x INTEGER)");
    conn = await connection(db.values);
  }, 60_000);
  afterAll(async () => {
    await db?.stop();
  });

  test(`${name}: the table dropdown lists the real tables`, async () => {
    const res = await t.req("POST", "/api/pieces/sql/actions/select_rows/options/table", { body: { connectionId: conn, config: {} } });
    expect(res.status).toBe(200);
    expect(res.body.data.options.map((o: any) => o.value)).toEqual(["other_table", "readings"]);
  });

  test(`${name}: a published workflow inserts rows and selects them back`, async () => {
    const run = await runSteps(
      conn,
      [
        {
          name: "put",
          actionId: "insert_rows",
          config: {
            table: "readings",
            rows: [
              { id: 1, sensor: "{{trigger.body.sensor}}", value: 21.5 },
              { id: 2, sensor: "garage", value: 8 },
            ],
          },
        },
        { name: "get", actionId: "select_rows", config: { table: "readings", where: { sensor: "{{trigger.body.sensor}}" }, limit: 10 } },
      ],
      { sensor: "kitchen" },
    );
    expect(run.status).toBe("completed");
    expect(run.steps[0].outputData).toEqual({ inserted: 2 });
    expect(run.steps[1].outputData.rowCount).toBe(1);
    expect(run.steps[1].outputData.rows[0]).toMatchObject({ id: 1, sensor: "kitchen", value: 21.5 });
  });

  test(`${name}: an injection attempt through a bound value stays a value`, async () => {
    const evil = "x'); DROP TABLE readings; --";
    const run = await runSteps(
      conn,
      [
        {
          name: "put",
          actionId: "run_query",
          config: {
            query: `INSERT INTO readings (id, sensor, note) VALUES (${db.p(1)}, ${db.p(2)}, ${db.p(3)})`,
            params: [3, "attic", "{{trigger.body.note}}"],
          },
        },
        { name: "get", actionId: "run_query", config: { query: `SELECT note FROM readings WHERE id = ${db.p(1)}`, params: [3] } },
      ],
      { note: evil },
    );
    expect(run.status).toBe("completed");
    expect(run.steps[1].outputData.rows).toEqual([{ note: evil }]);
    const still = await runSteps(conn, [{ name: "count", actionId: "run_query", config: { query: "SELECT COUNT(*) AS n FROM readings", params: [] } }]);
    expect(Number(still.steps[0].outputData.rows[0].n)).toBe(3);
  });

  test(`${name}: unknown tables and columns are refused with what exists`, async () => {
    const badTable = await runSteps(conn, [{ name: "get", actionId: "select_rows", config: { table: "readings; DROP TABLE other_table", limit: 1 } }]);
    expect(badTable.errorMessage).toContain("does not exist; tables: other_table, readings");
    const badColumn = await runSteps(conn, [
      { name: "put", actionId: "insert_rows", config: { table: "readings", rows: [{ id: 9, sensor: "x", colour: "red" }] } },
    ]);
    expect(badColumn.errorMessage).toContain('has no column "colour"; columns: id, sensor, value, note');
    expect((await t.req("POST", `/api/connections/${conn}/test`)).body.data).toMatchObject({ ok: true });
  });
}

const pgBin = postgresBinaries();
announceMissingPostgres();
describe.skipIf(!pgBin)("PostgreSQL", () => {
  let pg: PostgresHandle;
  databaseSuite("PostgreSQL", async () => {
    pg = await startPostgres();
    const client = new SQL(pg.url);
    return {
      values: { database_type: "postgres", host: "127.0.0.1", port: pg.port, database: pg.database, user: pg.user, password: pg.password },
      exec: (text) => client.unsafe(text),
      p: (n) => `$${n}`,
      stop: async () => {
        await client.close();
        await pg.stop();
      },
    };
  });

  test("PostgreSQL: a server on a blocked address is refused by the SSRF policy", async () => {
    const strict = await testApp();
    const conn = await connection({ database_type: "postgres", host: "127.0.0.1", port: pg.port, database: "postgres", user: "weft", password: "x" }, strict);
    const run = await runSteps(conn, [{ name: "q", actionId: "run_query", config: { query: "SELECT 1", params: [] } }], {}, strict);
    expect(run.status).toBe("failed");
    expect(run.errorMessage).toContain("WEFT_ALLOW_CIDRS");
  });
});

announceMissingMariadb();
describe.skipIf(!hasMariadb())("MariaDB", () => {
  let maria: MariadbHandle;
  databaseSuite("MariaDB", async () => {
    maria = await startMariadb();
    const client = new SQL(maria.url);
    return {
      values: { database_type: "mysql", host: "127.0.0.1", port: maria.port, database: maria.database, user: maria.user, password: maria.password },
      exec: (text) => client.unsafe(text),
      p: () => "?",
      stop: async () => {
        await client.close();
        await maria.stop();
      },
    };
  });
});

describe("SQLite", () => {
  databaseSuite("SQLite", async () => {
    const file = join(sqliteDir, "home.db");
    const client = new Database(file);
    return {
      values: { database_type: "sqlite", file },
      exec: async (text) => client.run(text),
      p: () => "?",
      stop: async () => client.close(),
    };
  });

  test("SQLite: a file outside WEFT_SQLITE_DIRS is refused, and without the setting SQLite is off", async () => {
    const outside = join(mkdtempSync(join(tmpdir(), "weft-elsewhere-")), "x.db");
    new Database(outside).close();
    const conn = await connection({ database_type: "sqlite", file: outside });
    const run = await runSteps(conn, [{ name: "q", actionId: "run_query", config: { query: "SELECT 1", params: [] } }]);
    expect(run.errorMessage).toContain("outside the directories allowed by WEFT_SQLITE_DIRS");
    // A server started without the setting (its worker threads copy the environment when they start).
    delete process.env.WEFT_SQLITE_DIRS;
    try {
      const off = await testApp();
      const offConn = await connection({ database_type: "sqlite", file: join(sqliteDir, "home.db") }, off);
      const offRun = await runSteps(offConn, [{ name: "q", actionId: "run_query", config: { query: "SELECT 1", params: [] } }], {}, off);
      expect(offRun.errorMessage).toContain("SQLite connections are off");
      await off.deps.engine.stop(100);
    } finally {
      process.env.WEFT_SQLITE_DIRS = sqliteDir;
    }
  });
});
