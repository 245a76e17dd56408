/**
 * In-process test app: a fresh in-memory database, the bootstrap token, and a small request helper.
 *   const t = await testApp();
 *   const res = await t.req("POST", "/api/workflows", { body: { name: "x" } });
 *   expect(res.status).toBe(201); expect(res.body.data.name).toBe("x");
 */
import { createApp } from "../../src/app";
import { loadConfig, type Config } from "../../src/config";
import { createLogger } from "../../src/http/logger";
import type { Clock } from "../../src/lib/clock";
import { openDatabase } from "../../src/store/sqlite/db";
import { connectPostgresDatabase, freshPostgresDatabase, testStorage } from "./postgres-storage";
import { copyFileSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT_TOKEN = "weft_test_root_token_0123456789";

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface ReqOptions {
  body?: unknown;
  /** Raw body text (sent as-is with the given or JSON content type). */
  raw?: string;
  /** Bearer token; null sends none. Default: the root token. */
  token?: string | null;
  headers?: Record<string, string>;
}

let migratedTemplate: string | undefined;

/**
 * `path`, a copy of a SQLite database this build's migrations made: each test app starts from one instead of
 * running every migration again (~25 ms of CPU an app, a fifth of making one), as the PostgreSQL pass starts each
 * from a migrated template. Made once per file (the preload removes a file's temporary directory after it).
 */
function migratedCopy(path: string): string {
  if (!migratedTemplate || !existsSync(migratedTemplate)) {
    migratedTemplate = join(mkdtempSync(join(tmpdir(), "weft-template-")), "weft.db");
    openDatabase(migratedTemplate, { synchronous: "NORMAL" }).close();
  }
  copyFileSync(migratedTemplate, path);
  return path;
}

/** `options.clock`: the app's one clock (a FakeClock the test advances instead of sleeping: docs/architecture.md, "Time"). */
export async function testApp(env: Record<string, string> = {}, options: { clock?: Clock } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "weft-test-"));
  const config: Config = loadConfig({
    WEFT_DATA_DIR: dataDir,
    WEFT_LOG_LEVEL: "silent",
    WEFT_RATE_LIMIT: "0",
    WEFT_FLOOD_LIMIT: "0",
    WEFT_WORKERS: "1",
    // The port's pool on PostgreSQL: a test app is kept open until the last file ends (test/support/postgres-storage.ts),
    // and hundreds of apps with the default 8 connections each would pass the server's max_connections.
    WEFT_DATABASE_POOL: "2",
    ...env,
  });
  const postgres = testStorage() === "postgres" ? await freshPostgresDatabase() : null;
  const db = postgres ? postgres.db : openDatabase(migratedCopy(join(dataDir, "weft.db")), { synchronous: "NORMAL" });
  /**
   * A second connection to this app's store, as a restarted process would open it: the same SQLite file,
   * or the same PostgreSQL database.
   */
  const reopen = () => (postgres ? connectPostgresDatabase(postgres.url) : openDatabase(join(dataDir, "weft.db"), { synchronous: "NORMAL" }));
  const lines: string[] = [];
  const log = createLogger(config.logLevel === "silent" ? "debug" : config.logLevel, (line) => lines.push(line));
  const created = createApp({ config, db, log, clock: options.clock });
  await created.deps.identity.bootstrap(ROOT_TOKEN);
  await created.deps.network.loaded;

  async function req(method: string, path: string, options: ReqOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? ROOT_TOKEN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
    const response = await created.app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let parsed: any = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  /** Mints a token with the given scopes in the root workspace (or another one). */
  async function token(scopes: string[] | "all", workspaceId?: string): Promise<string> {
    const res = await req("POST", "/api/tokens", { body: { name: "test", scopes, ...(workspaceId ? { workspaceId } : {}) } });
    if (res.status !== 201) throw new Error(`token mint failed: ${res.text}`);
    return res.body.data.token;
  }

  /** Creates a second workspace and an all-scopes token in it. */
  async function otherWorkspace(): Promise<{ workspaceId: string; token: string }> {
    const ws = await req("POST", "/api/workspaces", { body: { name: "other" } });
    return { workspaceId: ws.body.data.id, token: await token("all", ws.body.data.id) };
  }

  /** The PostgreSQL database's URL on the PostgreSQL pass (for a CLI run against the same store), else null. */
  const databaseUrl = postgres?.url ?? null;
  return { ...created, config, db, dataDir, logLines: lines, req, token, otherWorkspace, reopen, databaseUrl };
}

export type TestApp = Awaited<ReturnType<typeof testApp>>;
