/**
 * What /metrics costs (docs/operations.md, "Metrics"), against a real `weft serve`:
 * - a scrape with 1,000 workflows published and each run once, on a server with WEFT_METRICS_WORKFLOW_LABELS=1000
 *   (every workflow with series of its own: the most a scrape can hold) and on one with the default (none);
 * - the webhook bench's asynchronous phase (POST → 202, 50 connections) with and without a scraper reading
 *   /metrics every second, and with --baseline DIR also against a checkout of a revision without metrics
 *   (`git worktree add /tmp/base <rev>` and its node_modules). Phases alternate (A B A B …), so the machine's
 *   drift falls on every side alike; server CPU per request is the steadier figure on a shared machine.
 *
 *   bun bench/metrics.ts [--workflows 1000] [--seconds 8] [--repeat 4] [--connections 50] [--baseline DIR]
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  BENCH_TOKEN,
  type BenchServer,
  benchApi,
  greetStep,
  load,
  machine,
  processCpuMs,
  publishWebhookWorkflow,
  ROOT,
  reportGoal,
  startBenchServer,
} from "./_support";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    workflows: { type: "string", default: "1000" },
    seconds: { type: "string", default: "8" },
    repeat: { type: "string", default: "4" },
    connections: { type: "string", default: "50" },
    baseline: { type: "string" },
  },
});
const WORKFLOWS = Number(values.workflows);
const SECONDS = Number(values.seconds);
const REPEAT = Math.max(1, Number(values.repeat));
const CONNECTIONS = Number(values.connections);
const body = JSON.stringify({ name: "Ada", n: 21 });
const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

async function scrapeMs(server: BenchServer): Promise<{ ms: number; bytes: number; text: string }> {
  const t0 = performance.now();
  const res = await fetch(`${server.url}/metrics`, { headers: auth });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text.slice(0, 300)}`);
  return { ms: performance.now() - t0, bytes: text.length, text };
}

/** Runs `tasks` with at most `width` at once. */
async function inParallel<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

/** Publishes WORKFLOWS webhook workflows and runs each once; resolves once every run completed. */
async function publishAndRunEach(server: BenchServer): Promise<void> {
  const flows = await inParallel(WORKFLOWS, 4, (i) => publishWebhookWorkflow(server.url, `metrics bench ${i}`, greetStep()));
  await inParallel(flows.length, 16, async (i) => {
    const res = await fetch(flows[i]!.url, { method: "POST", headers: { "content-type": "application/json" }, body });
    if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
    await res.arrayBuffer();
  });
  const api = benchApi(server.url);
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await Bun.sleep(250)) {
    if ((await api("GET", "/api/runs?status=completed&limit=1")).pagination.total >= WORKFLOWS) return;
  }
  throw new Error("the runs did not complete within 2 minutes");
}

/** Scrape times of a server holding WORKFLOWS workflows that each ran once. */
async function scrapeFigures(labels: number): Promise<{ p50: number; p99: number; bytes: number; series: number }> {
  const server = await startBenchServer([process.execPath, join(ROOT, "src/main.ts"), "serve"], { WEFT_METRICS_WORKFLOW_LABELS: String(labels) });
  try {
    await publishAndRunEach(server);
    for (let i = 0; i < 5; i++) await scrapeMs(server);
    const times: number[] = [];
    let last = { bytes: 0, text: "" };
    for (let i = 0; i < 100; i++) {
      const scrape = await scrapeMs(server);
      times.push(scrape.ms);
      last = scrape;
    }
    const series = last.text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).length;
    return { p50: median(times), p99: quantile(times, 0.99), bytes: last.bytes, series };
  } finally {
    await server.stop();
  }
}

console.log(`machine: ${machine()}, load average ${loadAverage()}`);

for (const labels of [WORKFLOWS, 0]) {
  const f = await scrapeFigures(labels);
  console.log(
    `scrape, ${WORKFLOWS} workflows each run once, WEFT_METRICS_WORKFLOW_LABELS=${labels}: p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms over 100 scrapes; ${f.series} samples, ${(f.bytes / 1024).toFixed(0)} KiB`,
  );
}

// Throughput: the same async webhook phase on each server, with a scraper on this one every second or not.
interface Side {
  name: string;
  server: BenchServer;
  url: string;
  scraper: boolean;
  rps: number[];
  cpuUsPerRequest: number[];
}
const sides: Side[] = [];
const branch = await startBenchServer([process.execPath, join(ROOT, "src/main.ts"), "serve"]);
const branchFlow = await publishWebhookWorkflow(branch.url, "metrics bench async", greetStep());
let baseline: BenchServer | undefined;
if (values.baseline) {
  baseline = await startBenchServer([process.execPath, join(values.baseline, "src/main.ts"), "serve"]);
  const flow = await publishWebhookWorkflow(baseline.url, "metrics bench async", greetStep());
  sides.push({ name: `baseline (${values.baseline})`, server: baseline, url: flow.url, scraper: false, rps: [], cpuUsPerRequest: [] });
}
sides.push({ name: "this build, no scraper", server: branch, url: branchFlow.url, scraper: false, rps: [], cpuUsPerRequest: [] });
sides.push({ name: "this build, scraped every 1 s", server: branch, url: branchFlow.url, scraper: true, rps: [], cpuUsPerRequest: [] });

const scrapesDuringLoad: number[] = [];
const headers = { "content-type": "application/json" };
for (const side of sides) await load(side.url, { connections: CONNECTIONS, seconds: 2, method: "POST", headers, body });
for (let round = 0; round < REPEAT; round++) {
  for (const side of sides) {
    let scraping = side.scraper;
    const scraper = (async () => {
      while (scraping) {
        const t0 = performance.now();
        scrapesDuringLoad.push((await scrapeMs(side.server)).ms);
        await Bun.sleep(Math.max(0, 1000 - (performance.now() - t0)));
      }
    })();
    const cpu0 = processCpuMs(side.server.proc.pid);
    const result = await load(side.url, { connections: CONNECTIONS, seconds: SECONDS, method: "POST", headers, body });
    const cpuMs = processCpuMs(side.server.proc.pid) - cpu0;
    scraping = false;
    await scraper;
    side.rps.push(result.requestsPerSecond);
    side.cpuUsPerRequest.push((cpuMs * 1000) / Math.max(1, result.requests));
    if (result.errors + result.socketErrors > 0) console.log(`  ${side.name}: ${result.errors} non-2xx, ${result.socketErrors} socket errors`);
  }
}
const unscraped = sides.find((s) => !s.scraper && s.server === branch)!;
console.log(`async webhook 202, ${CONNECTIONS} connections, ${REPEAT} alternating rounds × ${SECONDS} s (median, range; server CPU per request):`);
for (const side of sides) {
  const rps = median(side.rps);
  const vs = side === unscraped ? "" : ` (${(((rps - median(unscraped.rps)) / median(unscraped.rps)) * 100).toFixed(1)} % against no scraper)`;
  console.log(
    `  ${side.name.padEnd(32)} ${rps.toFixed(0)} req/s (${Math.min(...side.rps).toFixed(0)}–${Math.max(...side.rps).toFixed(0)})${vs}, ${median(side.cpuUsPerRequest).toFixed(1)} µs/request`,
  );
}
console.log(
  `  scrapes during the load: ${scrapesDuringLoad.length}, p50 ${median(scrapesDuringLoad).toFixed(2)} ms, max ${Math.max(...scrapesDuringLoad).toFixed(2)} ms`,
);
const scraped = sides.find((s) => s.scraper)!;
const cost = (median(scraped.cpuUsPerRequest) - median(unscraped.cpuUsPerRequest)) / median(unscraped.cpuUsPerRequest);
const slower = (median(unscraped.rps) - median(scraped.rps)) / median(unscraped.rps);
reportGoal({
  figure: "metrics: async webhooks scraped every 1 s against not scraped (server CPU per request; req/s)",
  value: `${(cost * 100).toFixed(1)} % CPU; ${(slower * 100).toFixed(1)} % fewer req/s`,
  goal: "< 2 %",
  met: cost < 0.02,
});
if (baseline) {
  const base = sides[0]!;
  const instrumented = (median(unscraped.cpuUsPerRequest) - median(base.cpuUsPerRequest)) / median(base.cpuUsPerRequest);
  console.log(`  counting itself (this build not scraped against the baseline): ${(instrumented * 100).toFixed(1)} % server CPU per request`);
  await baseline.stop();
}
console.log(`load average now ${loadAverage()}`);
await branch.stop();
