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
 *    runs one call at a time; WEFT_SANDBOX_PROCESSES of them, one per core by default).
 * 2. Code steps on a real server at concurrency 1, 10 and 50 (a code step on the server's thread always
 *    uses process isolation): runs/s and p99 of POST /run?wait.
 * 3. The engine benchmark's workflow (manual → data.set_fields → router → text.template) against a
 *    real `weft serve`, without and with a run_code step after set_fields, and with a pure data step
 *    in its place (the cost of any extra step): completed runs/s of each.
 */
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { configureSandbox, runUserCode, stopSandboxProcesses, type SandboxIsolation } from "../src/sandbox";
import { startServer } from "../test/support/server";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    calls: { type: "string", default: "20000" },
    runs: { type: "string", default: "5000" },
    clients: { type: "string", default: "64" },
    workers: { type: "string", default: String(cpus().length) },
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
  await Promise.all(Array.from({ length: n }, (_, i) => call(i)));
  const perCall = ((performance.now() - t0) * 1000) / n;
  console.log(
    `  ${isolation.padEnd(8)} p50 ${(percentile(latencies, 50) * 1000).toFixed(0).padStart(5)} µs   p99 ${(percentile(latencies, 99) * 1000).toFixed(0).padStart(6)} µs   ${perCall.toFixed(0).padStart(4)} µs/call with ${n} in flight`,
  );
}

/** `clients` callers each making calls back to back: calls/s and p99 latency. */
async function atConcurrency(isolation: SandboxIsolation, clients: number, total: number) {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        const result = await runUserCode({ code: "return input.a + 1", input: { a: i }, isolation });
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
configureSandbox({ timeoutMs: 5_000 });
await calls("inline");
await calls("process");
console.log(`code calls at concurrency 1, 10, 50 (\`return input.a + 1\`, ${cpus().length} sandbox processes):`);
configureSandbox({ processes: cpus().length });
for (const isolation of ["inline", "process"] as const) for (const clients of [1, 10, 50]) await atConcurrency(isolation, clients, 4_000);
stopSandboxProcesses();
console.log("code steps on a real server (process isolation on the server's thread), POST /run?wait=30:");
await codeStepsOnServer([1, 10, 50], 2_000);

console.log(`engine benchmark workflow, ${values.runs} runs, ${values.clients} clients, ${values.workers} workers:`);
const without = await engineRunsPerSecond("none");
console.log(`  without run_code             ${without.toFixed(0)} runs/s`);
const withCode = await engineRunsPerSecond("code");
console.log(`  with run_code                ${withCode.toFixed(0)} runs/s  (${((withCode / without) * 100).toFixed(0)} % of without)`);
// The same extra step as a pure data step: what any fourth step costs, sandbox aside.
const withData = await engineRunsPerSecond("data");
console.log(`  with data.set_fields instead ${withData.toFixed(0)} runs/s  (${((withData / without) * 100).toFixed(0)} % of without)`);
process.exit(0);
