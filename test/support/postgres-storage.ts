/**
 * Storage on PostgreSQL for the in-process test app (`WEFT_TEST_STORAGE=postgres`, `npm run test:postgres`):
 * one throwaway server per test run (test/support/postgres.ts), a migrated template database, and a
 * fresh database copied from it for every app, so tests stay as independent as with in-memory SQLite.
 * The suite runner (test/support/run-suite.ts) starts that server once for all its parallel workers and
 * hands its URL over in WEFT_TEST_POSTGRES_URL; a file run on its own starts one itself.
 */
import { SQL } from "bun";
import type { Db } from "../../src/store/db";
import { openPostgres } from "../../src/store/postgres/db";
import { openPool, PostgresConnection } from "../../src/store/postgres/connection";
import { PostgresHandle as PostgresStore } from "../../src/store/postgres/handle";
import { type LatencyProxy, startLatencyProxy } from "./latency-proxy";
import { startPostgres, type PostgresHandle } from "./postgres";

export const testStorage = (): "sqlite" | "postgres" => (process.env.WEFT_TEST_STORAGE === "postgres" ? "postgres" : "sqlite");

/** The environment variable naming the suite runner's server (test/support/run-suite.ts). */
export const SUITE_POSTGRES_URL = "WEFT_TEST_POSTGRES_URL";

let server: Promise<{ pg: PostgresHandle; admin: SQL }> | undefined;
let created = 0;
// Under `bun test --parallel` every file loads this module afresh in a worker that runs several files,
// all on the runner's one server: the pid alone would name two files' databases alike.
const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const open: PostgresStore[] = [];

const urlOf = (pg: PostgresHandle, database: string) => `postgres://${pg.user}:${pg.password}@${pg.host}:${pg.port}/${database}`;
const adminOf = (pg: PostgresHandle) => new SQL(pg.url, { adapter: "postgres", max: 2 });

async function createTemplate(pg: PostgresHandle, admin: SQL): Promise<void> {
  await admin.unsafe("CREATE DATABASE weft_template");
  const template = await openPostgres(urlOf(pg, "weft_template"));
  await template.close();
}

/** A server and its migrated template for a whole suite run; the runner stops it after the last worker. */
export async function startSuitePostgres(): Promise<PostgresHandle> {
  const pg = await startPostgres();
  const admin = adminOf(pg);
  try {
    await createTemplate(pg, admin);
  } finally {
    await admin.close();
  }
  return pg;
}

/** The runner's server, reached by URL; it is not this process's to stop. */
function suiteServer(url: string): PostgresHandle {
  const u = new URL(url);
  const user = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  return { host: u.hostname, port: Number(u.port), user, password, database: u.pathname.slice(1), url, stop: async () => {} };
}

function shared() {
  server ??= (async () => {
    const suiteUrl = process.env[SUITE_POSTGRES_URL];
    if (suiteUrl) {
      const pg = suiteServer(suiteUrl);
      return { pg, admin: adminOf(pg) };
    }
    const pg = await startPostgres();
    const admin = adminOf(pg);
    await createTemplate(pg, admin);
    return { pg, admin };
  })();
  return server;
}

/** A new, migrated, empty PostgreSQL database, with its URL. */
export async function freshPostgresDatabase(): Promise<{ db: Db; url: string }> {
  const { pg, admin } = await shared();
  const name = `weft_test_${tag}_${++created}`;
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE weft_template`);
  const url = urlOf(pg, name);
  const db = new PostgresStore(url);
  open.push(db);
  return { db: db.asDatabase(), url };
}

let proxy: Promise<LatencyProxy> | undefined;

/**
 * A fresh database as freshPostgresDatabase gives it, with `url` reaching it through a loopback proxy that adds
 * ~1 ms each way (test/support/latency-proxy.ts): a round trip of ~2 ms, as to a database on another host. The
 * cluster tests give instances this URL; `db` is direct, for the test's own checks.
 */
export async function networkPostgresDatabase(): Promise<{ db: Db; url: string }> {
  const fresh = await freshPostgresDatabase();
  proxy ??= startLatencyProxy(fresh.url, { delayMs: 1 });
  return { db: fresh.db, url: (await proxy).url(fresh.url) };
}

/** A new database with no schema at all (a test migrates it step by step), with its URL. */
export async function emptyPostgresDatabase(): Promise<string> {
  const { pg, admin } = await shared();
  const name = `weft_empty_${tag}_${++created}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  return urlOf(pg, name);
}

/** One more connection to a database handed out by freshPostgresDatabase (closed with the others). */
export function connectPostgresDatabase(url: string): Db {
  const db = new PostgresStore(url);
  open.push(db);
  return db.asDatabase();
}

const clients = new Map<string, { pool: SQL; connection: PostgresConnection }>();

/**
 * Awaited queries on a PostgreSQL database handed out above, for a test's own seeding and checks (the store's
 * `Db` answers no SQL: src/store/postgres/handle.ts). One connection per database, shared by every caller;
 * closed with the others.
 */
export function postgresClient(url: string): PostgresConnection {
  let client = clients.get(url);
  if (!client) {
    const pool = openPool(url, 1);
    client = { pool, connection: new PostgresConnection(pool) };
    clients.set(url, client);
  }
  return client.connection;
}

/**
 * Closes every database handed out and stops the server unless the suite runner owns it (the preload calls it
 * after the last file of a process, and under `--parallel` after every file).
 */
export async function stopSharedPostgres(): Promise<void> {
  if (!server) return;
  await (await proxy?.catch(() => undefined))?.stop();
  proxy = undefined;
  const { pg, admin } = await server;
  for (const { pool } of clients.values()) await pool.close().catch(() => {});
  clients.clear();
  for (const db of open.splice(0)) {
    try {
      db.close();
    } catch {
      // Already closed by its test.
    }
  }
  await admin.close();
  await pg.stop();
  server = undefined;
}
