/**
 * A cluster takes over a dead instance's runs: three `weft serve` processes on one PostgreSQL database take
 * 3,000 webhook calls between them; one is SIGKILLed half-way. Every accepted call's run ends exactly once
 * (each run is listed once, finished), no side effect of a run happens twice (each step calls a local HTTP
 * sink under a path of its own), a run that failed says why, and the survivors finish the dead instance's runs
 * within the lease plus 10 s of the last accepted call.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

const CALLS = 3_000;
const IN_FLIGHT = 24;
const LEASE_SECONDS = 3;
const FINISHED = new Set(["completed", "failed", "cancelled"]);

const hits = new Map<string, number>();
let sink: ReturnType<typeof Bun.serve> | undefined;
const servers: ServerHandle[] = [];

beforeAll(() => {
  sink = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      await Bun.sleep(5); // a side effect takes a moment: the kill lands inside steps too
      return Response.json({ path });
    },
  });
});
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  sink?.stop(true);
});

const effect = (name: string, what: string, next?: Record<string, unknown>) => ({
  name,
  type: "PIECE",
  pieceId: "http",
  actionId: "send_request",
  config: { method: "GET", url: `http://127.0.0.1:${sink!.port}/{{trigger.body.tag}}/${what}`, timeout_ms: 10_000 },
  ...(next ? { nextAction: next } : {}),
});

async function call(server: ServerHandle, method: string, path: string, body?: unknown): Promise<any> {
  const res = await server.fetch(path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function allRuns(server: ServerHandle): Promise<any[]> {
  const runs: any[] = [];
  for (let page = 1; ; page++) {
    const res = await call(server, "GET", `/api/runs?environment=all&limit=100&page=${page}`);
    runs.push(...res.data);
    if (page >= res.pagination.totalPages) return runs;
  }
}

describe.skipIf(!postgresBinaries())("a cluster of three on one PostgreSQL database", () => {
  test("one SIGKILLed half-way through 3,000 webhook calls: every accepted run ends once, no side effect twice, the survivors finish in time", async () => {
    const { url } = await freshPostgresDatabase();
    const env = {
      WEFT_DATABASE_URL: url,
      WEFT_HEARTBEAT_SECONDS: "1",
      WEFT_LEASE_SECONDS: String(LEASE_SECONDS),
      WEFT_ALLOW_CIDRS: "127.0.0.0/8",
      WEFT_LOG_LEVEL: "warn",
      WEFT_RATE_LIMIT: "0",
      WEFT_FLOOD_LIMIT: "0",
    };
    const first = await startServer({ env });
    servers.push(first);
    for (let i = 0; i < 2; i++) {
      // One database, one encryption key.
      const dir = mkdtempSync(join(tmpdir(), "weft-cluster-"));
      copyFileSync(join(first.dataDir, "encryption.key"), join(dir, "encryption.key"));
      servers.push(await startServer({ env, dataDir: dir }));
    }
    const made = await call(first, "POST", "/api/workflows", {
      name: "two side effects",
      definition: {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "webhook",
          pieceId: "webhook",
          actionId: "catch_webhook",
          config: {},
          nextAction: effect("a", "a", effect("b", "b")),
        },
      },
    });
    await call(first, "POST", `/api/workflows/${made.data.id}/publish`);
    const token = made.data.webhookToken as string;

    const victim = servers[2]!;
    const alive = new Set(servers);
    const accepted = new Map<string, string>(); // run id → tag
    let sent = 0;
    let killedAt = 0;
    let lastAcceptedAt = 0;
    const sender = async () => {
      for (;;) {
        const n = sent++;
        if (n >= CALLS) return;
        if (n === CALLS / 2) {
          killedAt = Date.now();
          await victim.stop("SIGKILL");
          alive.delete(victim);
        }
        const targets = [...alive];
        const target = targets[n % targets.length]!;
        const tag = `call-${n}`;
        try {
          const res = await fetch(`${target.url}/webhook/${token}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ tag }),
          });
          if (res.status === 202) {
            accepted.set(((await res.json()) as any).data.runId, tag);
            lastAcceptedAt = Date.now();
          } else await res.body?.cancel();
        } catch {
          // The victim died with this call open: not accepted.
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    expect(accepted.size).toBeGreaterThan(CALLS * 0.95);

    // Every accepted run ends, within the lease + 10 s of the kill or of the last accepted call.
    const survivor = servers[0]!;
    const deadline = Math.max(killedAt + LEASE_SECONDS * 1000, lastAcceptedAt) + 10_000;
    let runs: any[] = [];
    for (;;) {
      runs = await allRuns(survivor);
      if (runs.length >= accepted.size && runs.every((run) => FINISHED.has(run.status))) break;
      if (Date.now() > deadline) break;
      await Bun.sleep(250);
    }
    const unfinished = runs.filter((run) => !FINISHED.has(run.status));
    expect(unfinished.map((run) => `${run.id} ${run.status}`)).toEqual([]);
    expect(Date.now()).toBeLessThanOrEqual(deadline + 1_000);

    // Each accepted run is listed once; no other run exists.
    const ids = runs.map((run) => run.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual([...accepted.keys()].sort());

    // No side effect twice; a completed run did both; a failed run says why.
    const twice = [...hits].filter(([, n]) => n > 1).map(([path]) => path);
    expect(twice).toEqual([]);
    const failed = runs.filter((run) => run.status === "failed");
    for (const run of failed) expect(run.errorMessage).toBeTruthy();
    for (const run of runs.filter((r) => r.status === "completed")) {
      const tag = accepted.get(run.id)!;
      expect([hits.get(`/${tag}/a`), hits.get(`/${tag}/b`)]).toEqual([1, 1]);
    }
    console.log(
      `cluster takeover: ${accepted.size} accepted of ${CALLS}, ${runs.filter((r) => r.status === "completed").length} completed, ${failed.length} failed (interrupted), all finished ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
  }, 120_000);
});
