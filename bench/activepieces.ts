/**
 * Activepieces pieces (issue 16 item 8), against real `weft serve` processes:
 *  - idle RSS of a server with 20 installed but unused piece packages vs. one with none (pieces load lazily:
 *    nothing of a package is loaded until a step or a dropdown uses it);
 *  - first use of a piece: the step's duration when its host process has to start and load the package,
 *    and the same step once the host runs; and the cold start of a host (spawn, load, describe) for real
 *    Activepieces packages (piece-mysql, piece-wordpress, piece-slack: 72 actions on a recent framework) and for the fixture (built with the whole
 *    framework, zod and the AI SDK, so heavier to load than Activepieces' own bundles);
 *  - a trivial action's cost per run (manual trigger → echo) on the warm host, next to the same workflow
 *    with a built-in step that runs on a worker thread (store.put: non-pure, so it takes the worker hop).
 *
 *   bun bench/activepieces.ts [--runs 300]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fixturePackage } from "../test/support/activepieces-fixture";
import { packTarball } from "../test/support/npm-registry";
import { PieceHostProcess } from "../src/pieces-runtime/activepieces/host-process";
import { BENCH_TOKEN, machine, ROOT, rssMiB, startBenchServer } from "./_support";

const { values } = parseArgs({ args: process.argv.slice(2), options: { runs: { type: "string", default: "300" } } });
const RUNS = Number(values.runs);
const PACKAGES = 20;

/** Installs `count` copies of the fixture piece under distinct names into a data directory (with `weft pieces add`). */
async function dataDirWith(count: number): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "weft-bench-ap-"));
  for (let i = 0; i < count; i++) {
    const tarball = await packTarball(await fixturePackage("1.0.0", `@weft-bench/piece-fixture-${i}`));
    const add = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), "pieces", "add", tarball], {
      env: { ...process.env, WEFT_DATA_DIR: dataDir, WEFT_LOG_LEVEL: "error" },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (add.exitCode !== 0) throw new Error(`pieces add failed: ${add.stderr.toString()}`);
  }
  return dataDir;
}

async function server(dataDir: string) {
  return startBenchServer([process.execPath, join(ROOT, "src/main.ts"), "serve"], { WEFT_DATA_DIR: dataDir, WEFT_LOG_LEVEL: "error" });
}

async function api(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: Record<string, unknown> & { id: string } };
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** Publishes manual trigger → one step; returns the workflow id. */
async function workflow(url: string, step: Record<string, unknown>) {
  const definition = { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {}, nextAction: { name: "step", type: "PIECE", ...step } } };
  const wf = await api(url, "POST", "/api/workflows", { name: `bench ${Math.random()}`, definition });
  await api(url, "POST", `/api/workflows/${wf.id}/publish`, {});
  return wf.id;
}

type Run = { status: string; durationMs: number; steps: Array<{ durationMs: number }> };
const runOnce = async (url: string, id: string) => (await api(url, "POST", `/api/workflows/${id}/run?environment=production&wait=30`, {})) as unknown as Run;

/** Runs `id` RUNS times, `concurrency` at a time; runs per second and the mean step duration. */
async function throughput(url: string, id: string, concurrency: number) {
  const started = performance.now();
  const steps: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < RUNS) {
        const run = await runOnce(url, id);
        if (run.status !== "completed") throw new Error(`run ${run.status}`);
        steps.push(run.steps[0]?.durationMs ?? Number.NaN);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: RUNS / seconds, stepMs: steps.reduce((a, b) => a + b, 0) / steps.length };
}

console.log(`activepieces bench, ${machine()}, ${RUNS} runs per workflow`);
const emptyDir = mkdtempSync(join(tmpdir(), "weft-bench-ap-empty-"));
const fullDir = await dataDirWith(PACKAGES);

const empty = await server(emptyDir);
await Bun.sleep(3000);
const emptyRss = rssMiB(empty.proc.pid);
await empty.stop();

const full = await server(fullDir);
await Bun.sleep(3000);
const fullRss = rssMiB(full.proc.pid);
console.log(
  `idle RSS: ${emptyRss.toFixed(1)} MiB with no package, ${fullRss.toFixed(1)} MiB with ${PACKAGES} installed and unused (+${(fullRss - emptyRss).toFixed(1)} MiB; goal < 10)`,
);

let url = full.url;
const connection = await api(url, "POST", "/api/connections", { pieceId: "ap-weft-bench-fixture-0", name: "bench", values: { token: "good-token" } });
const echo = await workflow(url, { pieceId: "ap-weft-bench-fixture-0", actionId: "echo", connectionId: connection.id, config: { text: "hi" } });
const builtin = await workflow(url, { pieceId: "store", actionId: "put", config: { key: "bench", value: "hi" } });

// Creating the connection ran the piece's validate in a host: a fresh server has none, so the first step starts it.
await full.stop();
const restarted = await server(fullDir);
url = restarted.url;
const first = await runOnce(url, echo);
const second = await runOnce(url, echo);
console.log(
  `first use after a restart: ${first.steps[0]?.durationMs} ms (the host process starts and loads the fixture, which bundles the whole framework; goal < 100), then ${second.steps[0]?.durationMs} ms per step on the warm host`,
);

/**
 * A host's cold start, median of 5: spawn and load the package until it answers a ping (what a first step
 * waits for before its own call), and until it has described the whole piece (what an install waits for).
 */
async function coldStart(modulePath: string, name: string): Promise<{ ready: number; described: number }> {
  const ready: number[] = [];
  const described: number[] = [];
  for (let i = 0; i < 5; i++) {
    for (const [request, times] of [
      [{ t: "ping" }, ready],
      [{ t: "describe" }, described],
    ] as const) {
      const host = new PieceHostProcess({ modulePath, packageName: name, version: "bench", cwd: tmpdir(), allowCidrs: [], idleMs: 60_000 });
      const started = performance.now();
      await host.request(request);
      times.push(performance.now() - started);
      host.stop();
    }
  }
  const median = (times: number[]) => times.sort((a, b) => a - b)[2] ?? Number.NaN;
  return { ready: median(ready), described: median(described) };
}
const fixtureDir = await fixturePackage("1.0.0");
for (const [name, modulePath] of [
  ...["@activepieces/piece-mysql", "@activepieces/piece-wordpress", "@activepieces/piece-slack"].map((pkg) => [
    pkg,
    join(ROOT, "node_modules", pkg, "src/index.js"),
  ]),
  ["the fixture (framework 0.32 with zod and the AI SDK bundled)", join(fixtureDir, "src/index.js")],
]) {
  const { ready, described } = await coldStart(modulePath!, name!);
  console.log(`cold start of a host for ${name}: ready for a first step in ${ready.toFixed(0)} ms (goal < 100), described in ${described.toFixed(0)} ms`);
}

await runOnce(url, builtin);
for (const concurrency of [1, 10]) {
  const ap = await throughput(url, echo, concurrency);
  const worker = await throughput(url, builtin, concurrency);
  console.log(`${concurrency} at a time:`);
  console.log(`  trivial action: ${ap.perSecond.toFixed(0)} runs/s, step ${ap.stepMs.toFixed(2)} ms mean (Activepieces echo in its host process)`);
  console.log(`  built-in worker step: ${worker.perSecond.toFixed(0)} runs/s, step ${worker.stepMs.toFixed(2)} ms mean (store.put on a worker thread)`);
  console.log(`  step time ratio: ${(ap.stepMs / worker.stepMs).toFixed(2)}× the built-in step (goal ≤ 2×)`);
}
await restarted.stop();
