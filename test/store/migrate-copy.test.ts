/**
 * `weft migrate --from DIR --to postgres://…` (issue 18 item 4), as a user runs it: a real server fills a SQLite
 * data directory (a workflow with two published versions that calls an API with a connection's secret
 * header, and 10,000 tagged runs of a second workflow), the CLI copies it into an empty PostgreSQL database
 * and prints counts equal to the source's; a server on the SAME data directory with WEFT_DATABASE_URL then
 * lists the 10,000 runs (and as many with the tag), still decrypts the connection (the API sees its header)
 * and runs the migrated webhook. A second copy into the now non-empty database is refused, naming a table;
 * with --force it replaces it. Bad arguments are refused with what is wrong.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { migrations } from "../../src/store/sqlite/migrations";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase, postgresClient } from "../support/postgres-storage";
import { startServer, type ServerHandle } from "../support/server";

announceMissingPostgres();

const ROOT = resolve(import.meta.dir, "../..");
const RUNS = 10_000;
const SECRET = "sk_live_copied_0123456789";

/** `weft migrate ARGS` in a child process, as a user types it. */
async function weftMigrate(args: string[]) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "migrate", ...args], {
    cwd: ROOT,
    env: { ...process.env, WEFT_LOG_LEVEL: "warn", WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-unused-")) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The `table: N rows` lines the copy printed. */
const printedCounts = (stdout: string) => Object.fromEntries([...stdout.matchAll(/^(\w+): (\d+) rows?$/gm)].map((m) => [m[1], Number(m[2])]));

/** A data directory whose database has this weft's schema, and what `fill` puts in it. */
function sqliteDataDir(fill: (db: Database) => void = () => {}): string {
  const dir = mkdtempSync(join(tmpdir(), "weft-src-"));
  const db = openDatabase(join(dir, "weft.db"));
  fill(db);
  db.close();
  return dir;
}

describe("weft migrate --from/--to refuses what it cannot copy", () => {
  test.each([
    [["--from", "/tmp"], "--to is missing: the PostgreSQL database to copy into; usage: weft migrate --from DATA_DIR --to postgres://"],
    [["--to", "postgres://u:p@127.0.0.1:1/db"], "--from is missing: the data directory whose SQLite database to copy; usage:"],
    [["--from", "/tmp", "--to", "mysql://u:hunter2@host/db"], 'not a postgres:// URL (it starts "mysql:"); use postgres://user:password@host:5432/database'],
    [["--from", "/nonexistent-weft-dir", "--to", "postgres://u:p@127.0.0.1:1/db"], "no weft.db in /nonexistent-weft-dir"],
    [["--form", "/tmp"], "Unknown option '--form'; usage: weft migrate"],
  ])("%j → %s", async (args, message) => {
    const { code, stdout, stderr } = await weftMigrate(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(message);
    expect(stderr).not.toContain("hunter2");
  });

  test("a PostgreSQL that does not answer is named without its password, with what to check", async () => {
    const { code, stderr } = await weftMigrate(["--from", sqliteDataDir(), "--to", "postgres://weft:hunter2@127.0.0.1:1/weft"]);
    expect(code).toBe(2);
    expect(stderr).toContain("nothing was copied: cannot use postgres://weft:***@127.0.0.1:1/weft: ");
    expect(stderr).toContain("check that PostgreSQL listens there");
    expect(stderr).not.toContain("hunter2");
  });

  test("a data directory on an older schema is refused before anything is written, with the command that upgrades it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-old-"));
    const db = new Database(join(dir, "weft.db"));
    for (const migration of migrations.filter((m) => m.version <= 7)) db.run(migration.sql);
    db.run("PRAGMA user_version = 7");
    db.close();
    const { code, stderr } = await weftMigrate(["--from", dir, "--to", "postgres://u:p@127.0.0.1:1/db"]);
    expect(code).toBe(2);
    expect(stderr).toContain(`is at schema version 7, this weft's is ${migrations.at(-1)!.version}: upgrade it first with \`weft migrate\``);
  });
});

describe.skipIf(!postgresBinaries())("weft migrate --from a SQLite data dir --to PostgreSQL", () => {
  let api: ReturnType<typeof Bun.serve>;
  /** The Authorization-like header the API saw on each call. */
  const seen: Array<string | null> = [];
  let dataDir: string;
  let server: ServerHandle | undefined;
  let callsApi: string;
  let sourceCounts: Record<string, number>;

  beforeAll(() => {
    api = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(request) {
        const key = request.headers.get("x-api-key");
        seen.push(key);
        return key === SECRET ? Response.json({ user: "ada" }) : Response.json({ error: "bad key" }, { status: 401 });
      },
    });
    dataDir = join(mkdtempSync(join(tmpdir(), "weft-copy-")), "data");
    mkdirSync(dataDir);
  });
  afterAll(async () => {
    await server?.stop("SIGKILL");
    api.stop(true);
  });

  const env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_ENCRYPTION_KEY: "", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" };
  async function call(method: string, path: string, body?: unknown) {
    const res = await server!.fetch(path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const hookOf = async (id: string) =>
    ((await call("GET", `/api/workflows/${id}/trigger`)).body.data.webhook.url as string).replace(/^http:\/\/[^/]+/, server!.url);
  const total = async (query: string) => (await call("GET", `/api/runs?limit=1&${query}`)).body.pagination.total as number;

  /** A definition: a webhook trigger, then `steps`. */
  const onWebhook = (steps: object) => ({
    schemaVersion: 2,
    trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {}, nextAction: steps },
    settings: {},
    variables: {},
    annotations: null,
    pinnedData: {},
  });
  /** Calls the API with the connection's header and answers what the API answered. */
  const callsApiDefinition = (connectionId: string, path: string) =>
    onWebhook({
      name: "call",
      type: "PIECE",
      pieceId: "http",
      actionId: "send_request",
      connectionId,
      config: { method: "GET", url: `http://127.0.0.1:${api.port}${path}`, auth_type: "connection" },
      nextAction: { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config: { status: 200, body: "{{call.output.body}}" } },
    });

  test(`a SQLite data directory with ${RUNS} runs is copied, verified, and served from PostgreSQL`, async () => {
    server = await startServer({ dataDir, env });
    const connection = await call("POST", "/api/connections", {
      pieceId: "http",
      name: "the API",
      values: { header_name: "X-Api-Key", header_value: SECRET },
    });
    expect(connection.status).toBe(201);
    const connectionId = connection.body.data.id as string;
    const made = await call("POST", "/api/workflows", { name: "calls the API", definition: callsApiDefinition(connectionId, "/v1/me") });
    expect(made.status).toBe(201);
    callsApi = made.body.data.id;
    expect((await call("POST", `/api/workflows/${callsApi}/publish`)).status).toBe(200);
    expect((await call("PUT", `/api/workflows/${callsApi}`, { definition: callsApiDefinition(connectionId, "/v2/me") })).status).toBe(200);
    expect((await call("POST", `/api/workflows/${callsApi}/publish`)).status).toBe(200);

    const bulk = await call("POST", "/api/workflows", {
      name: "bulk",
      definition: onWebhook({ name: "tag", type: "PIECE", pieceId: "tags", actionId: "add_tags", config: { tags: ["bulk"] } }),
    });
    expect(bulk.status).toBe(201);
    expect((await call("POST", `/api/workflows/${bulk.body.data.id}/publish`)).status).toBe(200);
    const bulkHook = await hookOf(bulk.body.data.id);
    let next = 0;
    const caller = async () => {
      while (next < RUNS) {
        next++;
        const res = await fetch(bulkHook, { method: "POST", headers: { "content-type": "application/json" }, body: `{"n":${next}}` });
        if (res.status !== 202) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, caller));
    for (let waited = 0; (await total("status=completed&tag=bulk")) < RUNS; waited += 100) {
      if (waited > 30_000) throw new Error(`runs did not finish: ${await total("status=completed")} of ${RUNS} completed`);
      await Bun.sleep(100);
    }
    const { url } = await freshPostgresDatabase();
    // The test's own connection to the copy's database (the store's Db answers no SQL).
    const target = postgresClient(url);
    // A database as an operator creates it: no Weft tables yet.
    await target.run("DROP SCHEMA public CASCADE");
    await target.run("CREATE SCHEMA public");
    const busy = await weftMigrate(["--from", dataDir, "--to", url]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`the data directory ${dataDir} is in use by another weft process (pid ${server.proc.pid})`);
    expect(await server.stop()).toBe(0);
    server = undefined;

    const source = new Database(join(dataDir, "weft.db"), { readonly: true });
    // Every table but the fleet registry, which lists running processes and is not data.
    const tables = source
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('instances')")
      .all();
    sourceCounts = Object.fromEntries(tables.map(({ name }) => [name, (source.query(`SELECT count(*) AS n FROM ${name}`).get() as { n: number }).n]));
    // A run inserted finished keeps its steps packed in its row (runs.packed_steps), others as run_steps rows.
    const packed = source.query("SELECT id FROM runs WHERE packed_steps IS NOT NULL LIMIT 1").get() as { id: string } | null;
    const packedRuns = (source.query("SELECT count(*) AS n FROM runs WHERE packed_steps IS NOT NULL").get() as { n: number }).n;
    source.close();
    expect(sourceCounts).toMatchObject({ runs: RUNS, workflow_versions: 3, connections: 1 });
    expect(sourceCounts.run_steps! + packedRuns).toBeGreaterThanOrEqual(RUNS);
    expect(packed).not.toBeNull();
    expect(sourceCounts.run_tags).toBe(RUNS);

    const started = performance.now();
    const copy = await weftMigrate(["--from", dataDir, "--to", url]);
    const seconds = (performance.now() - started) / 1000;
    expect(copy.stderr).not.toContain("failed");
    expect(copy.code).toBe(0);
    expect(printedCounts(copy.stdout)).toEqual(sourceCounts);
    const rows = Object.values(sourceCounts).reduce((a, b) => a + b, 0);
    expect(copy.stdout).toContain(`copied ${rows} rows in ${tables.length} tables from ${join(dataDir, "weft.db")} to postgres://weft:***@`);
    expect(copy.stdout).not.toContain("weft-test-password");
    console.log(`copied ${rows} rows (${RUNS} runs) in ${seconds.toFixed(1)} s, the CLI's start included`);
    // The kept counts were copied as stored, not counted a second time by the triggers on runs.
    expect(await target.get("SELECT sum(n) AS n FROM run_counts WHERE tag = ''")).toEqual({ n: String(RUNS) });
    expect(await target.get("SELECT sum(runs) AS n FROM run_definitions")).toEqual({ n: String(RUNS) });
    // The copied tables are vacuumed and analysed: planned on their real sizes from the first query.
    const maintained = await target.all(
      "SELECT relname, last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analysed FROM pg_stat_user_tables WHERE relname IN ('runs', 'run_steps') ORDER BY relname",
    );
    expect(maintained).toEqual([
      { relname: "run_steps", vacuumed: true, analysed: true },
      { relname: "runs", vacuumed: true, analysed: true },
    ]);
    // The indexes of the large tables, dropped for the copy and built after it, are the schema's, every one.
    const indexes = (db: typeof target) =>
      db.all<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname");
    const fresh = postgresClient((await freshPostgresDatabase()).url);
    expect(await indexes(target)).toEqual(await indexes(fresh));
    expect((await indexes(target)).map((i) => i.indexname)).toContain("runs_workflow_started");
    // Steps keep their order key, and new steps are numbered after the copied ones.
    const maxRowid = Number((await target.get<{ m: number }>("SELECT max(rowid) AS m FROM run_steps"))!.m);
    expect(maxRowid).toBeGreaterThanOrEqual(sourceCounts.run_steps!);

    // The same data directory (its encryption.key) with the database moved; no bootstrap: the copied token answers.
    server = await startServer({ dataDir, env: { ...env, WEFT_DATABASE_URL: url, WEFT_BOOTSTRAP_TOKEN: "" } });
    expect(await total("")).toBe(RUNS);
    expect(await total("tag=bulk")).toBe(RUNS);
    // Packed steps crossed as bytes: the run reads back with its step from PostgreSQL.
    const packedRun = await call("GET", `/api/runs/${packed!.id}`);
    expect(packedRun.body.data.steps.map((step: { nodeId: string; status: string }) => [step.nodeId, step.status])).toEqual([["tag", "completed"]]);
    const versions = await call("GET", `/api/workflows/${callsApi}/versions`);
    expect(versions.body.data.map((v: { number: number }) => v.number)).toEqual([2, 1]);
    const kept = await call("GET", `/api/connections/${connectionId}`);
    expect(kept.body.data).toMatchObject({ id: connectionId, name: "the API", pieceId: "http" });
    expect(JSON.stringify(kept.body)).not.toContain(SECRET);

    const answer = await fetch(await hookOf(callsApi), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect({ status: answer.status, body: await answer.json() }).toEqual({ status: 200, body: { user: "ada" } });
    expect(seen).toEqual([SECRET]);
    expect(await total("")).toBe(RUNS + 1);
    // Runs and names are stored compact on both (run-layout.ts), their keys copied as they were: the run just
    // stored took a seq after the copied ones, and every seq is still one run's.
    const seqs = await target.get(
      "SELECT count(DISTINCT seq)::int AS distinct, count(*)::int AS runs, max(seq) = (SELECT seq FROM runs ORDER BY started_at DESC, seq DESC LIMIT 1) AS last FROM runs",
    );
    expect(seqs).toEqual({ distinct: RUNS + 1, runs: RUNS + 1, last: true });
    const stepRowids = await target.all<{ rowid: number }>(
      "SELECT rowid FROM run_steps WHERE run_id = (SELECT id FROM runs WHERE workflow_id = (SELECT key FROM run_names WHERE name = $1))",
      [callsApi],
    );
    expect(stepRowids.length).toBeGreaterThan(0);
    for (const { rowid } of stepRowids) expect(Number(rowid)).toBeGreaterThan(maxRowid);
    await server.stop();
    server = undefined;

    // Again, into what is no longer empty: refused, naming a table; --force replaces it with the copy.
    const again = await weftMigrate(["--from", dataDir, "--to", url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds Weft data \(table orgs has 1 row, \d+ more table\(s\) too\); .*add --force/);
    expect(again.stdout).toBe("");
    expect(await target.get("SELECT count(*) AS n FROM runs")).toEqual({ n: RUNS + 1 });
    const forced = await weftMigrate(["--from", dataDir, "--to", url, "--force"]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`runs ${RUNS + 1}`);
    expect(printedCounts(forced.stdout)).toEqual(sourceCounts);
    expect(await target.get("SELECT count(*) AS n FROM runs")).toEqual({ n: RUNS });
  }, 120_000);

  test("a value PostgreSQL cannot hold is refused with its table, row and column, and no row is written", async () => {
    const dir = sqliteDataDir((db) => db.run("INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)", ["org-1", "Acme\u0000", "2026-01-01T00:00:00.000Z"]));
    const { url } = await freshPostgresDatabase();
    const target = postgresClient(url);
    const { code, stderr } = await weftMigrate(["--from", dir, "--to", url]);
    expect(code).toBe(2);
    expect(stderr).toContain("nothing was copied: table orgs, row id=org-1: column name holds the character U+0000, which PostgreSQL text cannot store");
    expect(await target.get("SELECT count(*) AS n FROM orgs")).toEqual({ n: 0 });
  });
});
