/**
 * Triggers on a cluster: real `weft serve` processes on one PostgreSQL database.
 * - A schedule every second, published on three instances for ~10 s, fires exactly one run per instant: no
 *   instant twice, none missing between the first and the last (the scheduler's compare-and-set).
 * - A polling trigger on two instances is polled by one only (the holder of its lease); once that one is
 *   SIGKILLed, the other takes the polls over within the lease and a few seconds.
 * - A subscription is held open by one instance; unpublished through the other one it closes; republished
 *   there, it is still open once, and moves to the survivor when its holder is SIGKILLed.
 * Skipped without PostgreSQL (one printed line).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

/** Test-only: a poll that names the process polling, so the sink can tell the instances apart. */
const PID_POLL = `export default (sdk) => sdk.definePiece({
  id: "pid_poll", name: "Pid poll", version: "1.0.0", description: "test-only: polls a URL with the pid of the polling process",
  actions: [],
  triggers: [sdk.trigger({ id: "items", name: "Items", description: "GETs config.url?pid=<pid>", type: "poll",
    props: { url: sdk.Property.shortText({ displayName: "URL", required: true }) },
    poll: async (ctx) => (await ctx.fetch(ctx.config.url + "?pid=" + process.pid)).json() })],
});
`;

/** Test-only: a subscription that, while open, calls config.url?pid=<pid> four times a second. */
const PID_SUBSCRIPTION = `export default (sdk) => sdk.definePiece({
  id: "pid_sub", name: "Pid subscription", version: "1.0.0", description: "test-only: pings a URL with its pid while open",
  actions: [],
  triggers: [sdk.trigger({ id: "held", name: "Held", description: "pings config.url?pid=<pid> while open", type: "subscription",
    props: { url: sdk.Property.shortText({ displayName: "URL", required: true }) },
    subscribe: async (ctx) => {
      const ping = () => ctx.fetch(ctx.config.url + "?pid=" + process.pid).catch(() => undefined);
      await ping();
      const timer = setInterval(ping, 250);
      return { close: () => clearInterval(timer) };
    } })],
});
`;

const LEASE_SECONDS = 3;

/** A loopback server that records which process called it, and when. */
function pidSink() {
  const calls: Array<{ pid: number; at: number }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      calls.push({ pid: Number(new URL(request.url).searchParams.get("pid")), at: Date.now() });
      return Response.json([{ id: 1 }]);
    },
  });
  return { calls, url: `http://127.0.0.1:${server.port}/feed`, since: (at: number) => calls.filter((call) => call.at > at), stop: () => server.stop(true) };
}

const pidsOf = (calls: Array<{ pid: number }>) => [...new Set(calls.map((call) => call.pid))].sort();

function clusterEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WEFT_DATABASE_URL: url,
    // One key for the whole cluster (as copying the first instance's encryption.key would give).
    WEFT_ENCRYPTION_KEY: "cluster-test-key-".repeat(3),
    WEFT_HEARTBEAT_SECONDS: "1",
    WEFT_LEASE_SECONDS: String(LEASE_SECONDS),
    WEFT_LOG_LEVEL: "warn",
    WEFT_RATE_LIMIT: "0",
    WEFT_FLOOD_LIMIT: "0",
    WEFT_WORKERS: "1",
    ...extra,
  };
}

/** The first instance alone (it bootstraps the token), then the others side by side. */
async function cluster(size: number, env: Record<string, string>, servers: ServerHandle[]): Promise<ServerHandle[]> {
  const first = await startServer({ env });
  servers.push(first);
  const others = await Promise.all(Array.from({ length: size - 1 }, () => startServer({ env })));
  servers.push(...others);
  return [first, ...others];
}

async function api(server: ServerHandle, method: string, path: string, body?: unknown): Promise<any> {
  const res = await server.fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function publish(server: ServerHandle, trigger: Record<string, unknown>): Promise<string> {
  const definition = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      ...trigger,
      nextAction: { name: "note", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { ok: true } } },
    },
    settings: {},
    variables: {},
    annotations: null,
    pinnedData: {},
  };
  const workflow = (await api(server, "POST", "/api/workflows", { name: "cluster", definition })).data;
  await api(server, "POST", `/api/workflows/${workflow.id}/publish`);
  return workflow.id;
}

describe.skipIf(!postgresBinaries())("triggers on a cluster of instances sharing one PostgreSQL database", () => {
  const servers: ServerHandle[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  });

  test("a schedule every second, live on three instances for ~10 s, fires exactly one run per instant", async () => {
    const { url } = await networkPostgresDatabase();
    const [a, b, c] = await cluster(3, clusterEnv(url, { WEFT_SCHEDULE_MIN_INTERVAL: "1" }), servers);
    // Every second (six fields, seconds first; the built-in "every" stops at 10 s).
    const workflowId = await publish(a!, { type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: "* * * * * *", timezone: "UTC" } });
    await Bun.sleep(10_000);
    // Unpublished through another instance: every instance stops firing it.
    await api(b!, "POST", `/api/workflows/${workflowId}/unpublish`);
    await Bun.sleep(1_500);

    const runs: any[] = [];
    for (let page = 1; ; page++) {
      const body = await api(c!, "GET", `/api/runs?workflowId=${workflowId}&environment=all&limit=100&page=${page}`);
      runs.push(...body.data);
      if (page >= body.pagination.totalPages) break;
    }
    const perInstant = new Map<string, number>();
    for (const run of runs) {
      expect(run.triggerType).toBe("cron");
      perInstant.set(run.triggerData.scheduledAt, (perInstant.get(run.triggerData.scheduledAt) ?? 0) + 1);
    }
    expect([...perInstant.entries()].filter(([, n]) => n > 1)).toEqual([]);
    const instants = [...perInstant.keys()].map((iso) => Date.parse(iso)).sort((x, y) => x - y);
    expect(instants.length).toBeGreaterThanOrEqual(8);
    const gaps = instants.slice(1).map((instant, i) => instant - instants[i]!);
    expect(gaps.filter((gap) => gap !== 1000)).toEqual([]);
  }, 40_000);

  test("a poll is polled by one instance only; when it is SIGKILLed the other takes over within the lease", async () => {
    const sink = pidSink();
    const polls = sink.calls;
    try {
      const piecesDir = mkdtempSync(join(tmpdir(), "weft-pid-poll-"));
      writeFileSync(join(piecesDir, "pid-poll.js"), PID_POLL);
      const { url } = await networkPostgresDatabase();
      const env = clusterEnv(url, { WEFT_PIECES_DIR: piecesDir, WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_POLL_MIN_INTERVAL: "1" });
      const [a, b] = await cluster(2, env, servers);
      const pids = new Set([a!.proc.pid, b!.proc.pid]);
      await publish(b!, { type: "poll", pieceId: "pid_poll", actionId: "items", config: { url: sink.url, poll_interval_seconds: 1 } });

      await Bun.sleep(5_000);
      const before = polls.filter((poll) => pids.has(poll.pid));
      expect(before.length).toBeGreaterThanOrEqual(3);
      const owners = [...new Set(before.map((poll) => poll.pid))];
      expect(owners).toHaveLength(1);
      const [owner, survivor] = owners[0] === a!.proc.pid ? [a!, b!] : [b!, a!];

      await owner.stop("SIGKILL");
      const killedAt = Date.now();
      const deadline = killedAt + (LEASE_SECONDS + 5) * 1000;
      while (Date.now() < deadline && !polls.some((poll) => poll.pid === survivor.proc.pid)) await Bun.sleep(100);
      const firstBySurvivor = polls.find((poll) => poll.pid === survivor.proc.pid);
      expect(firstBySurvivor).toBeDefined();
      expect(firstBySurvivor!.at - killedAt).toBeLessThan((LEASE_SECONDS + 3) * 1000);
      // The survivor polls on, about once a second, and nobody else does.
      await Bun.sleep(3_000);
      const after = polls.filter((poll) => poll.at > killedAt);
      expect(after.filter((poll) => poll.pid !== survivor.proc.pid)).toEqual([]);
      expect(after.length).toBeGreaterThanOrEqual(3);
    } finally {
      sink.stop();
    }
  }, 40_000);

  test("a subscription is open on one instance; unpublish anywhere closes it; it moves to the survivor of a SIGKILL", async () => {
    const sink = pidSink();
    try {
      const piecesDir = mkdtempSync(join(tmpdir(), "weft-pid-sub-"));
      writeFileSync(join(piecesDir, "pid-sub.js"), PID_SUBSCRIPTION);
      const { url } = await networkPostgresDatabase();
      const [a, b] = await cluster(2, clusterEnv(url, { WEFT_PIECES_DIR: piecesDir, WEFT_ALLOW_CIDRS: "127.0.0.0/8" }), servers);
      const workflowId = await publish(a!, { type: "subscription", pieceId: "pid_sub", actionId: "held", config: { url: sink.url } });

      // B learns of it from its lease at B's next renewal, and stays on standby.
      let mark = Date.now();
      await Bun.sleep(2_500);
      expect(pidsOf(sink.since(mark))).toEqual([a!.proc.pid]);

      // Unpublished through B: A closes it at its next renewal.
      await api(b!, "POST", `/api/workflows/${workflowId}/unpublish`);
      await Bun.sleep(LEASE_SECONDS * 1000);
      mark = Date.now();
      await Bun.sleep(1_000);
      expect(sink.since(mark)).toEqual([]);

      // Published again through B: open on one instance.
      await api(b!, "POST", `/api/workflows/${workflowId}/publish`);
      await Bun.sleep(2_000);
      mark = Date.now();
      await Bun.sleep(1_500);
      const holders = pidsOf(sink.since(mark));
      expect(holders).toHaveLength(1);
      const [holder, survivor] = holders[0] === a!.proc.pid ? [a!, b!] : [b!, a!];

      await holder.stop("SIGKILL");
      const killedAt = Date.now();
      const deadline = killedAt + (LEASE_SECONDS + 5) * 1000;
      while (Date.now() < deadline && !sink.since(killedAt).some((call) => call.pid === survivor.proc.pid)) await Bun.sleep(100);
      const first = sink.since(killedAt).find((call) => call.pid === survivor.proc.pid);
      expect(first).toBeDefined();
      expect(first!.at - killedAt).toBeLessThan((LEASE_SECONDS + 3) * 1000);
      // The piece reached the sink while it was opening the subscription: the survivor reports it open once
      // that returned (within a few seconds).
      const statusOf = async () => (await api(survivor, "GET", `/api/workflows/${workflowId}/trigger`)).data.subscription;
      let status = await statusOf();
      for (const until = Date.now() + 3_000; !status.open && Date.now() < until; status = await statusOf()) await Bun.sleep(100);
      const survivorId = (await api(survivor, "GET", "/api/fleet")).data.find((instance: any) => instance.self).id;
      expect(status).toMatchObject({ open: true, failures: 0, owner: survivorId });
    } finally {
      sink.stop();
    }
  }, 40_000);
});
