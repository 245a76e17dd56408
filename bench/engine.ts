/**
 * Engine throughput (issue 5 item 6): a published workflow (API trigger → data.set_fields → router →
 * text.template) is run by 50 concurrent HTTP connections (wrk when installed, else N runs from a Bun
 * client) against a real `weft serve` process (every run and step persisted, WEFT_DB_SYNCHRONOUS=FULL),
 * each call `POST …/run?wait=30` answering with the finished run. Prints completed runs/s, start-to-finish
 * latency p50/p99 (the run's own durationMs, from its start to its committed finish, read from the database
 * afterwards, and the client's round trip), server CPU per run, idle and peak RSS of the server, the load
 * average (other work on the machine skews every figure), and the cost of the worker hop per step
 * (in-process, a non-pure echo step vs a pure one).
 *
 * With WEFT_BENCH_STORAGE=postgres the server stores in a new database on a throwaway PostgreSQL server of its
 * own (fsync on, on the same cores; ./history.ts starts it), as with WEFT_DATABASE_URL set.
 *
 *   bun bench/engine.ts [--seconds 10] [--clients 50] [--workers 2] [--sync NORMAL|FULL] [--runs 20000 (no wrk)] [--writer auto|thread|inline]
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Db } from "../src/store/db";
import { openStoreAt } from "../src/store/open";
import { runLayout } from "../src/store/sqlite/run-names";
import { RunStore } from "../src/store/sqlite/run-store";
import { startServer } from "../test/support/server";
import { IDLE_SETTLE_MS, load, reportGoal } from "./_support";
import { exitUnlessPostgresInstalled, freshDatabase, STORAGE, stopPostgres } from "./history";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    runs: { type: "string", default: "20000" },
    seconds: { type: "string", default: "10" },
    clients: { type: "string", default: "50" },
    workers: { type: "string", default: String(cpus().length) },
    sync: { type: "string", default: "FULL" },
    hop: { type: "string", default: "2000" },
    /** Extra flags for the server's bun, e.g. "--smol" or "--cpu-prof-md --cpu-prof-dir=/tmp/prof". */
    "server-flags": { type: "string", default: "" },
    /** WEFT_RUN_WRITER: auto (the product's default), thread or inline. */
    writer: { type: "string", default: "auto" },
  },
});
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);

/** User+system CPU of a process, ms. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

const definition = {
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "manual",
    config: {},
    nextAction: {
      name: "shape",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { name: "{{trigger.body.name}}", n: "{{trigger.body.n}}" } },
      nextAction: {
        name: "route",
        type: "ROUTER",
        branches: [
          {
            name: "big",
            conditions: [[{ field: "{{shape.output.n}}", operator: "number_gt", value: 10 }]],
            firstAction: { name: "bigText", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "big {{shape.output.name}}" } },
          },
          {
            name: "small",
            conditions: [],
            firstAction: { name: "smallText", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "small {{shape.output.name}}" } },
          },
        ],
      },
    },
  },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
};

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function rssPeakMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function rssNowMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Said after each goal's figure on PostgreSQL (SQLite's keep the names they always had). */
const ON = STORAGE === "postgres" ? " (postgres)" : "";

async function throughput() {
  const flags = values["server-flags"]!.split(" ").filter(Boolean);
  const database = STORAGE === "postgres" ? await freshDatabase() : undefined;
  const server = await startServer({
    command: [process.execPath, ...flags, join(import.meta.dir, "../src/main.ts"), "serve"],
    env: {
      WEFT_WORKERS: values.workers!,
      WEFT_RATE_LIMIT: "0",
      WEFT_FLOOD_LIMIT: "0",
      WEFT_LOG_LEVEL: "warn",
      WEFT_DB_SYNCHRONOUS: values.sync!,
      WEFT_RUN_WRITER: values.writer!,
      ...(database ? { WEFT_DATABASE_URL: database.url } : {}),
    },
  });
  try {
    const json = async (res: Response) => (await res.json()) as any;
    const created = await json(
      await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "bench", definition }),
      }),
    );
    const id = created.data.id;
    const published = await server.fetch(`/api/workflows/${id}/publish`, { method: "POST" });
    if (!published.ok) throw new Error(`publish failed: ${await published.text()}`);
    const path = `/api/workflows/${id}/run?environment=production&wait=30`;
    const headers = { "content-type": "application/json", authorization: `Bearer ${server.token}` };
    const url = `${server.url}${path}`;
    // Idle: 2 s after the set-up's last request. Read at once it was that request's memory (81–84 MiB), which
    // the allocator hands back within a second or so (75–76 MiB once settled, 2026-11-26).
    await Bun.sleep(IDLE_SETTLE_MS);
    const idleRss = rssNowMb(server.proc.pid);

    const loadBefore = loadAverage();
    let seconds: number;
    let requests: number;
    let failed = 0;
    let roundTrip: { p50: number; p99: number };
    let warmRuns = 0;
    const cpuBefore = { ms: 0 };
    if (Bun.which("wrk")) {
      // Warm-up: JIT, statement caches.
      await load(url, { connections: CLIENTS, seconds: 2, method: "POST", headers, body: JSON.stringify({ name: "warm", n: 15 }) });
      warmRuns = (await json(await server.fetch(`/api/runs?workflowId=${id}&limit=1`))).pagination.total;
      cpuBefore.ms = cpuMs(server.proc.pid);
      const result = await load(url, { connections: CLIENTS, seconds: SECONDS, method: "POST", headers, body: JSON.stringify({ name: "Ada", n: 15 }) });
      seconds = SECONDS;
      requests = result.requests;
      failed = result.errors;
      roundTrip = { p50: result.p50Ms, p99: result.p99Ms };
    } else {
      for (let i = 0; i < 200; i++) await fetch(url, { method: "POST", headers, body: JSON.stringify({ name: `w${i}`, n: i }) });
      warmRuns = 200;
      cpuBefore.ms = cpuMs(server.proc.pid);
      const roundTrips: number[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next < RUNS) {
            const i = next++;
            const t0 = performance.now();
            const res = await fetch(url, { method: "POST", headers, body: JSON.stringify({ name: `c${i}`, n: i % 20 }) });
            const body = await json(res);
            roundTrips.push(performance.now() - t0);
            if (res.status !== 200 || body.data?.status !== "completed") failed++;
          }
        }),
      );
      seconds = (performance.now() - started) / 1000;
      requests = RUNS;
      roundTrips.sort((a, b) => a - b);
      roundTrip = { p50: percentile(roundTrips, 50), p99: percentile(roundTrips, 99) };
    }
    const cpu = cpuMs(server.proc.pid) - cpuBefore.ms;
    const peak = rssPeakMb(server.proc.pid);
    const loadAfter = loadAverage();

    // Every run and step persisted: count them through the API, then read every run's durationMs from the database.
    const list = await json(await server.fetch(`/api/runs?workflowId=${id}&limit=1`));
    const sample = await json(await server.fetch(`/api/runs/${list.data[0].id}`));
    await server.stop();
    const db: Db = database ? openStoreAt(database.url, "FULL") : (new Database(join(server.dataDir, "weft.db"), { readonly: true }) as Db);
    // Steps as rows or packed into their run's row (a run inserted finished): RunStore reads both.
    const store = new RunStore(db);
    // The searched columns as stored (SQLite keeps keys and codes: src/store/run-layout.ts).
    const layout = runLayout(db);
    const rows = (
      db.query(`SELECT r.id, r.duration_ms AS d, r.status FROM runs r WHERE r.workflow_id = ? ORDER BY r.id`).all(layout.find(id) ?? null) as Array<{
        id: string;
        d: number;
        status: string;
      }>
    ).map((r) => ({ id: r.id, d: r.d, s: layout.decode(r).status, steps: store.steps(r.id).length }));
    db.close();
    const measured = rows.slice(warmRuns);
    const completed = measured.filter((r) => r.s === "completed");
    const durations = completed.map((r) => r.d).sort((a, b) => a - b);
    const incomplete = measured.filter((r) => r.steps !== 3).length;
    console.log(
      `engine throughput: ${CLIENTS} connections${Bun.which("wrk") ? ` (wrk, ${SECONDS} s)` : ` (bun fetch, ${RUNS} runs)`}, ${values.workers} workers, ${database ? "PostgreSQL (fsync on)" : `synchronous=${values.sync}, writer=${values.writer}`}, ${cpus().length} cores; load average ${loadBefore} → ${loadAfter}`,
    );
    console.log(`  completed runs/s          ${(completed.length / seconds).toFixed(0)}  (${requests} answered, ${failed} not completed)`);
    console.log(
      `  run durationMs p50/p99    ${percentile(durations, 50).toFixed(1)} / ${percentile(durations, 99).toFixed(1)} ms  (start → end of the last step, ${durations.length} runs; the durable commit follows)`,
    );
    console.log(
      `  start-to-finish p50/p99   ${roundTrip.p50.toFixed(1)} / ${roundTrip.p99.toFixed(1)} ms  (client round trip: POST …/run?wait=30 → the finished run, answered after its commit reached the disk)`,
    );
    const cpuPerRunUs = (cpu * 1000) / Math.max(1, completed.length);
    console.log(`  server CPU per run        ${cpuPerRunUs.toFixed(0)} µs (${(cpu / 10 / seconds).toFixed(0)}% of one core)`);
    console.log(`  RSS idle / peak           ${idleRss.toFixed(0)} / ${peak.toFixed(0)} MB`);
    const runsPerSecond = completed.length / seconds;
    reportGoal({
      figure: `engine: three-step runs/s, ${CLIENTS} connections, ${database ? "postgres" : `synchronous=${values.sync}`}`,
      value: `${runsPerSecond.toFixed(0)} (${cpuPerRunUs.toFixed(0)} µs of server CPU per run)`,
      goal: "≥ 12,000",
      met: runsPerSecond >= 12_000,
    });
    reportGoal({
      figure: `engine: RSS idle / peak${ON}`,
      value: `${idleRss.toFixed(0)} / ${peak.toFixed(0)} MiB`,
      goal: "< 80 / < 150 MiB",
      met: idleRss < 80 && peak < 150,
    });
    console.log(
      `  persisted                 ${list.pagination.total} runs in the list; ${incomplete} of the measured runs lack steps; a run has ${sample.data.steps.length} steps (stepTotal ${sample.data.stepTotal})`,
    );
  } finally {
    await server.stop();
    await database?.drop();
    await stopPostgres();
  }
}

/** The worker hop: the same trivial step declared `read` (runs on a worker) and `pure` (runs on the main thread). */
async function workerHop() {
  const dir = mkdtempSync(join(tmpdir(), "weft-bench-pieces-"));
  mkdirSync(dir, { recursive: true });
  const piece = (
    id: string,
    sideEffects: string,
  ) => `export default (sdk) => sdk.definePiece({ id: "${id}", name: "${id}", version: "1.0.0", description: "bench",
  actions: [sdk.action({ id: "echo", name: "Echo", description: "echo", sideEffects: "${sideEffects}", props: {}, run: (ctx) => ({ v: ctx.config.v }) })] });\n`;
  writeFileSync(join(dir, "bench-hop.ts"), piece("bench_hop", "read"));
  writeFileSync(join(dir, "bench-pure.ts"), piece("bench_pure", "pure"));
  const { testApp } = await import("../test/support/app");
  const { loadRegistry } = await import("../src/pieces-runtime/registry");
  const t = await testApp({ WEFT_PIECES_DIR: dir, WEFT_WORKERS: "1" });
  // The in-process app was built with the built-ins only: give it the same pieces the workers load.
  for (const p of (await loadRegistry({ piecesDir: dir })).list()) t.deps.pieces.register(p);
  const STEPS = 20;
  const chain = (pieceId: string) => {
    let node: any = undefined;
    for (let i = STEPS; i >= 1; i--) node = { name: `s${i}`, type: "PIECE", pieceId, actionId: "echo", config: { v: i }, nextAction: node };
    return { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {}, nextAction: node } };
  };
  const measure = async (pieceId: string) => {
    const created = await t.req("POST", "/api/workflows", { body: { name: pieceId, definition: chain(pieceId) } });
    const id = created.body.data.id;
    await t.req("POST", `/api/workflows/${id}/run?environment=test&wait=30`, { body: {} });
    const runs = Number(values.hop) / STEPS;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: runs }, () =>
        t.deps.engine
          .startRun({ workspaceId: created.body.data.workspaceId, workflowId: id, environment: "test", triggerType: "api", input: {} })
          .then((r) => t.deps.engine.waitFor(r.id, 60_000)),
      ),
    );
    const serial = performance.now();
    const one = await t.deps.engine.startRun({
      workspaceId: created.body.data.workspaceId,
      workflowId: id,
      environment: "test",
      triggerType: "api",
      input: {},
    });
    const done = await t.deps.engine.waitFor(one.id, 60_000);
    const latency = performance.now() - serial;
    return { throughputUs: ((serial - t0) * 1000) / (runs * STEPS), latencyUs: (latency * 1000) / STEPS, status: done?.status };
  };
  const pure = await measure("bench_pure");
  const hop = await measure("bench_hop");
  console.log(`worker hop per step (${STEPS}-step chains, ${values.hop} steps):`);
  console.log(`  pure step on the main thread   ${pure.latencyUs.toFixed(0)} µs latency, ${pure.throughputUs.toFixed(1)} µs/step under load`);
  console.log(`  same step on a worker thread   ${hop.latencyUs.toFixed(0)} µs latency, ${hop.throughputUs.toFixed(1)} µs/step under load`);
  console.log(
    `  cost of the hop                ${(hop.latencyUs - pure.latencyUs).toFixed(0)} µs latency, ${(hop.throughputUs - pure.throughputUs).toFixed(1)} µs/step under load (includes the running row)`,
  );
  await t.deps.engine.stop();
}

exitUnlessPostgresInstalled("engine.ts");
await throughput();
// The worker hop is measured in-process on an in-memory store: the same on either storage.
if (STORAGE !== "postgres") await workerHop();
process.exit(0);
