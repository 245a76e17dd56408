/**
 * State every instance of a cluster must agree on, with real `weft serve` processes on one PostgreSQL
 * database:
 * - Settings → Network: a range allowed (or removed) through A is in force for runs on B within 2 s, without a
 *   restart (the bus; and, in one process, the re-read on a timer should a notification be lost);
 * - a token revoked through A stops working on B, a workflow unpublished, republished or rotated through A is
 *   followed by B's webhook URL, and runs B holds for maintenance mode are released by a publish through A,
 *   each within 2 s;
 * - OAuth2: runs on A and B needing the same expiring token at once cause ONE call to the provider's token
 *   endpoint (the refresh lease on the connection row), and all use the new token;
 * - Idempotency-Key: a key answered on A replays on B; one sent to A and B at once executes once (the other
 *   answers 409); an instance starting meanwhile does not release a live instance's claim; a dead one's claim
 *   is released by the survivors.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterChanges } from "../../src/core/cluster-changes";
import { Identity, type Principal } from "../../src/core/identity";
import { NetworkSettings } from "../../src/core/network";
import { createLogger } from "../../src/http/logger";
import type { Db } from "../../src/store/db";
import { storageOf } from "../../src/store/storage";
import { startProvider, type Provider } from "../connections/support/oauth-provider";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { connectPostgresDatabase, freshPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

const servers: ServerHandle[] = [];
let provider: Provider | undefined;
/** Reachable only once 127.0.0.2 is allowed: the servers' environment allows 127.0.0.1 alone. */
let guarded: ReturnType<typeof Bun.serve> | undefined;
/** Counts calls per path; the first call of `/slow/{ms}/…` answers after that many milliseconds. */
let sink: ReturnType<typeof Bun.serve> | undefined;
const hits = new Map<string, number>();

afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  provider?.stop();
  guarded?.stop(true);
  sink?.stop(true);
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(server: ServerHandle, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await server.fetch(path, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const manual = (first: Record<string, unknown>) => ({
  schemaVersion: 2,
  trigger: { name: "trigger", type: "manual", config: {}, nextAction: first },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});

const httpGet = (url: string) => ({
  name: "call",
  type: "PIECE",
  pieceId: "http",
  actionId: "send_request",
  config: { method: "GET", url, timeout_ms: 15_000 },
});

describe.skipIf(!postgresBinaries())("state shared by two instances on one PostgreSQL database", () => {
  let a: ServerHandle;
  let b: ServerHandle;
  let env: Record<string, string>;

  /** Another instance on the same database, with the first one's encryption key. */
  const startInstance = async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-shared-"));
    copyFileSync(join(a.dataDir, "encryption.key"), join(dir, "encryption.key"));
    const server = await startServer({ env, dataDir: dir });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    guarded = Bun.serve({ port: 0, hostname: "127.0.0.2", fetch: () => Response.json({ reached: true }) });
    sink = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        const path = new URL(request.url).pathname;
        hits.set(path, (hits.get(path) ?? 0) + 1);
        const slow = /^\/slow\/(\d+)\//.exec(path);
        if (slow && hits.get(path) === 1) await Bun.sleep(Number(slow[1]));
        return Response.json({ path });
      },
    });
    // Slow enough that runs on both instances ask while the first refresh is in flight.
    provider = await startProvider({ expiresIn: 3600, tokenDelayMs: 300 });
    const { url } = await freshPostgresDatabase();
    env = { WEFT_DATABASE_URL: url, WEFT_HEARTBEAT_SECONDS: "1", WEFT_LEASE_SECONDS: "3", WEFT_ALLOW_CIDRS: "127.0.0.1/32", WEFT_LOG_LEVEL: "warn" };
    a = await startServer({ env });
    servers.push(a);
    b = await startInstance();
  }, 60_000);

  test("a range allowed through A is in force for runs on B within ~2 s, and so is its removal", async () => {
    const workflow = await call(a, "POST", "/api/workflows", { name: "reaches 127.0.0.2", definition: manual(httpGet(`http://127.0.0.2:${guarded!.port}/`)) });
    expect(workflow.status).toBe(201);
    const runOnB = async () => (await call(b, "POST", `/api/workflows/${workflow.body.data.id}/run?wait=10`, {})).body.data;
    const refused = await runOnB();
    expect(refused.status).toBe("failed");
    expect(JSON.stringify(refused.steps)).toContain("127.0.0.2");

    /** Runs on B until the run's outcome is `wanted`; the time that took. */
    const untilOnB = async (wanted: string) => {
      const started = Date.now();
      for (;;) {
        const run = await runOnB();
        if (run.status === wanted) return Date.now() - started;
        expect(Date.now() - started).toBeLessThan(5_000);
        await Bun.sleep(50);
      }
    };
    const put = await call(a, "PUT", "/api/settings/network", { allowedCidrs: ["127.0.0.2/32"] });
    expect(put.status).toBe(200);
    expect(await untilOnB("completed")).toBeLessThan(2_000);
    expect((await call(b, "GET", "/api/settings/network")).body.data.effective).toEqual(["127.0.0.1/32", "127.0.0.2/32"]);

    expect((await call(a, "PUT", "/api/settings/network", { allowedCidrs: [] })).status).toBe(200);
    expect(await untilOnB("failed")).toBeLessThan(2_000);
  }, 30_000);

  /** Calls `check` every 20 ms until it answers true; the time that took (failing past 5 s). */
  const within = async (check: () => Promise<boolean>) => {
    const started = Date.now();
    while (!(await check())) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await Bun.sleep(20);
    }
    return Date.now() - started;
  };

  test("an API token revoked through A stops working on B within 2 s", async () => {
    const minted = await call(a, "POST", "/api/tokens", { name: "revoked soon", scopes: ["run:read"] });
    expect(minted.status).toBe(201);
    const onB = async () => (await b.fetch("/api/auth/me", { token: minted.body.data.token })).status;
    // B has authenticated it (and keeps it in memory) before the revocation.
    expect(await onB()).toBe(200);
    expect((await call(a, "DELETE", `/api/tokens/${minted.body.data.id}`)).status).toBe(200);
    expect(await within(async () => (await onB()) === 401)).toBeLessThan(2_000);
  }, 30_000);

  test("a webhook workflow unpublished, republished or rotated through A: B's public URL follows within 2 s", async () => {
    const made = await call(a, "POST", "/api/workflows", {
      name: "webhook followed by B",
      definition: { schemaVersion: 2, trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} } },
    });
    expect((await call(a, "POST", `/api/workflows/${made.body.data.id}/publish`)).status).toBe(200);
    const hook = async (token: string) =>
      (await b.fetch(`/webhook/${token}`, { method: "POST", token: null, body: "{}", headers: { "content-type": "application/json" } })).status;
    const token = made.body.data.webhookToken as string;
    // B has answered the URL (and keeps what it found in memory) before each change.
    expect(await hook(token)).toBe(202);
    expect((await call(a, "POST", `/api/workflows/${made.body.data.id}/unpublish`)).status).toBe(200);
    expect(await within(async () => (await hook(token)) === 404)).toBeLessThan(2_000);
    expect((await call(a, "POST", `/api/workflows/${made.body.data.id}/publish`)).status).toBe(200);
    expect(await within(async () => (await hook(token)) === 202)).toBeLessThan(2_000);
    const rotated = await call(a, "POST", `/api/workflows/${made.body.data.id}/webhook/rotate`);
    expect(rotated.status).toBe(200);
    expect(await within(async () => (await hook(token)) === 404)).toBeLessThan(2_000);
    expect(await hook(rotated.body.data.webhookToken)).toBe(202);
  }, 30_000);

  test("runs held on B by maintenance mode are released within 2 s of a publish through A without it", async () => {
    const definition = (maintenanceMode: boolean) => ({
      schemaVersion: 2,
      trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} },
      settings: { maintenanceMode },
    });
    const made = await call(a, "POST", "/api/workflows", { name: "in maintenance", definition: definition(true) });
    expect((await call(a, "POST", `/api/workflows/${made.body.data.id}/publish`)).status).toBe(200);
    const accepted = await b.fetch(`/webhook/${made.body.data.webhookToken}`, {
      method: "POST",
      token: null,
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(accepted.status).toBe(202);
    const runId = ((await accepted.json()) as any).data.runId as string;
    const status = async () => (await call(b, "GET", `/api/runs/${runId}`)).body.data.status as string;
    await Bun.sleep(300);
    expect(await status()).toBe("pending");

    expect((await call(a, "PUT", `/api/workflows/${made.body.data.id}`, { definition: definition(false) })).status).toBe(200);
    expect((await call(a, "POST", `/api/workflows/${made.body.data.id}/publish`)).status).toBe(200);
    expect(await within(async () => (await status()) === "completed")).toBeLessThan(2_000);
  }, 30_000);

  test("runs on A and B needing the same expiring OAuth2 token at once: one refresh, every run uses the new token", async () => {
    const p = provider!;
    const made = await call(a, "POST", "/api/connections", {
      pieceId: "oauth2",
      name: "shared across instances",
      clientId: p.clientId,
      clientSecret: p.clientSecret,
      config: { authUrl: p.authUrl, tokenUrl: p.tokenUrl, scope: "read write" },
    });
    expect(made.status).toBe(201);
    const connectionId = made.body.data.id as string;
    // Authorized through A with a token living 60 s: inside the 120 s margin, so the next use refreshes it.
    p.settings.expiresIn = 60;
    const start = await call(a, "POST", `/api/connections/${connectionId}/oauth2/start`);
    const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
    expect((await fetch(hop.headers.get("location")!)).status).toBe(200);
    expect((await call(b, "GET", `/api/connections/${connectionId}`)).body.data.status).toBe("active");
    const step = { name: "whoami", type: "PIECE", pieceId: "oauth2", actionId: "request", connectionId, config: { method: "GET", url: `${p.base}/me` } };
    const workflow = await call(a, "POST", "/api/workflows", { name: "calls the API", definition: manual(step) });
    expect((await call(a, "POST", `/api/workflows/${workflow.body.data.id}/publish`)).status).toBe(200);

    p.settings.expiresIn = 3600;
    const refreshes = p.counts.refresh;
    const seen = p.apiAuthorizations.length;
    const path = `/api/workflows/${workflow.body.data.id}/run?environment=production&wait=10`;
    const runs = await Promise.all([a, b, a, b, a, b].map((server) => call(server, "POST", path, {})));
    expect(runs.map((run) => run.body.data.status)).toEqual(Array(6).fill("completed"));
    expect(p.counts.refresh).toBe(refreshes + 1);
    const fresh = p.issued.filter((value) => value.startsWith("at_")).at(-1)!;
    expect(p.apiAuthorizations.slice(seen)).toEqual(Array(6).fill(`Bearer ${fresh}`));
    const stored = (await call(b, "GET", `/api/connections/${connectionId}`)).body.data;
    expect(Date.parse(stored.tokenExpiresAt) - Date.now()).toBeGreaterThan(3_500_000);
  }, 30_000);

  test("an Idempotency-Key answered on A replays on B: one workflow, the same answer", async () => {
    const key = { "idempotency-key": "create-once" };
    const body = { name: "created once", definition: manual(httpGet("http://127.0.0.1:9/")) };
    const first = await call(a, "POST", "/api/workflows", body, key);
    expect(first.status).toBe(201);
    const again = await call(b, "POST", "/api/workflows", body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const listed = (await call(b, "GET", "/api/workflows?limit=100")).body.data.filter((w: { name: string }) => w.name === "created once");
    expect(listed).toHaveLength(1);
  }, 30_000);

  test("one key sent to A and B at once executes once: the other answers 409, then replays", async () => {
    const workflow = await call(a, "POST", "/api/workflows", {
      name: "slow once",
      definition: manual(httpGet(`http://127.0.0.1:${sink!.port}/slow/1500/once`)),
    });
    const path = `/api/workflows/${workflow.body.data.id}/run?wait=10`;
    const key = { "idempotency-key": "run-once" };
    const answers = await Promise.all([call(a, "POST", path, {}, key), call(b, "POST", path, {}, key)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const done = answers.find((answer) => answer.status === 200)!;
    expect(done.body.data.status).toBe("completed");
    expect(answers.find((answer) => answer.status === 409)!.body.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    expect(hits.get("/slow/1500/once")).toBe(1);
    for (const server of [a, b]) {
      const replay = await call(server, "POST", path, {}, key);
      expect(replay.headers.get("idempotency-replayed")).toBe("true");
      expect(replay.body.data.id).toBe(done.body.data.id);
    }
    expect(hits.get("/slow/1500/once")).toBe(1);
  }, 30_000);

  test("an instance starting does not release a live instance's claim; a SIGKILLed instance's claim is released by a survivor", async () => {
    const slowRun = async (ms: number, tag: string) => {
      const workflow = await call(a, "POST", "/api/workflows", {
        name: `slow ${tag}`,
        definition: manual(httpGet(`http://127.0.0.1:${sink!.port}/slow/${ms}/${tag}`)),
      });
      return `/api/workflows/${workflow.body.data.id}/run?wait=20`;
    };
    // A executes a keyed request while C starts: C must leave A's claim alone, so the key is still in progress.
    const onA = await slowRun(6_000, "live");
    const held = call(a, "POST", onA, {}, { "idempotency-key": "held-by-a" });
    while (!hits.get("/slow/6000/live")) await Bun.sleep(25);
    const c = await startInstance();
    const meanwhile = await call(c, "POST", onA, {}, { "idempotency-key": "held-by-a" });
    expect(meanwhile.status).toBe(409);
    expect((await held).status).toBe(200);
    expect(hits.get("/slow/6000/live")).toBe(1);

    // C claims a key and dies mid-request: a survivor releases the claim, so a retry executes instead of 409 for a day.
    const onC = await slowRun(20_000, "dies");
    const lost = call(c, "POST", onC, {}, { "idempotency-key": "held-by-c" }).catch(() => null);
    while (!hits.get("/slow/20000/dies")) await Bun.sleep(25);
    await c.stop("SIGKILL");
    await lost;
    const killed = Date.now();
    let retried: Answer;
    for (;;) {
      retried = await call(b, "POST", onC, {}, { "idempotency-key": "held-by-c" });
      if (retried.status !== 409) break;
      expect(Date.now() - killed).toBeLessThan(10_000);
    }
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotency-replayed")).toBeNull();
    expect(retried.body.data.status).toBe("completed");
  }, 30_000);
});

describe.skipIf(!postgresBinaries())("Settings → Network on two connections to one PostgreSQL database, in one process", () => {
  const operator: Principal = { kind: "token", credentialId: "none", orgId: "none", workspaceId: "none", userId: null, scopes: new Set() };
  const settingsOn = (db: Db, recheckMs: number) => {
    const applied: string[][] = [];
    const changes = new ClusterChanges({ db, log: createLogger("silent"), recheckMs });
    const settings = new NetworkSettings({
      storage: storageOf(db),
      log: createLogger("silent"),
      identity: new Identity(storageOf(db)),
      environmentCidrs: ["192.168.1.0/24"],
      apply: (cidrs) => applied.push([...cidrs]),
      changes,
    });
    return { settings, changes, applied };
  };
  const until = async (check: () => boolean, withinMs: number) => {
    const deadline = Date.now() + withinMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms`);
      await Bun.sleep(10);
    }
  };

  test("a change is heard on the bus at once; one whose notification was lost is read on the timer", async () => {
    const { url, db } = await freshPostgresDatabase();
    const a = settingsOn(db, 60_000);
    const b = settingsOn(connectPostgresDatabase(url), 60_000);
    const c = settingsOn(connectPostgresDatabase(url), 200);
    await Promise.all([a, b, c].map(({ settings }) => settings.loaded));
    expect(b.applied).toEqual([["192.168.1.0/24"]]);
    await a.changes.start();
    await b.changes.start();
    try {
      // Heard on the bus: B's timer would take a minute.
      await a.settings.replace(operator, ["10.20.0.0/16"]);
      await until(() => b.applied.length === 2, 2_000);
      expect(b.applied[1]).toEqual(["192.168.1.0/24", "10.20.0.0/16"]);
      // The sender applied it once, not again when its own notification came back.
      await Bun.sleep(100);
      expect(a.applied).toEqual([["192.168.1.0/24"], ["192.168.1.0/24", "10.20.0.0/16"]]);

      // C was made before the change and listens only after it was announced: it reads it once it listens.
      expect(c.applied).toEqual([["192.168.1.0/24"]]);
      await c.changes.start();
      expect(c.applied).toEqual([["192.168.1.0/24"], ["192.168.1.0/24", "10.20.0.0/16"]]);
      await Bun.sleep(300);
      expect(c.applied).toHaveLength(2); // re-read, unchanged: not applied again
      // A change whose notification never came (written without one): C's timer reads it; B's, a minute, not yet.
      await storageOf(db).networkRanges.delete("10.20.0.0/16");
      await until(() => c.applied.length === 3, 2_000);
      expect(c.applied[2]).toEqual(["192.168.1.0/24"]);
      expect(b.applied).toHaveLength(2);
    } finally {
      for (const { changes } of [a, b, c]) await changes.stop();
    }
  });
});
