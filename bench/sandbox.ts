/**
 * The `code` piece's sandbox (issue 6): the overhead of one `return input.a + 1` call, and what one
 * run_code step costs the engine benchmark's workflow.
 *
 *   bun bench/sandbox.ts [--calls 20000] [--runs 5000] [--clients 64] [--workers 2]
 *
 * 1. Calls in this process: p50/p99 latency of a call made alone, and µs per call when many are in
 *    flight — inline (QuickJS in the calling thread; engine workers) and through a sandbox process
 *    (the hard backstop; what a step on the server's main thread uses).
 *    Then throughput and p99 at concurrency 1, 10 and 50 for both isolation modes (each sandbox process
 *    runs one call at a time; WEFT_SANDBOX_PROCESSES of them, two per core by default, 4 to 16), and
 *    the same for CPU-bound code (~25 ms a call).
 * 2. Code steps on a real server at concurrency 1, 10 and 50 (a code step on the server's thread always
 *    uses process isolation): runs/s and p99 of POST /run?wait.
 * 3. Issue 21's restart by hand: 20 webhook runs (set_fields → a code step busy-waiting 1.5 s → a 3 s
 *    delay → set_fields), the server SIGKILLed 1 s in and restarted on its data directory: runs still
 *    `running` 15 s after the restart and when the last one ends; GET /healthz p99 while the sandbox
 *    processes busy-loop; the server's RSS and its sandbox processes once idle (--idle-wait seconds later).
 * 4. The engine benchmark's workflow (manual → data.set_fields → router → text.template) against a
 *    real `weft serve`, without and with a run_code step after set_fields, and with a pure data step
 *    in its place (the cost of any extra step): completed runs/s of each.
 */
import { BURST_DEFINITION } from "../test/support/burst-workflow";
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { configureSandbox, runUserCode, sandboxSettings, stopSandboxProcesses, type SandboxIsolation } from "../src/sandbox";
import { startServer, type ServerHandle } from "../test/support/server";
import { rssMiB } from "./_support";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    calls: { type: "string", default: "20000" },
    runs: { type: "string", default: "5000" },
    clients: { type: "string", default: "64" },
    workers: { type: "string", default: String(cpus().length) },
    "idle-wait": { type: "string", default: "35" },
  },
});
const CALLS = Number(values.calls);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function calls(isolation: SandboxIsolation) {
  const call = (a: number) => runUserCode({ code: "return input.a + 1", input: { a }, isolation });
  for (let i = 0; i < 2_000; i++) await call(i); // JIT and QuickJS warm-up (and the sandbox process start)
  const latencies: number[] = [];
  const n = isolation === "inline" ? CALLS : Math.min(CALLS, 5_000);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const result = await call(i);
    latencies.push(performance.now() - t0);
    if (!result.ok || result.value !== i + 1) throw new Error(`unexpected result ${JSON.stringify(result)}`);
  }
  latencies.sort((a, b) => a - b);
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: n }, (_, i) => call(i)));
  const failed = results.find((result) => !result.ok);
  if (failed) throw new Error(`a call in flight failed: ${JSON.stringify(failed)}`);
  const perCall = ((performance.now() - t0) * 1000) / n;
  console.log(
    `  ${isolation.padEnd(8)} p50 ${(percentile(latencies, 50) * 1000).toFixed(0).padStart(5)} µs   p99 ${(percentile(latencies, 99) * 1000).toFixed(0).padStart(6)} µs   ${perCall.toFixed(0).padStart(4)} µs/call with ${n} in flight`,
  );
}

/** `clients` callers each making calls back to back: calls/s and p99 latency. */
async function atConcurrency(isolation: SandboxIsolation, clients: number, total: number, code = "return input.a + 1") {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        const result = await runUserCode({ code, input: { a: i }, isolation });
        latencies.push(performance.now() - started);
        if (!result.ok) throw new Error(`call failed: ${result.error}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(
    `  ${isolation.padEnd(8)} concurrency ${String(clients).padStart(2)}: ${(total / seconds).toFixed(0).padStart(6)} calls/s   p99 ${percentile(latencies, 99).toFixed(2).padStart(7)} ms`,
  );
}

/** A real server, manual → code step; `clients` callers of POST /run?wait=30: runs/s and p99. */
async function codeStepsOnServer(clientsList: number[], total: number) {
  const server = await startServer({ env: { WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0", WEFT_LOG_LEVEL: "warn" } });
  try {
    const definition = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: {
          name: "compute",
          type: "PIECE",
          pieceId: "code",
          actionId: "run_code",
          config: { input: { a: "{{trigger.body.a}}" }, code: "return input.a + 1" },
        },
      },
    };
    const created = (await (
      await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "code bench", definition }),
      })
    ).json()) as any;
    await server.fetch(`/api/workflows/${created.data.id}/publish`, { method: "POST" });
    const url = `${server.url}/api/workflows/${created.data.id}/run?environment=production&wait=30`;
    const headers = { "content-type": "application/json", authorization: `Bearer ${server.token}` };
    for (let i = 0; i < 200; i++) await fetch(url, { method: "POST", headers, body: JSON.stringify({ a: i }) });
    for (const clients of clientsList) {
      const latencies: number[] = [];
      let next = 0;
      let failed = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < total) {
            next++;
            const started = performance.now();
            const body = (await (await fetch(url, { method: "POST", headers, body: JSON.stringify({ a: next }) })).json()) as any;
            latencies.push(performance.now() - started);
            if (body.data?.status !== "completed") failed++;
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      latencies.sort((a, b) => a - b);
      console.log(
        `  server   concurrency ${String(clients).padStart(2)}: ${(total / seconds).toFixed(0).padStart(6)} runs/s    p99 ${percentile(latencies, 99).toFixed(2).padStart(7)} ms${failed ? `   (${failed} not completed)` : ""}`,
      );
    }
  } finally {
    await server.stop();
  }
}

/** The pids whose parent is `pid` (Linux). */
function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((child) => {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    });
}

/** Issue 21 by hand: a burst of slow code steps, SIGKILL, restart; what is left `running` 15 s later. */
async function restartAfterBurst() {
  const env = { WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0", WEFT_LOG_LEVEL: "warn" };
  const definition = BURST_DEFINITION;
  const first = await startServer({ env });
  const created = (await (
    await first.fetch("/api/workflows", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "burst", definition }),
    })
  ).json()) as any;
  await first.fetch(`/api/workflows/${created.data.id}/publish`, { method: "POST" });
  await Promise.all(
    Array.from({ length: 20 }, (_, n) =>
      fetch(`${first.url}/webhook/${created.data.webhookToken}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ n }),
      }),
    ),
  );
  await Bun.sleep(1_000);
  await first.stop("SIGKILL");
  const restarted = performance.now();
  const server: ServerHandle = await startServer({ dataDir: first.dataDir, env });
  try {
    const statuses = async () => {
      const runs = (await (await server.fetch(`/api/runs?workflowId=${created.data.id}&limit=50`)).json()).data as Array<{ status: string }>;
      return {
        running: runs.filter((run) => run.status === "running").length,
        finished: runs.filter((run) => run.status === "completed" || run.status === "failed").length,
      };
    };
    const health: number[] = [];
    let runningAt15: number | undefined;
    let lastRunningEnded: number | undefined;
    let lastFinished: number | undefined;
    let sandboxes = 0;
    while (lastFinished === undefined || runningAt15 === undefined) {
      const t0 = performance.now();
      await fetch(`${server.url}/healthz`);
      health.push(performance.now() - t0);
      const since = (performance.now() - restarted) / 1000;
      const { running, finished } = await statuses();
      sandboxes = Math.max(sandboxes, childrenOf(server.proc.pid).length);
      if (runningAt15 === undefined && since >= 15) runningAt15 = running;
      if (running === 0) lastRunningEnded ??= since;
      else lastRunningEnded = undefined;
      if (finished === 20) lastFinished ??= since;
      if (since > 90) break;
      await Bun.sleep(100);
    }
    health.sort((a, b) => a - b);
    console.log(
      `  restart after 20 runs × 1.5 s of code: ${runningAt15} running 15 s after the restart; none running from ${lastRunningEnded?.toFixed(1)} s, all 20 finished at ${lastFinished?.toFixed(1)} s; up to ${sandboxes} sandbox processes; GET /healthz p50 ${percentile(health, 50).toFixed(2)} ms, p99 ${percentile(health, 99).toFixed(2)} ms`,
    );
    const idleWait = Number(values["idle-wait"]);
    if (idleWait > 0) {
      await Bun.sleep(idleWait * 1000);
      const sandboxPids = childrenOf(server.proc.pid);
      const sandboxRss = sandboxPids.reduce((sum, pid) => sum + rssMiB(pid), 0);
      console.log(
        `  ${idleWait} s later, idle: server RSS ${rssMiB(server.proc.pid).toFixed(1)} MiB; ${sandboxPids.length} sandbox process(es), ${sandboxRss.toFixed(1)} MiB`,
      );
    }
  } finally {
    await server.stop();
  }
}

type Variant = "none" | "code" | "data";

function definition(variant: Variant) {
  const tail = {
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
  };
  const extra =
    variant === "code"
      ? {
          name: "compute",
          type: "PIECE",
          pieceId: "code",
          actionId: "run_code",
          config: { input: { a: "{{shape.output.n}}" }, code: "return input.a + 1" },
          nextAction: tail,
        }
      : { name: "compute", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { a: "{{shape.output.n}}" } }, nextAction: tail };
  return {
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
        nextAction: variant === "none" ? tail : extra,
      },
    },
    settings: {},
    variables: {},
    annotations: null,
    pinnedData: {},
  };
}

async function engineRunsPerSecond(variant: Variant): Promise<number> {
  const server = await startServer({ env: { WEFT_WORKERS: values.workers!, WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0", WEFT_LOG_LEVEL: "warn" } });
  try {
    const created = (await (
      await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "bench", definition: definition(variant) }),
      })
    ).json()) as any;
    const id = created.data.id;
    const published = await server.fetch(`/api/workflows/${id}/publish`, { method: "POST" });
    if (!published.ok) throw new Error(`publish failed: ${await published.text()}`);
    const url = `${server.url}/api/workflows/${id}/run?environment=production&wait=30`;
    const headers = { "content-type": "application/json", authorization: `Bearer ${server.token}` };
    for (let i = 0; i < 300; i++) await fetch(url, { method: "POST", headers, body: JSON.stringify({ name: `w${i}`, n: i % 20 }) });
    const runs = Number(values.runs);
    let next = 0;
    let completed = 0;
    let firstFailure: unknown;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: Number(values.clients) }, async () => {
        while (next < runs) {
          next++;
          const res = await fetch(url, { method: "POST", headers, body: JSON.stringify({ name: "c", n: next % 20 }) });
          const body = (await res.json()) as any;
          if (body.data?.status === "completed") completed++;
          else firstFailure ??= body;
        }
      }),
    );
    const rate = completed / ((performance.now() - t0) / 1000);
    if (firstFailure) console.log(`    (not completed, e.g. ${JSON.stringify(firstFailure).slice(0, 300)})`);
    return rate;
  } finally {
    await server.stop();
  }
}

console.log(`run_code overhead, \`return input.a + 1\`, ${cpus().length} cores:`);
// Every call in flight runs: none is refused past WEFT_SANDBOX_QUEUE (1,000 by default; before this was set,
// 4 in 5 of the 5,000 calls in flight were refused at once, and the figure counted them).
configureSandbox({ timeoutMs: 5_000, queue: 10_000 });
await calls("inline");
await calls("process");
console.log(`code calls at concurrency 1, 10, 50 (\`return input.a + 1\`, up to ${sandboxSettings().processes} sandbox processes, the default):`);
for (const isolation of ["inline", "process"] as const) for (const clients of [1, 10, 50]) await atConcurrency(isolation, clients, 4_000);
// ~25 ms of computing a call (on this machine's speed, alone): more processes than cores share them.
const CPU_BOUND = "let x = 0; for (let i = 0; i < 500_000; i++) x = (x + i * input.a) % 1_000_003; return x";
console.log("CPU-bound code (~25 ms a call alone) at concurrency 1, 10, 50:");
for (const isolation of ["inline", "process"] as const) for (const clients of [1, 10, 50]) await atConcurrency(isolation, clients, 200, CPU_BOUND);
stopSandboxProcesses();
console.log("code steps on a real server (process isolation on the server's thread), POST /run?wait=30:");
await codeStepsOnServer([1, 10, 50], 2_000);
console.log("issue 21 by hand (default WEFT_SANDBOX_PROCESSES):");
await restartAfterBurst();

console.log(`engine benchmark workflow, ${values.runs} runs, ${values.clients} clients, ${values.workers} workers:`);
const without = await engineRunsPerSecond("none");
console.log(`  without run_code             ${without.toFixed(0)} runs/s`);
const withCode = await engineRunsPerSecond("code");
console.log(`  with run_code                ${withCode.toFixed(0)} runs/s  (${((withCode / without) * 100).toFixed(0)} % of without)`);
// The same extra step as a pure data step: what any fourth step costs, sandbox aside.
const withData = await engineRunsPerSecond("data");
console.log(`  with data.set_fields instead ${withData.toFixed(0)} runs/s  (${((withData / without) * 100).toFixed(0)} % of without)`);
process.exit(0);
