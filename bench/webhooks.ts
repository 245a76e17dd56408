/**
 * Webhook figures (issue 7), against a real `weft serve` (WEFT_DB_SYNCHRONOUS=FULL unless --sync):
 * - asynchronous: POST {PUBLIC_URL}/webhook/{token} → 202 once the run is committed, 50 connections;
 *   afterwards every accepted call must be a run row (counted through GET /api/runs).
 * - synchronous: webhook → data.set_fields → webhook.respond, 50 connections; req/s and p99, then the
 *   runs and their steps are checked to be persisted.
 *
 * Each phase is measured `--repeat` times (default 3) and the median is reported with the range: on a shared
 * 2-core VM one 10 s phase swings by ±15 %.
 *
 *   bun bench/webhooks.ts [--seconds 10] [--connections 50] [--sync FULL|NORMAL] [--repeat 3]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { benchApi, greetStep, load, machine, peakRssMiB, publishWebhookWorkflow, ROOT, replyStep, startBenchServer, type LoadResult } from "./_support";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    sync: { type: "string", default: "FULL" },
    repeat: { type: "string", default: "3" },
  },
});
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const REPEAT = Math.max(1, Number(values.repeat));

/** Runs a load phase REPEAT times; returns the median run (by req/s) plus every figure and the totals. */
async function measured(url: string) {
  const runs: LoadResult[] = [];
  const cpu0 = serverCpuMs();
  for (let i = 0; i < REPEAT; i++)
    runs.push(await load(url, { connections: CONNECTIONS, seconds: SECONDS, method: "POST", headers: { "content-type": "application/json" }, body }));
  const cpuMs = serverCpuMs() - cpu0;
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const errors = runs.reduce((n, r) => n + r.errors, 0);
  const range = `${sorted[0]!.requestsPerSecond.toFixed(0)}–${sorted[sorted.length - 1]!.requestsPerSecond.toFixed(0)}`;
  return { median, runs, requests, errors, cpuMs, range };
}

const server = await startBenchServer([process.execPath, `${ROOT}/src/main.ts`, "serve"], { WEFT_DB_SYNCHRONOUS: String(values.sync) });
const api = benchApi(server.url);
const publish = (name: string, nextAction: unknown) => publishWebhookWorkflow(server.url, name, nextAction);

async function runTotal(workflowId: string, status?: string): Promise<number> {
  const json = await api("GET", `/api/runs?workflowId=${workflowId}&limit=1${status ? `&status=${status}` : ""}`);
  return json.pagination.total;
}

async function drained(workflowId: string, expected: number, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = await runTotal(workflowId, "completed");
    if (done >= expected || Date.now() > deadline) return done;
    await Bun.sleep(250);
  }
}

const body = JSON.stringify({ name: "Ada", n: 21 });

/** User+system CPU of the server process, ms (all its threads). */
function serverCpuMs(): number {
  const fields = readFileSync(`/proc/${server.proc.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
const cpuPer = (ms: number, requests: number) => `server CPU ${((ms * 1000) / Math.max(1, requests)).toFixed(0)} µs/request`;
const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

console.log(`machine: ${machine()}, synchronous=${values.sync}, ${CONNECTIONS} connections, ${SECONDS} s per phase, load average ${loadAverage()}`);

// Asynchronous: 202 once the pending run row is committed.
const asyncFlow = await publish("bench async", greetStep());
await load(asyncFlow.url, { connections: CONNECTIONS, seconds: 2, method: "POST", headers: { "content-type": "application/json" }, body });
const asyncBefore = await runTotal(asyncFlow.id);
const asyncResult = await measured(asyncFlow.url);
const accepted = asyncResult.requests - asyncResult.errors;
const asyncRuns = (await runTotal(asyncFlow.id)) - asyncBefore;
console.log(
  `async webhook 202, ${asyncResult.median.tool}, median of ${REPEAT} × ${SECONDS} s: ${asyncResult.median.requestsPerSecond.toFixed(0)} req/s (range ${asyncResult.range}), p50 ${asyncResult.median.p50Ms.toFixed(2)} ms, p99 ${asyncResult.median.p99Ms.toFixed(2)} ms, non-2xx ${asyncResult.errors}, ${cpuPer(asyncResult.cpuMs, asyncResult.requests)}`,
);
console.log(
  `  accepted ${accepted} calls → ${asyncRuns} run rows in the database (${asyncRuns >= accepted ? "every accepted call is durably queued" : "MISSING RUNS"})`,
);
const asyncTotal = await runTotal(asyncFlow.id);
const t0 = performance.now();
const asyncDone = await drained(asyncFlow.id, asyncTotal);
console.log(`  the queue drained to ${asyncDone}/${asyncTotal} completed runs in ${((performance.now() - t0) / 1000).toFixed(1)} s after the load`);

// Synchronous: webhook → set_fields → respond.
const syncFlow = await publish("bench sync", greetStep(replyStep));
const probe = await fetch(syncFlow.url, { method: "POST", headers: { "content-type": "application/json" }, body });
console.log(`  sync probe: ${probe.status} ${await probe.text()}`);
await load(syncFlow.url, { connections: CONNECTIONS, seconds: 2, method: "POST", headers: { "content-type": "application/json" }, body });
const syncBefore = await runTotal(syncFlow.id);
const syncResult = await measured(syncFlow.url);
const syncRuns = (await runTotal(syncFlow.id)) - syncBefore;
console.log(
  `sync webhook → set_fields → respond, ${syncResult.median.tool}, median of ${REPEAT} × ${SECONDS} s: ${syncResult.median.requestsPerSecond.toFixed(0)} req/s (range ${syncResult.range}), p50 ${syncResult.median.p50Ms.toFixed(2)} ms, p99 ${syncResult.median.p99Ms.toFixed(2)} ms (worst p99 ${Math.max(...syncResult.runs.map((r) => r.p99Ms)).toFixed(2)}), non-2xx ${syncResult.errors}, ${cpuPer(syncResult.cpuMs, syncResult.requests)}`,
);
const syncTotal = await runTotal(syncFlow.id);
const syncDone = await drained(syncFlow.id, syncTotal);
const sample = (await api("GET", `/api/runs?workflowId=${syncFlow.id}&limit=1`)).data[0];
const detail = await api("GET", `/api/runs/${sample.id}`);
console.log(
  `  ${syncResult.requests - syncResult.errors} replies → ${syncRuns} runs persisted, ${syncDone}/${syncTotal} completed; a sample run has ${detail.data.steps.length} step rows (${detail.data.steps.map((s: any) => `${s.nodeId}:${s.status}`).join(", ")})`,
);
console.log(`peak RSS of the server: ${peakRssMiB(server.proc.pid).toFixed(0)} MiB; load average now ${loadAverage()}`);
await server.stop();
