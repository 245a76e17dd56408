/**
 * `weft serve --role api|worker` on one PostgreSQL database: the api instance takes webhooks and API calls and
 * leaves runs to the workers (woken over the bus); a synchronous webhook accepted by the api instance answers
 * with the reply of the run a worker executed, a large one included; a worker serves only /healthz; with no
 * worker alive runs wait, and a worker that starts takes them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { clusterEnv, ok, publishWebhook, startInstance } from "../support/cluster";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import { sampleValue } from "../support/prometheus-text";
import type { ServerHandle } from "../support/server";

announceMissingPostgres();

const MAIN = resolve(import.meta.dir, "../../src/main.ts");

const servers: ServerHandle[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
});

describe("weft serve --role", () => {
  const serve = async (...args: string[]) => {
    const proc = Bun.spawn([process.execPath, MAIN, "serve", ...args], {
      env: { ...process.env, WEFT_PORT: "0", WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-role-")), WEFT_DATABASE_URL: "" },
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: await proc.exited, stderr: await new Response(proc.stderr).text() };
  };

  test("a role other than all on SQLite, or an unknown role, stops start-up saying what is allowed", async () => {
    const worker = await serve("--role", "worker");
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain("WEFT_ROLE=worker needs a cluster on PostgreSQL (WEFT_DATABASE_URL)");
    const bogus = await serve("--role", "boss");
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('WEFT_ROLE="boss" is not allowed; use one of: all, api, worker');
  }, 30_000);
});

describe.skipIf(!postgresBinaries())("an api instance and workers on one PostgreSQL database", () => {
  let api: ServerHandle;
  let env: Record<string, string>;
  const start = (role: "api" | "worker") => startInstance(servers, env, { role });

  beforeAll(async () => {
    const { url } = await networkPostgresDatabase();
    env = clusterEnv(url, { WEFT_METRICS_ALLOW_CIDRS: "127.0.0.0/8" });
    api = await start("api");
    await start("worker");
    await start("worker");
  }, 60_000);

  test("the fleet lists each instance's role; a worker answers /healthz and refuses the API, naming its role", async () => {
    const fleet = (await ok(api, "GET", "/api/fleet")).data as Array<{ role: string }>;
    expect(fleet.map((i) => i.role).sort()).toEqual(["api", "worker", "worker"]);
    const worker = servers[1]!;
    expect(await (await worker.fetch("/healthz")).json()).toEqual({ data: { status: "ok" } });
    const refused = await worker.fetch("/api/workflows");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as any).error.message).toContain("WEFT_ROLE=worker");
  });

  test("a synchronous webhook accepted by the api instance answers with the reply of the run a worker executed, large or small", async () => {
    const token = await publishWebhook(api, "echo", {
      name: "reply",
      type: "PIECE",
      pieceId: "webhook",
      actionId: "respond",
      config: { status: 201, body: { echoed: "{{trigger.body.text}}", size: "{{$length(trigger.body.text)}}" } },
    });
    for (const text of ["hello", "x".repeat(40_000) + "é…✓"]) {
      const res = await fetch(`${api.url}/webhook/${token}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text }),
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ echoed: text, size: text.length });
    }
  }, 30_000);

  test("a worker answers /readyz and /metrics: the runs it executed are in its counters, the api's started them", async () => {
    const token = await publishWebhook(api, "counted", { name: "shape", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { n: 1 } } });
    const res = await fetch(`${api.url}/webhook/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const runId = ((await res.json()) as any).data.runId as string;
    for (const deadline = Date.now() + 10_000; (await ok(api, "GET", `/api/runs/${runId}`)).data.status !== "completed" && Date.now() < deadline; ) {
      await Bun.sleep(100);
    }
    const workers = servers.slice(1, 3);
    for (const worker of workers) expect(((await (await worker.fetch("/readyz", { token: null })).json()) as any).data.status).toBe("ready");
    // From 127.0.0.1, in WEFT_METRICS_ALLOW_CIDRS: no token needed, on a worker's own server too.
    const scrapes = await Promise.all(workers.map(async (worker) => (await fetch(`${worker.url}/metrics`)).text()));
    const executed = scrapes.map((text) => sampleValue(text, "weft_runs_finished_total", { status: "completed", trigger_type: "webhook" }));
    expect(executed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(scrapes.map((text) => sampleValue(text, "weft_step_duration_seconds_count", { piece: "data" })).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(
      1,
    );
    expect(sampleValue(await (await api.fetch("/metrics")).text(), "weft_runs_started_total", { trigger_type: "webhook" })).toBeGreaterThanOrEqual(1);
  }, 30_000);

  test("with no worker alive, runs wait in the shared queue; a worker that starts takes them", async () => {
    const token = await publishWebhook(api, "shape", {
      name: "shape",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { n: "{{trigger.body.n}}" } },
    });
    const ids: string[] = [];
    const send = async (n: number) => {
      const res = await fetch(`${api.url}/webhook/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as any).data.runId);
    };
    await Promise.all(Array.from({ length: 100 }, (_, n) => send(n)));
    const statuses = async () => Promise.all(ids.map(async (id) => (await ok(api, "GET", `/api/runs/${id}`)).data.status as string));
    for (const deadline = Date.now() + 15_000; (await statuses()).some((s) => s !== "completed") && Date.now() < deadline; ) await Bun.sleep(200);
    expect(new Set(await statuses())).toEqual(new Set(["completed"]));

    for (const worker of servers.slice(1)) await worker.stop("SIGTERM");
    ids.length = 0;
    await Promise.all(Array.from({ length: 5 }, (_, n) => send(n)));
    await Bun.sleep(1_500);
    expect(new Set(await statuses())).toEqual(new Set(["pending"]));
    await start("worker");
    for (const deadline = Date.now() + 10_000; (await statuses()).some((s) => s !== "completed") && Date.now() < deadline; ) await Bun.sleep(200);
    expect(new Set(await statuses())).toEqual(new Set(["completed"]));
  }, 60_000);
});
