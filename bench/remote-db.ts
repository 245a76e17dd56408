/**
 * PostgreSQL across a network: what Weft does when each round trip to the database costs milliseconds rather
 * than loopback's ~0.1 ms. A TCP proxy (test/support/latency-proxy.ts, in this process) in front of a throwaway
 * PostgreSQL (fsync on, as ./history.ts starts it) adds a one-way delay to each direction; its round trip is
 * measured (the median of timed `SELECT 1`, idle and during the 50-connection load) and printed. Two parts,
 * in one sitting:
 *
 * - throughput: the peers' workflow (./peers.ts: webhook → set fields → synchronous reply) at 10 and 50
 *   connections (wrk when installed, else the Bun client of ./_support.ts) on SQLite; PostgreSQL direct;
 *   PostgreSQL through the proxy without delay; at RTT ≈ 2 ms (1 ms each way); at RTT ≈ 4 ms (2 ms each way).
 *   Every configuration is its own `weft serve` on a database of its own, all started first and measured in
 *   turns (the order alternating), the median of --repeat phases each. Printed beside each: req/s, p50, p99,
 *   the ratio to the proxy without delay, the cores used by the instance, by this process (the proxy) and by the
 *   other instances (idle meanwhile) and the cores the machine left idle, and the client writes per call on each
 *   of the instance's PostgreSQL connections (the proxy counts them: about one per round trip). Goals: RTT ≈ 2 ms ≥ 75 % (c50) and ≥ 45 % (c10) of the proxy without delay; RTT ≈ 4 ms ≥ 55 % and
 *   ≥ 25 %; PostgreSQL direct ≥ 90 % of SQLite at c50. Then, not a goal, that last comparison again with
 *   PostgreSQL on a core of its own (postgresOnItsOwnCore): what the ratio is once its backends stop taking
 *   Weft's cores (docs/scaling.md, "Why PostgreSQL direct stays below 90 % of SQLite at 50 connections").
 * - stall: /healthz answered while 20 clients read the run list back to back (GET /api/runs?sort=duration,
 *   environment=all; wrk) against a history of 250,000 runs (seeded with ./history.ts's seedRuns, then moved
 *   with `weft migrate --from --to`), on SQLite, PostgreSQL direct and PostgreSQL at RTT ≈ 2 ms. A store that
 *   waits for the database on the event loop makes /healthz wait behind the reads. Goal: its slowest answer
 *   < 20 ms. Beside it an idle bystander instance (SQLite, no runs, no reads) is probed the same way during the
 *   same load: what it waits is the machine's floor, the time any process waits for a core while the reads
 *   keep both cores busy, which no design of the measured instance's event loop can remove.
 *
 * Each phase also says where the CPU went (the instance, PostgreSQL, this process with its proxies, wrk, other
 * processes, idle); a phase during which processes not the bench's took more than 0.2 cores is measured again
 * (twice at most), as ./cluster.ts does: the machine may be shared. Without PostgreSQL (Debian package
 * postgresql) it prints one line and exits.
 *
 *   npm run bench -- remote-db                       both parts, its goals in the sitting's closing table
 *   WEFT_BENCH_REMOTE=throughput npm run bench -- remote-db       one part (throughput or stall)
 *   bun bench/remote-db.ts [throughput|stall] [--seconds 5] [--repeat 3] [--runs 250000]
 */
import { readdirSync, rmSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type LatencyProxy, measureRttMs, startLatencyProxy } from "../test/support/latency-proxy";
import { postgresBinaries } from "../test/support/postgres";
import {
  BENCH_TOKEN,
  type BenchServer,
  benchApi,
  greetStep,
  IDLE_SETTLE_MS,
  type LoadResult,
  load,
  machine,
  machineBusyMs,
  processCpuMs,
  procStat,
  publishWebhookWorkflow,
  ROOT,
  replyStep,
  reportGoal,
  spawnBenchServer,
  startBenchServer,
} from "./_support";
import { copyToPostgres, firstAnswer, freshDatabase, prepareDataDir, stopPostgres } from "./history";

if (!postgresBinaries()) {
  console.log("bench/remote-db.ts skipped: PostgreSQL is not installed (Debian package postgresql)");
  process.exit(0);
}

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    seconds: { type: "string", default: "5" },
    repeat: { type: "string", default: "3" },
    runs: { type: "string", default: "250000" },
  },
});
const PART = positionals[0] ?? process.env.WEFT_BENCH_REMOTE ?? "all";
if (!["all", "throughput", "stall"].includes(PART)) throw new Error(`part "${PART}": throughput, stall or all (WEFT_BENCH_REMOTE or the first argument)`);
const SECONDS = Number(values.seconds);
const REPEAT = Math.max(1, Number(values.repeat));
const RUNS = Number(values.runs);
const LEVELS = [10, 50];
const WARMUP_SECONDS = 2;
const CORES = cpus().length;
/** One-way delays: the proxy's round trip is about twice this plus a timer's overshoot (~0.2 ms each way). */
const RTT2_DELAY_MS = 1;
const RTT4_DELAY_MS = 2;
const post = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Ada", n: 21 }) };
/** Every run kept: a retention sweep (default: above 100,000 runs) must not start during a phase. */
const KEEP_RUNS = { WEFT_RUN_RETENTION_DAYS: "0", WEFT_RUN_RETENTION_MAX: "0" };
const serve = [process.execPath, `${ROOT}/src/main.ts`, "serve"];

const f = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const pct = (r: number) => `${(100 * r).toFixed(0)} %`;
const thousands = (n: number) => n.toLocaleString("en-US");
const median = <T>(items: T[], by: (item: T) => number) => [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)]!;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

/** Prints a table: the first column left-aligned, the others right-aligned. */
function table(header: string[], rows: string[][]): void {
  const widths = header.map((_, c) => Math.max(header[c]!.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => `  ${cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")}`;
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

/** A database configuration of the bench: where the instance stores, and the proxy in between if any. */
interface Storage {
  name: string;
  /** undefined: SQLite. */
  databaseUrl?: string;
  proxy?: LatencyProxy;
  /** What the instance is given as WEFT_DATABASE_URL. */
  env: Record<string, string>;
  /** The round trip of a `SELECT 1` to the database as the instance reaches it, idle, ms. */
  rttMs?: number;
  cleanup: () => Promise<void>;
}

/** A fresh PostgreSQL database (or `shared`, which is left for its owner to drop), direct or through a proxy with `delayMs` each way. */
async function postgresStorage(name: string, delayMs: number | undefined, shared?: string): Promise<Storage> {
  const database = shared ? { url: shared, drop: async () => undefined } : await freshDatabase();
  if (postmaster === undefined) await findPostmaster(database.url);
  const proxy = delayMs === undefined ? undefined : await startLatencyProxy(database.url, { delayMs });
  const url = proxy ? proxy.url(database.url) : database.url;
  return {
    name,
    databaseUrl: url,
    proxy,
    env: { WEFT_DATABASE_URL: url },
    rttMs: await measureRttMs(url),
    cleanup: async () => {
      await proxy?.stop();
      await database.drop();
    },
  };
}

const sqliteStorage = (): Storage => ({ name: "SQLite", env: {}, cleanup: async () => undefined });

const rttText = (storage: Storage) => (storage.rttMs === undefined ? "-" : f(storage.rttMs));

// ------------------------------------------------------------------------------------------ throughput

/** Where the machine's CPU went during a phase, in cores. */
interface Cores {
  /** The instance measured, and the other instances of the bench (idle meanwhile). */
  weft: number;
  idleWeft: number;
  /** This process (the proxies, the /healthz prober), and the load generator. */
  proxy: number;
  wrk: number;
  postgres: number;
  /** Processes that are not the bench's (on a shared machine). */
  other: number;
  idle: number;
}

/** PostgreSQL's CPU, ms: the postmaster with the backends it has reaped, and its live children (as ./cluster.ts reads it). */
let postmaster: number | undefined;
async function findPostmaster(databaseUrl: string): Promise<void> {
  const sql = new Bun.SQL(databaseUrl, { adapter: "postgres", max: 1 });
  postmaster = Number(procStat((await sql`SELECT pg_backend_pid() AS pid`)[0].pid)![1]);
  await sql.close();
}
function postgresCpuMs(): number {
  if (postmaster === undefined) return 0;
  return postgresChildren().reduce((ms, pid) => ms + processCpuMs(pid), processCpuMs(postmaster, true));
}
/** The postmaster's live children: backends, the checkpointer, the WAL writer… */
function postgresChildren(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry) && Number(procStat(Number(entry))?.[1]) === postmaster)
    .map(Number);
}

/** Starts counting CPU; the function it answers says where it went since. */
function cpuMeter(instance: number, idleInstances: number[]): () => Cores {
  const read = () => ({
    weft: processCpuMs(instance),
    idleWeft: idleInstances.reduce((ms, pid) => ms + processCpuMs(pid), 0),
    proxy: processCpuMs(process.pid),
    // With the children this process has waited for: wrk once it has exited.
    bench: processCpuMs(process.pid, true),
    postgres: postgresCpuMs(),
    busy: machineBusyMs(),
  });
  const before = read();
  const t0 = performance.now();
  return () => {
    const after = read();
    const ms = performance.now() - t0;
    const d = (key: keyof typeof before) => (after[key] - before[key]) / ms;
    const other = d("busy") - d("weft") - d("idleWeft") - d("bench") - d("postgres");
    return {
      weft: d("weft"),
      idleWeft: d("idleWeft"),
      proxy: d("proxy"),
      wrk: d("bench") - d("proxy"),
      postgres: d("postgres"),
      other,
      idle: CORES - d("busy"),
    };
  };
}

const coresText = (c: Cores) =>
  `cores: weft ${c.weft.toFixed(2)}, PostgreSQL ${c.postgres.toFixed(2)}, this process (proxy) ${c.proxy.toFixed(2)}, wrk ${c.wrk.toFixed(2)}, idle instances ${c.idleWeft.toFixed(2)}, other processes ${c.other.toFixed(2)}, idle ${c.idle.toFixed(2)}`;

/**
 * Runs `phase` with a CPU meter; when processes other than the bench's took more than BUSY_CORES (another job on
 * a shared machine), measures it again, up to RETRIES times, as ./cluster.ts does.
 */
async function quietly<T>(instance: number, idleInstances: number[], phase: () => Promise<T>): Promise<T & { cores: Cores; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const meter = cpuMeter(instance, idleInstances);
    const result = await phase();
    const cores = meter();
    busiestOther = Math.max(busiestOther, cores.other);
    if (cores.other <= BUSY_CORES || attempt > RETRIES) return { ...result, cores, attempts: attempt };
    console.log(`    (measured again: other processes took ${cores.other.toFixed(2)} cores)`);
    await Bun.sleep(1000);
  }
}
const BUSY_CORES = 0.2;
const RETRIES = 2;
let busiestOther = 0;

interface Phase extends LoadResult {
  cores: Cores;
  attempts: number;
  /** Client writes per answered call on each of the instance's PostgreSQL connections, most first (through a proxy only). */
  writesPerCall: number[];
  /** `SELECT 1` round trip measured during the phase (50 connections only), ms. */
  loadedRttMs?: number;
}

interface Configuration {
  storage: Storage;
  server: BenchServer;
  url: string;
  phases: Map<number, Phase[]>;
}

async function measurePhase(config: Configuration, others: Configuration[], connections: number, seconds: number): Promise<Phase> {
  const { storage, server } = config;
  const idle = others.map((other) => other.server.proc.pid);
  return await quietly(server.proc.pid, idle, async () => {
    const before = new Map((storage.proxy?.traffic() ?? []).map((c) => [c.id, c.up]));
    // The round trip under load, a second into the phase (a few hundred sequential `SELECT 1` on a connection of its own).
    const loaded = connections === 50 && storage.databaseUrl ? Bun.sleep(1000).then(() => measureRttMs(storage.databaseUrl!)) : undefined;
    const result = await load(config.url, { connections, seconds, ...post });
    const loadedRttMs = await loaded;
    const answered = Math.max(1, result.requests - result.errors);
    const writesPerCall = (storage.proxy?.traffic() ?? [])
      .map((c) => (c.up - (before.get(c.id) ?? 0)) / answered)
      .filter((n) => n >= 0.01)
      .sort((a, b) => b - a);
    return { ...result, writesPerCall, loadedRttMs };
  });
}

async function throughput(): Promise<void> {
  console.log(`\n--- throughput: webhook → set_fields → respond, ${REPEAT} × ${SECONDS} s per figure (the median by req/s), in turns ---`);
  const storages: Storage[] = [];
  const configs: Configuration[] = [];
  try {
    storages.push(sqliteStorage());
    storages.push(await postgresStorage("PostgreSQL direct", undefined));
    storages.push(await postgresStorage("PostgreSQL via proxy, no delay", 0));
    storages.push(await postgresStorage(`PostgreSQL via proxy, ${RTT2_DELAY_MS} ms each way`, RTT2_DELAY_MS));
    storages.push(await postgresStorage(`PostgreSQL via proxy, ${RTT4_DELAY_MS} ms each way`, RTT4_DELAY_MS));
    for (const storage of storages) {
      const server = await startBenchServer(serve, { ...KEEP_RUNS, ...storage.env });
      const { url } = await publishWebhookWorkflow(server.url, "remote-db bench", greetStep(replyStep));
      const probe = await fetch(url, post);
      if (probe.status !== 200) throw new Error(`${storage.name}: the workflow answered ${probe.status} ${await probe.text()}`);
      configs.push({ storage, server, url, phases: new Map() });
      console.log(`${storage.name}: started${storage.rttMs === undefined ? "" : `, SELECT 1 round trip ${f(storage.rttMs)} ms`}`);
    }
    const tool = (await load(configs[0]!.url, { connections: 1, seconds: 1, ...post })).tool;
    console.log(`load generator: ${tool}, on the same cores`);
    for (const connections of LEVELS) {
      for (const config of configs) await load(config.url, { connections, seconds: WARMUP_SECONDS, ...post });
      for (let i = 0; i < REPEAT; i++) {
        for (const config of i % 2 === 0 ? configs : [...configs].reverse()) {
          const phase = await measurePhase(
            config,
            configs.filter((other) => other !== config),
            connections,
            SECONDS,
          );
          config.phases.set(connections, [...(config.phases.get(connections) ?? []), phase]);
          await Bun.sleep(500);
        }
      }
      for (const config of configs) {
        const runs = config.phases.get(connections)!;
        const m = median(runs, (r) => r.requestsPerSecond);
        console.log(
          `${config.storage.name.padEnd(40)} ${String(connections).padStart(3)} connections: ${f(m.requestsPerSecond).padStart(6)} req/s  p50 ${f(m.p50Ms).padStart(5)} ms  p99 ${f(m.p99Ms).padStart(5)} ms  non-2xx ${m.errors}  socket errors ${m.socketErrors}  (req/s of the ${REPEAT}: ${runs.map((r) => f(r.requestsPerSecond)).join(", ")})`,
        );
        const writes = m.writesPerCall.length
          ? `; PostgreSQL client writes per call, by connection: ${m.writesPerCall.map((n) => n.toFixed(3)).join(" + ")}`
          : "";
        console.log(`    ${coresText(m.cores)}${writes}`);
      }
    }
    ownCore = await postgresOnItsOwnCore(configs[0]!, configs[1]!);
  } finally {
    for (const config of configs) await config.server.stop();
    for (const storage of storages) await storage.cleanup();
  }

  const at = (config: Configuration, connections: number) => median(config.phases.get(connections)!, (r) => r.requestsPerSecond);
  const [sqlite, direct, proxied, rtt2, rtt4] = configs as [Configuration, Configuration, Configuration, Configuration, Configuration];
  console.log(
    `\nthroughput summary (${machine()}; instance, PostgreSQL, the proxy, wrk and this script share the cores; RTT: SELECT 1 idle / during the c50 phase)`,
  );
  table(
    [
      "configuration",
      "RTT ms",
      "c10 req/s",
      "p50",
      "p99",
      "÷ proxy",
      "c50 req/s",
      "p50",
      "p99",
      "÷ proxy",
      "c50 cores: weft / PostgreSQL / proxy / other / idle",
      "c50 writes per call",
    ],
    configs.map((config) => {
      const [c10, c50] = [at(config, 10), at(config, 50)];
      const loaded = c50.loadedRttMs === undefined ? "" : ` / ${f(c50.loadedRttMs)}`;
      return [
        config.storage.name,
        `${rttText(config.storage)}${loaded}`,
        f(c10.requestsPerSecond),
        f(c10.p50Ms),
        f(c10.p99Ms),
        pct(c10.requestsPerSecond / at(proxied, 10).requestsPerSecond),
        f(c50.requestsPerSecond),
        f(c50.p50Ms),
        f(c50.p99Ms),
        pct(c50.requestsPerSecond / at(proxied, 50).requestsPerSecond),
        [c50.cores.weft, c50.cores.postgres, c50.cores.proxy, c50.cores.other, c50.cores.idle].map((n) => n.toFixed(2)).join(" / "),
        c50.writesPerCall.length ? c50.writesPerCall.map((n) => n.toFixed(2)).join(" + ") : "-",
      ];
    }),
  );
  console.log("goals");
  const goal = (figure: string, a: number, b: number, min: number) => {
    const ratio = a / b;
    const met = ratio >= min;
    console.log(`  ${figure}: ${pct(ratio)} (${f(a)} vs ${f(b)} req/s), goal ≥ ${pct(min)}: ${met ? "met" : "NOT MET"}`);
    reportGoal({ figure, value: `${pct(ratio)} (${f(a)} vs ${f(b)})`, goal: `≥ ${pct(min)}`, met });
  };
  for (const [config, goals] of [
    [rtt2, { 50: 0.75, 10: 0.45 }],
    [rtt4, { 50: 0.55, 10: 0.25 }],
  ] as const) {
    for (const connections of [50, 10] as const)
      goal(
        `webhook req/s, PostgreSQL at RTT ${rttText(config.storage)} ms ÷ proxy without delay, ${connections} connections`,
        at(config, connections).requestsPerSecond,
        at(proxied, connections).requestsPerSecond,
        goals[connections],
      );
  }
  goal("webhook req/s, PostgreSQL direct ÷ SQLite, 50 connections", at(direct, 50).requestsPerSecond, at(sqlite, 50).requestsPerSecond, 0.9);
  if (ownCore)
    console.log(
      `  (not a goal) the same with PostgreSQL on a core of its own, both instances, wrk and this script on the other: ${pct(ownCore.direct / ownCore.sqlite)} (${f(ownCore.direct)} vs ${f(ownCore.sqlite)} req/s)`,
    );
}

let ownCore: { sqlite: number; direct: number } | undefined;

/**
 * The c50 comparison of SQLite and PostgreSQL direct again, with PostgreSQL's processes on CPU 1 and both
 * instances, wrk (spawned by this process) and this process on CPU 0, as where the database has a host of its
 * own: what the ratio is once PostgreSQL's backends (0.4–0.5 cores at c50) no longer take Weft's cores. Median
 * of REPEAT turns each, alternated; the affinities are given back afterwards. Only on a 2-core machine with
 * `taskset` (util-linux).
 */
async function postgresOnItsOwnCore(sqlite: Configuration, direct: Configuration): Promise<{ sqlite: number; direct: number } | undefined> {
  const taskset = Bun.which("taskset");
  if (!taskset || CORES !== 2 || postmaster === undefined) return undefined;
  const pin = (cpus: string, pids: number[]) => {
    for (const pid of pids) Bun.spawnSync([taskset, "-a", "-p", "-c", cpus, String(pid)], { stdout: "ignore", stderr: "ignore" });
  };
  const ours = [process.pid, sqlite.server.proc.pid, direct.server.proc.pid];
  pin("1", [postmaster, ...postgresChildren()]);
  pin("0", ours);
  const rates = new Map<Configuration, number[]>([
    [sqlite, []],
    [direct, []],
  ]);
  try {
    for (const config of [sqlite, direct]) await load(config.url, { connections: 50, seconds: WARMUP_SECONDS, ...post });
    for (let i = 0; i < REPEAT; i++) {
      for (const config of i % 2 === 0 ? [sqlite, direct] : [direct, sqlite]) {
        rates.get(config)!.push((await load(config.url, { connections: 50, seconds: SECONDS, ...post })).requestsPerSecond);
        await Bun.sleep(500);
      }
    }
  } finally {
    pin("0,1", [postmaster, ...postgresChildren(), ...ours]);
  }
  const middle = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const figures = { sqlite: middle(rates.get(sqlite)!), direct: middle(rates.get(direct)!) };
  console.log(
    `PostgreSQL on a core of its own (CPU 1; both instances, wrk and this script on CPU 0), 50 connections: SQLite ${f(figures.sqlite)} req/s (${rates.get(sqlite)!.map(f).join(", ")}), PostgreSQL direct ${f(figures.direct)} (${rates.get(direct)!.map(f).join(", ")})`,
  );
  return figures;
}

// ------------------------------------------------------------------------------------------ stall

const LIST_PATH = "/api/runs?sort=duration&environment=all&limit=20";
const LIST_CLIENTS = 20;
const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
const tool = () => (Bun.which("wrk") ? "wrk" : "the Bun client (install wrk for accurate figures)");

interface StallFigures {
  storage: Storage;
  idleHealthz: number[];
  healthz: number[];
  /** The bystander's /healthz during the same load: an instance with nothing to do, waiting only for a core. */
  bystander: number[];
  list: LoadResult;
  /** Client writes per list read on each of the instance's PostgreSQL connections, most first (through a proxy only). */
  writesPerRead: number[];
  cores: Cores;
}

/**
 * /healthz of each of `baseUrls` called one after another (5 ms apart) until `until` settles, by a
 * prober in a process of its own (./_healthz-prober.ts: this process runs the latency proxy, whose work would
 * delay the probes it timed): every answer's ms per URL, sorted.
 */
async function probeHealthz(baseUrls: string[], until: Promise<unknown>): Promise<number[][]> {
  const prober = Bun.spawn([process.execPath, join(import.meta.dir, "_healthz-prober.ts"), ...baseUrls], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  try {
    await until;
  } finally {
    prober.stdin.write("stop\n");
    await prober.stdin.end();
  }
  const [out, code] = await Promise.all([new Response(prober.stdout).text(), prober.exited]);
  if (code !== 0) throw new Error(`the /healthz prober exited with ${code}`);
  return JSON.parse(out) as number[][];
}

/**
 * The machine's floor: a second instance (SQLite, empty, no reads) probed beside the measured one. It has no work
 * of its own, so its slowest /healthz is what any process waits for one of the cores while the reads (the
 * instance's reader threads, PostgreSQL's backends, wrk) keep them busy — the part of the measured instance's
 * slowest answer that its event loop did not cause.
 */
async function measureStall(storage: Storage, dataDir: string, bystander: BenchServer): Promise<StallFigures> {
  const server = await spawnBenchServer(serve, { ...KEEP_RUNS, WEFT_DATA_DIR: dataDir, ...storage.env });
  try {
    await firstAnswer(server, () => fetch(`${server.url}/healthz`), 200);
    const total = (await benchApi(server.url)("GET", "/api/runs?environment=all&limit=1")).pagination.total;
    if (total < RUNS) throw new Error(`${storage.name}: the run list counts ${total} runs, not ${RUNS}`);
    const listUrl = `${server.url}${LIST_PATH}`;
    // Idle: once what follows a start has settled (the writer's connections open a second after first use).
    await Bun.sleep(IDLE_SETTLE_MS);
    const [idleHealthz] = await probeHealthz([server.url], Bun.sleep(1000));
    await load(listUrl, { connections: LIST_CLIENTS, seconds: WARMUP_SECONDS, headers: auth });
    const {
      healthz,
      bystander: floor,
      list,
      writesPerRead,
      cores,
    } = await quietly(server.proc.pid, [bystander.proc.pid], async () => {
      const before = new Map((storage.proxy?.traffic() ?? []).map((c) => [c.id, c.up]));
      const listing = load(listUrl, { connections: LIST_CLIENTS, seconds: SECONDS, headers: auth });
      // The prober starts once wrk's connections are open and stops with the load.
      await Bun.sleep(200);
      const [healthz, floor] = await probeHealthz([server.url, bystander.url], listing);
      const list = await listing;
      const writesPerRead = (storage.proxy?.traffic() ?? [])
        .map((c) => (c.up - (before.get(c.id) ?? 0)) / Math.max(1, list.requests))
        .filter((n) => n >= 0.01)
        .sort((a, b) => b - a);
      // wrk has gone, but the reads it left queued are still answered: the next phase or a stop would meet them.
      await Bun.sleep(1000);
      return { healthz, bystander: floor, list, writesPerRead };
    });
    if (list.errors > 0 || list.socketErrors > 0) throw new Error(`${storage.name}: ${list.errors} list reads answered an error, ${list.socketErrors} failed`);
    return { storage, idleHealthz, healthz, bystander: floor, list, writesPerRead, cores };
  } finally {
    await server.stop();
  }
}

/** seedRuns (./history.ts) in a process of its own, as ./prune.ts does: the seeding needs the database to itself. */
function seedInProcess(dataDir: string, count: number): number {
  const script = `const r = (await import("./bench/history.ts")).seedRuns(${JSON.stringify(dataDir)}, ${count}); console.log(JSON.stringify(r.runsPerSecond));`;
  const child = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, stderr: "inherit" });
  if (child.exitCode !== 0) throw new Error(`seeding ${count} runs failed`);
  return Number(child.stdout.toString().trim().split("\n").at(-1));
}

async function stall(): Promise<void> {
  console.log(`\n--- stall: /healthz while ${LIST_CLIENTS} clients read GET ${LIST_PATH} back to back (${tool()}), ${SECONDS} s, ${thousands(RUNS)} runs ---`);
  const { dataDir } = await prepareDataDir();
  const storages: Storage[] = [];
  const figures: StallFigures[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let bystander: BenchServer | undefined;
  try {
    bystander = await spawnBenchServer(serve, KEEP_RUNS);
    await firstAnswer(bystander, () => fetch(`${bystander!.url}/healthz`), 200);
    const seedStarted = performance.now();
    const rate = seedInProcess(dataDir, RUNS);
    console.log(`seeded ${thousands(RUNS)} runs in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${thousands(Math.round(rate))} runs/s)`);
    database = await freshDatabase();
    const copyMs = await copyToPostgres(dataDir, database.url);
    console.log(`copied into PostgreSQL (weft migrate --from --to) in ${(copyMs / 1000).toFixed(1)} s`);
    storages.push(sqliteStorage());
    storages.push(await postgresStorage("PostgreSQL direct", undefined, database.url));
    storages.push(await postgresStorage(`PostgreSQL via proxy, ${RTT2_DELAY_MS} ms each way`, RTT2_DELAY_MS, database.url));
    for (const storage of storages) {
      const measured = await measureStall(storage, dataDir, bystander);
      figures.push(measured);
      console.log(
        `${storage.name.padEnd(40)} /healthz max ${f(measured.healthz.at(-1)!)} ms, p99 ${f(percentile(measured.healthz, 0.99))}, p50 ${f(percentile(measured.healthz, 0.5))} (${measured.healthz.length} calls; idle max ${f(measured.idleHealthz.at(-1)!)}; the idle bystander's max ${f(measured.bystander.at(-1)!)}, p50 ${f(percentile(measured.bystander, 0.5))}); run list ${f(measured.list.requestsPerSecond)} reads/s, p50 ${f(measured.list.p50Ms)} ms, p99 ${f(measured.list.p99Ms)} ms`,
      );
      console.log(`    ${coresText(measured.cores)}`);
    }
  } finally {
    await bystander?.stop();
    for (const storage of storages) await storage.cleanup();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  console.log(`\nstall summary (${machine()}; ${thousands(RUNS)} runs; ${LIST_CLIENTS} clients reading the run list sorted by duration)`);
  table(
    [
      "configuration",
      "RTT ms",
      "/healthz max",
      "p99",
      "p50",
      "calls",
      "idle max",
      "bystander max / p50",
      "list reads/s",
      "list p50",
      "list p99",
      "PostgreSQL writes per read",
      "cores: weft / PostgreSQL / proxy / other / idle",
    ],
    figures.map((s) => [
      s.storage.name,
      rttText(s.storage),
      f(s.healthz.at(-1)!),
      f(percentile(s.healthz, 0.99)),
      f(percentile(s.healthz, 0.5)),
      String(s.healthz.length),
      f(s.idleHealthz.at(-1)!),
      `${f(s.bystander.at(-1)!)} / ${f(percentile(s.bystander, 0.5))}`,
      f(s.list.requestsPerSecond),
      f(s.list.p50Ms),
      f(s.list.p99Ms),
      s.writesPerRead.length ? s.writesPerRead.map((n) => n.toFixed(2)).join(" + ") : "-",
      [s.cores.weft, s.cores.postgres, s.cores.proxy, s.cores.other, s.cores.idle].map((n) => n.toFixed(2)).join(" / "),
    ]),
  );
  console.log("goals");
  for (const s of figures) {
    const slowest = s.healthz.at(-1)!;
    const where = s.storage.rttMs === undefined ? "SQLite" : s.storage.proxy ? `PostgreSQL at RTT ${rttText(s.storage)} ms` : "PostgreSQL direct";
    const figure = `/healthz slowest during ${LIST_CLIENTS} run-list reads, ${thousands(RUNS)} runs, ${where}`;
    const floor = s.bystander.at(-1)!;
    console.log(`  ${figure}: ${f(slowest)} ms, goal < 20 ms: ${slowest < 20 ? "met" : "NOT MET"} (an idle instance beside it: ${f(floor)} ms)`);
    reportGoal({ figure, value: `${f(slowest)} ms`, goal: "< 20 ms", met: slowest < 20 });
  }
}

const started = performance.now();
console.log(`machine: ${machine()} (${cpus()[0]?.model ?? "?"}); part: ${PART}; Bun ${Bun.version}; PostgreSQL fsync on; SQLite synchronous=FULL`);
try {
  if (PART !== "stall") await throughput();
  if (PART !== "throughput") await stall();
} finally {
  await stopPostgres();
}
console.log(
  `processes other than the bench's took up to ${busiestOther.toFixed(2)} cores during a phase${busiestOther > BUSY_CORES ? " (after retries): the figures are skewed by other work on the machine" : ""}; done in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
process.exit();
