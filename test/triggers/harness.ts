/**
 * An in-process app for trigger tests: like test/support/app.ts, plus a fake clock for schedules and
 * polls, and `restart()` which opens a second app on the same database file (what a process restart
 * leaves behind).
 *   const h = await triggerApp();
 *   const wf = await h.publishWorkflow(definition);
 *   h.clock.advance(60_000); await h.triggers.scheduler.tick();
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { FakeClock } from "../../src/lib/clock";
import { createLogger } from "../../src/http/logger";
import type { PieceDef } from "../../src/pieces-sdk/types";
import { openDatabase } from "../../src/store/sqlite/db";
import { ROOT_TOKEN } from "../support/app";

export interface Res {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function triggerApp(options: { env?: Record<string, string>; dataDir?: string; clock?: FakeClock; pieces?: PieceDef[] } = {}) {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "weft-trig-"));
  const config = loadConfig({
    WEFT_DATA_DIR: dataDir,
    WEFT_LOG_LEVEL: "silent",
    WEFT_RATE_LIMIT: "0",
    WEFT_FLOOD_LIMIT: "0",
    WEFT_WORKERS: "1",
    WEFT_PUBLIC_URL: "http://weft.test",
    ...options.env,
  });
  const db = openDatabase(join(dataDir, "weft.db"), { synchronous: "NORMAL" });
  const logLines: string[] = [];
  const log = createLogger("debug", (line) => logLines.push(line));
  const clock = options.clock ?? new FakeClock();
  const created = createApp({ config, db, log, clock });
  for (const piece of options.pieces ?? []) created.deps.pieces.register(piece);
  await created.deps.identity.bootstrap(ROOT_TOKEN);
  await created.deps.network.loaded;
  // The engine runs every step on this thread until engine.start() (no worker pool): fast, and test pieces work.
  const engine = created.deps.engine;

  async function req(
    method: string,
    path: string,
    init: { body?: unknown; raw?: BodyInit; headers?: Record<string, string>; token?: string | null } = {},
  ): Promise<Res> {
    const headers: Record<string, string> = { ...init.headers };
    const token = init.token === undefined ? ROOT_TOKEN : init.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined = init.raw;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await created.app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  /** A call to a public webhook URL (no bearer token). */
  function hook(method: string, url: string, init: { body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {}) {
    return req(method, new URL(url).pathname + new URL(url).search, { ...init, token: null });
  }

  async function createWorkflow(name: string, definition: unknown): Promise<any> {
    const res = await req("POST", "/api/workflows", { body: { name, definition } });
    if (res.status !== 201 && res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
    return res.body.data;
  }

  async function publish(id: string): Promise<Res> {
    return req("POST", `/api/workflows/${id}/publish`);
  }

  async function publishWorkflow(definition: unknown, name = "wf"): Promise<any> {
    const wf = await createWorkflow(name, definition);
    const res = await publish(wf.id);
    if (res.status !== 200) throw new Error(`publish failed: ${res.status} ${res.text}`);
    return res.body.data;
  }

  async function run(id: string, waitMs = 5000): Promise<any> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const res = await req("GET", `/api/runs/${id}`);
      if (res.status === 200 && ["completed", "failed", "cancelled"].includes(res.body.data.status)) return res.body.data;
      if (Date.now() > deadline) return res.body?.data;
      await Bun.sleep(10);
    }
  }

  async function runsOf(workflowId: string): Promise<any[]> {
    const res = await req("GET", `/api/runs?workflowId=${workflowId}&environment=all&limit=100`);
    return res.body.data;
  }

  async function close() {
    await created.deps.triggers.stop();
    created.deps.piecePackages.stop();
    await engine.stop(500);
    db.close();
  }

  /** A second app on the same database file, as after a process restart (close this one first). */
  async function restart(clockOverride?: FakeClock) {
    await close();
    return triggerApp({ ...options, dataDir, clock: clockOverride ?? clock });
  }

  return {
    ...created,
    triggers: created.deps.triggers,
    config,
    db,
    dataDir,
    clock,
    logLines,
    req,
    hook,
    createWorkflow,
    publish,
    publishWorkflow,
    run,
    runsOf,
    close,
    restart,
  };
}

export type TriggerApp = Awaited<ReturnType<typeof triggerApp>>;

export const webhookTrigger = (config: Record<string, unknown> = {}) => ({
  name: "trigger",
  displayName: "Webhook",
  type: "webhook",
  pieceId: "webhook",
  actionId: "catch_webhook",
  config,
});

export function definition(trigger: Record<string, unknown>, nextAction?: Record<string, unknown>, settings: Record<string, unknown> = {}) {
  return { schemaVersion: 2, trigger: { ...trigger, ...(nextAction ? { nextAction } : {}) }, settings, variables: {}, annotations: null, pinnedData: {} };
}
