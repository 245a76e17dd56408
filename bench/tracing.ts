/**
 * What traces cost (docs/operations.md, "Traces"): the peers' workflow (./peers.ts: webhook → set fields →
 * synchronous reply) on two `weft serve` instances side by side, one without an OTLP endpoint (tracing off: no
 * OpenTelemetry module is loaded) and one sending every run's and step's spans to a loopback OTLP/HTTP receiver
 * in this process (test/support/otlp-receiver.ts; no collector is packaged in Debian). Measured in turns, the order
 * alternating, at 10 and 50 connections; printed: req/s, p50, p99 and CPU per request of each, the ratio on ÷ off,
 * and how many spans the receiver took (so a run of the "on" phase that exported nothing cannot pass for free).
 *
 *   bun bench/tracing.ts [--seconds 8] [--repeat 3]
 */
import { parseArgs } from "node:util";
import { startOtlpReceiver } from "../test/support/otlp-receiver";
import { greetStep, load, machine, processCpuMs, publishWebhookWorkflow, ROOT, replyStep, startBenchServer } from "./_support";

const { values } = parseArgs({ args: process.argv.slice(2), options: { seconds: { type: "string", default: "8" }, repeat: { type: "string", default: "3" } } });
const seconds = Number(values.seconds);
const repeat = Number(values.repeat);
const BODY = JSON.stringify({ name: "bench", n: 21 });

const receiver = startOtlpReceiver();
const command = [process.execPath, `${ROOT}/src/main.ts`, "serve"];
const off = await startBenchServer(command, {});
const on = await startBenchServer(command, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "weft-bench" });
const configs = [
  { name: "tracing off", server: off, url: (await publishWebhookWorkflow(off.url, "tracing bench", greetStep(replyStep))).url },
  { name: "tracing on (OTLP/HTTP)", server: on, url: (await publishWebhookWorkflow(on.url, "tracing bench", greetStep(replyStep))).url },
];

let spans = 0;
console.log(`${machine()}; ${seconds} s phases, median of ${repeat}, the two instances in alternating order`);
try {
  for (const connections of [10, 50]) {
    const results = new Map<string, Array<{ rps: number; p50: number; p99: number; cpuUs: number }>>();
    for (let turn = 0; turn < repeat; turn++) {
      const order = turn % 2 === 0 ? configs : [...configs].reverse();
      for (const config of order) {
        // A short warm-up, not counted.
        await load(config.url, { connections, seconds: 1, method: "POST", headers: { "content-type": "application/json" }, body: BODY });
        const cpuBefore = processCpuMs(config.server.proc.pid);
        const result = await load(config.url, { connections, seconds, method: "POST", headers: { "content-type": "application/json" }, body: BODY });
        const cpuMs = processCpuMs(config.server.proc.pid) - cpuBefore;
        // Counted, then dropped: the receiver keeps every span it decodes.
        spans += receiver.spans.length;
        receiver.spans.length = 0;
        const list = results.get(config.name) ?? [];
        list.push({ rps: result.requestsPerSecond, p50: result.p50Ms, p99: result.p99Ms, cpuUs: (1000 * cpuMs) / Math.max(1, result.requests) });
        results.set(config.name, list);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const offRps = median(results.get(configs[0]!.name)!.map((r) => r.rps));
    for (const config of configs) {
      const rows = results.get(config.name)!;
      const rps = median(rows.map((r) => r.rps));
      console.log(
        `c${connections} ${config.name.padEnd(24)} ${Math.round(rps).toLocaleString("en").padStart(7)} req/s  p50 ${median(rows.map((r) => r.p50)).toFixed(2)} ms  p99 ${median(rows.map((r) => r.p99)).toFixed(2)} ms  ${median(rows.map((r) => r.cpuUs)).toFixed(0)} µs CPU/request  ×${(rps / offRps).toFixed(2)} of off  (turns: ${rows.map((r) => Math.round(r.rps)).join(", ")})`,
      );
    }
  }
  console.log(`spans received: ${(spans + receiver.spans.length).toLocaleString("en")}`);
} finally {
  await off.stop();
  await on.stop();
  receiver.stop();
}
