/**
 * Cluster figures (issue 18): one workflow on SQLite and on PostgreSQL with one, two and three `weft serve`
 * instances sharing one database, all on this machine. The instances, PostgreSQL, wrk and this script share
 * the same cores: a second instance brings no CPU of its own, so the figures show what a cluster costs and
 * whether it scales without falling over, not what it gains on several machines.
 *
 * - sync: webhook → data.set_fields → webhook.respond (the reply waits for the run), --connections spread
 *   evenly over the instances' ports (wrk, one thread per instance): req/s, p50/p99.
 * - engine: the same trigger and step with no reply: 202 once the run is stored; runs completed per second
 *   during the phase (counted through the API), then how fast the backlog left at its end drains.
 * - the same two with `--role api` and one or two workers (the api instance takes all the load).
 * - takeover: three instances, a paced load on webhook → set_fields → a 1 s delay (so the instance killed
 *   holds runs), one SIGKILLed; the time from the kill until the survivors hold every unfinished run it owned
 *   and until all of them have finished (read from the runs table's owner and status), against lease + 5 s.
 *   The killed instance runs under another host name (a UTS namespace) so that the survivors wait out its
 *   lease as for another machine's: on one host they see its pid gone at their next heartbeat.
 *
 * Each phase also prints where the CPU went (the instances, PostgreSQL, wrk with this script, other
 * processes, idle) and what PostgreSQL's backends were doing (sampled from pg_stat_activity). A phase during
 * which other processes took more than 0.2 cores is measured again (--retries, 2): the machine may be shared.
 *
 * PostgreSQL: a throwaway server (test/support/postgres.ts) with fsync on, as SQLite's default
 * (WEFT_DB_SYNCHRONOUS=FULL) syncs its commits (--pg-fsync off: the tests' setting); a fresh database for
 * each configuration. Prints a skip line and exits 0 without PostgreSQL (Debian package postgresql).
 *
 *   bun bench/cluster.ts [--seconds 10] [--repeat 1] [--connections 50] [--takeover-leases 3,30]
 *     [--takeover-rate 150] [--pg-fsync on|off] [--retries 2] [--only sqlite,pg1,pg2,pg3,api1,api2]
 *     [--statements: count the statements per call with pg_stat_statements]
 *     [--server-flags="--cpu-prof-md --cpu-prof-dir=/tmp/prof": extra flags for each instance's bun]
 */
import { SQL } from "bun";
import { copyFileSync, mkdtempSync, readdirSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postgresBinaries, startPostgres } from "../test/support/postgres";
import {
  type BenchServer,
  type LoadResult,
  greetStep,
  load,
  machine,
  machineBusyMs,
  processCpuMs,
  procStat,
  publishWebhookWorkflow,
  ROOT,
  replyStep,
  runCount,
  startBenchServer,
} from "./_support";

if (!postgresBinaries()) {
  console.log("bench/cluster.ts skipped: PostgreSQL is not installed (Debian package postgresql)");
  process.exit(0);
}

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: "string", default: "10" },
    repeat: { type: "string", default: "1" },
    connections: { type: "string", default: "50" },
    "takeover-leases": { type: "string", default: "3,30" },
    "takeover-rate": { type: "string", default: "150" },
    "pg-fsync": { type: "string", default: "on" },
    only: { type: "string", default: "" },
    statements: { type: "boolean", default: false },
    "server-flags": { type: "string", default: "" },
    retries: { type: "string", default: "2" },
  },
});
const SECONDS = Number(values.seconds);
const REPEAT = Math.max(1, Number(values.repeat));
const CONNECTIONS = Number(values.connections);
const LEASES = values["takeover-leases"]!.split(",").filter(Boolean).map(Number);
const RATE = Number(values["takeover-rate"]);
const CORES = cpus().length;
const RETRIES = Math.max(0, Number(values.retries));
/** Count statements per call with pg_stat_statements (loaded into the throwaway server). */
const STATEMENTS = values.statements === true;
const SERVER_FLAGS = values["server-flags"]!.split(" ").filter(Boolean);
/** How long a backlog left by an engine phase may drain before the next phase goes on without it. */
const DRAIN_SECONDS = Math.max(5, SECONDS);
const UNFINISHED = ["pending", "running", "paused"];

type Role = "all" | "api" | "worker";
interface Setup {
  key: string;
  name: string;
  roles: Role[];
  sqlite?: boolean;
}
const ALL_SETUPS: Setup[] = [
  { key: "sqlite", name: "SQLite, 1 instance", roles: ["all"], sqlite: true },
  { key: "pg1", name: "PostgreSQL, 1 instance", roles: ["all"] },
  { key: "pg2", name: "PostgreSQL, 2 instances", roles: ["all", "all"] },
  { key: "pg3", name: "PostgreSQL, 3 instances", roles: ["all", "all", "all"] },
  { key: "api1", name: "PostgreSQL, api + 1 worker", roles: ["api", "worker"] },
  { key: "api2", name: "PostgreSQL, api + 2 workers", roles: ["api", "worker", "worker"] },
];
const SETUPS = ALL_SETUPS.filter((s) => !values.only || values.only.split(",").includes(s.key));

// The whole run is bounded: each setup's phases and drains, each takeover's lease and its margin, start-ups.
const boundSeconds = 60 + SETUPS.length * (2 * REPEAT * (1 + RETRIES) * (SECONDS + DRAIN_SECONDS) + 40) + LEASES.reduce((n, lease) => n + 2 * lease + 60, 0);
const started = performance.now();

const live = new Set<BenchServer>();
let stopPostgres: (() => Promise<void>) | undefined;
const cleanUp = async () => {
  for (const server of live) server.proc.kill("SIGKILL");
  await stopPostgres?.();
};
const bound = setTimeout(async () => {
  console.log(`bench/cluster.ts: still running after its bound of ${boundSeconds} s; stopping`);
  await cleanUp();
  process.exit(1);
}, boundSeconds * 1000);
process.on("SIGINT", async () => {
  await cleanUp();
  process.exit(130);
});

const pg = await startPostgres({
  settings: { fsync: values["pg-fsync"]!, ...(STATEMENTS ? { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all" } : {}) },
});
stopPostgres = () => pg.stop();
const admin = new SQL(pg.url, { adapter: "postgres", max: 1 });
const pgVersion = (await admin`SHOW server_version`)[0].server_version;
const fsync = (await admin`SHOW fsync`)[0].fsync;
let databases = 0;
async function freshDatabase(): Promise<string> {
  const name = `weft_bench_${++databases}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = `postgres://${pg.user}:${pg.password}@${pg.host}:${pg.port}/${name}`;
  if (STATEMENTS) {
    const db = new SQL(url, { adapter: "postgres", max: 1 });
    await db`CREATE EXTENSION pg_stat_statements`;
    await db.close();
  }
  return url;
}

/**
 * Another host name for one process (a UTS namespace, as root): the instances on this host then see it as
 * another machine's, whose runs wait out its lease, instead of taking them over at their next heartbeat as
 * soon as its pid is gone. Undefined where unshare is missing or refused.
 */
const otherHost = (() => {
  const command = ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', "weft-bench-elsewhere"];
  return Bun.which("unshare") &&
    Bun.spawnSync([...command, "hostname"])
      .stdout.toString()
      .trim() === "weft-bench-elsewhere"
    ? command
    : undefined;
})();

/**
 * Starts the instances: the first alone (it migrates and writes the encryption key), the others with its key.
 * The instance at `elsewhere` (an index) runs under another host name when it can.
 */
async function startInstances(roles: Role[], env: Record<string, string>, elsewhere = -1): Promise<BenchServer[]> {
  const serve = (role: Role, i: number) => [
    ...(i === elsewhere ? (otherHost ?? []) : []),
    process.execPath,
    ...SERVER_FLAGS,
    `${ROOT}/src/main.ts`,
    "serve",
    "--role",
    role,
  ];
  const first = await startBenchServer(serve(roles[0]!, 0), env);
  live.add(first);
  const others = await Promise.all(
    roles.slice(1).map(async (role, i) => {
      const dataDir = mkdtempSync(join(tmpdir(), "weft-bench-"));
      copyFileSync(join(first.dataDir, "encryption.key"), join(dataDir, "encryption.key"));
      const server = await startBenchServer(serve(role, i + 1), { ...env, WEFT_DATA_DIR: dataDir });
      live.add(server);
      return server;
    }),
  );
  return [first, ...others];
}

/** SIGTERM, and SIGKILL for an instance still stopping after 5 s (one with a backlog finishes its runs). */
async function stopInstances(servers: BenchServer[]) {
  await Promise.all(
    servers.map(async (server) => {
      server.proc.kill("SIGTERM");
      const timer = setTimeout(() => server.proc.kill("SIGKILL"), 5_000);
      await server.proc.exited;
      clearTimeout(timer);
      live.delete(server);
    }),
  );
}

const body = JSON.stringify({ name: "Ada", n: 21 });
const post = { method: "POST", headers: { "content-type": "application/json" }, body };
const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");
const median = <T>(items: T[], by: (item: T) => number): T => [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)]!;

// PostgreSQL's CPU: the postmaster with the backends it has reaped, and its live children.
const postmaster = Number(procStat((await admin`SELECT pg_backend_pid() AS pid`)[0].pid)![1]);
function postgresCpuMs(): number {
  let ms = processCpuMs(postmaster, true);
  for (const entry of readdirSync("/proc")) {
    if (/^\d+$/.test(entry) && Number(procStat(Number(entry))?.[1]) === postmaster) ms += processCpuMs(Number(entry));
  }
  return ms;
}

/** Above this many cores taken by other processes during a phase, the phase is measured again (up to --retries times). */
const BUSY_CORES = 0.2;
/** The most CPU, in cores, that processes other than these took during a phase kept: what skews the figures. */
let busiestOther = 0;

/** Where a phase's CPU went, in cores: the instances, PostgreSQL, wrk with this script, other processes, idle. */
function cpuMeter(servers: BenchServer[]) {
  const parts = () => ({
    instances: servers.reduce((n, s) => n + processCpuMs(s.proc.pid), 0),
    postgres: postgresCpuMs(),
    load: processCpuMs(process.pid, true),
    busy: machineBusyMs(),
  });
  const before = parts();
  const t0 = performance.now();
  return () => {
    const after = parts();
    const elapsed = performance.now() - t0;
    const cores = (ms: number) => (ms / elapsed).toFixed(2);
    const d = (key: keyof typeof before) => after[key] - before[key];
    const other = d("busy") - d("instances") - d("postgres") - d("load");
    return {
      other: other / elapsed,
      line: `CPU in cores of ${CORES}: instances ${cores(d("instances"))}, PostgreSQL ${cores(d("postgres"))}, wrk + bench ${cores(d("load"))}, other processes ${cores(other)}, idle ${cores(elapsed * CORES - d("busy"))}`,
    };
  };
}

/**
 * What PostgreSQL does for a phase: commits per webhook call (pg_stat_database), with --statements the
 * statements per call and the most frequent ones (pg_stat_statements), and what its client backends are doing,
 * sampled every 50 ms from pg_stat_activity: on average how many are running, waiting for a lock or the WAL,
 * or idle inside a transaction (waiting for the instance that opened it: its next statement is a round trip away).
 */
function postgresWatch(url: string | undefined) {
  if (!url) return async (_calls: number) => [];
  const sql = new SQL(url, { adapter: "postgres", max: 1 });
  const seen = new Map<string, number>();
  let samples = 0;
  let sampling = true;
  const commits = async () => Number((await sql`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)[0].xact_commit);
  const ready = (async () => {
    if (STATEMENTS) await sql`SELECT pg_stat_statements_reset()`;
    return await commits();
  })();
  const loop = (async () => {
    await ready;
    while (sampling) {
      const rows = await sql`SELECT CASE WHEN state = 'active' THEN coalesce(wait_event_type || ':' || wait_event, 'running') ELSE state END AS what,
        count(*)::int AS n FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction') GROUP BY 1`;
      for (const row of rows as Array<{ what: string; n: number }>) seen.set(row.what, (seen.get(row.what) ?? 0) + row.n);
      samples++;
      await Bun.sleep(50);
    }
  })();
  return async (calls: number) => {
    sampling = false;
    await loop;
    // The sampler's own queries commit too: about 20 a second, against thousands.
    const perCall = (n: number) => (n / Math.max(1, calls)).toFixed(1);
    const lines = [`PostgreSQL: ${perCall((await commits()) - (await ready))} commits per webhook call`];
    if (STATEMENTS) {
      const rows = (await sql`SELECT calls::int AS calls, query FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_%' ORDER BY calls DESC`) as Array<{
        calls: number;
        query: string;
      }>;
      const total = rows.reduce((n, r) => n + r.calls, 0);
      const top = rows.slice(0, 6).map((r) => `${perCall(r.calls)} × ${r.query.replace(/\s+/g, " ").slice(0, 70)}`);
      lines[0] += `, ${perCall(total)} statements per call; the most frequent: ${top.join("; ")}`;
    }
    await sql.close();
    const parts = [...seen].sort((a, b) => b[1] - a[1]).map(([what, n]) => `${what} ${(n / samples).toFixed(2)}`);
    lines.push(`PostgreSQL backends on average (${samples} samples): ${parts.join(", ") || "none busy"}`);
    return lines;
  };
}

/**
 * Measures a phase with its CPU and PostgreSQL's waits; again, after `settle`, while other processes on the
 * machine took more than BUSY_CORES during it (another job's burst would be read as Weft's figure).
 */
async function quietly<T extends { requests: number }>(
  servers: BenchServer[],
  databaseUrl: string | undefined,
  phase: () => Promise<T>,
  settle: () => Promise<unknown> = async () => undefined,
): Promise<T & { notes: string[] }> {
  for (let attempt = 0; ; attempt++) {
    const cpu = cpuMeter(servers);
    const watch = postgresWatch(databaseUrl);
    const result = await phase();
    const dead = servers.find((server) => server.proc.exitCode !== null || server.proc.signalCode !== null);
    if (dead)
      throw new Error(
        `an instance (pid ${dead.proc.pid}) exited during the phase (${dead.proc.signalCode ?? `code ${dead.proc.exitCode}`}); its error is above`,
      );
    const used = cpu();
    const postgres = await watch(result.requests);
    if (used.other <= BUSY_CORES || attempt >= RETRIES) {
      busiestOther = Math.max(busiestOther, used.other);
      return { ...result, notes: [used.line, ...postgres] };
    }
    console.log(`    (measured again: other processes took ${used.other.toFixed(2)} cores)`);
    await settle();
  }
}

interface SetupResult {
  setup: Setup;
  sync: LoadResult;
  accepted: number;
  completed: number;
  /** Runs/s finished after the load stopped, when it left a backlog. */
  drainRate: number | undefined;
  /** Calls answered with an error and runs that failed (none should: the workflow cannot fail). */
  errors: number;
}

async function measureSetup(setup: Setup): Promise<SetupResult> {
  const env: Record<string, string> = setup.sqlite ? { WEFT_DB_SYNCHRONOUS: "FULL" } : { WEFT_DATABASE_URL: await freshDatabase() };
  const servers = await startInstances(setup.roles, env);
  const front = servers.filter((_, i) => setup.roles[i] !== "worker");
  const per = setup.roles.length === 1 ? "" : `, ${front.length === 1 ? "all on the api instance" : `${Math.floor(CONNECTIONS / front.length)} per instance`}`;
  const database = env.WEFT_DATABASE_URL?.split("/").pop();
  const connections = database
    ? `; ${(await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${database} AND backend_type = 'client backend'`)[0].n} PostgreSQL connections open`
    : "";
  console.log(`\n${setup.name} (${setup.roles.join(" + ")}${connections})`);
  const show = (...lines: string[]) => {
    for (const line of lines.filter(Boolean)) console.log(`    ${line}`);
  };
  try {
    // Sync: the reply waits for the run.
    const syncFlow = await publishWebhookWorkflow(servers[0]!.url, "cluster sync", greetStep(replyStep));
    const urls = front.map((s) => syncFlow.url.replace(servers[0]!.url, s.url));
    const probe = await fetch(urls[urls.length - 1]!, post);
    const answer = await probe.text();
    if (probe.status !== 200) throw new Error(`sync probe: ${probe.status} ${answer}`);
    await load(urls, { connections: CONNECTIONS, seconds: 2, ...post });
    const syncRuns: Array<LoadResult & { notes: string[] }> = [];
    for (let i = 0; i < REPEAT; i++)
      syncRuns.push(await quietly(servers, env.WEFT_DATABASE_URL, () => load(urls, { connections: CONNECTIONS, seconds: SECONDS, ...post })));
    const sync = median(syncRuns, (r) => r.requestsPerSecond);
    const range = REPEAT > 1 ? ` (median of ${REPEAT}, ${syncRuns.map((r) => r.requestsPerSecond.toFixed(0)).join(", ")})` : "";
    console.log(
      `  sync webhook → set_fields → respond: ${sync.requestsPerSecond.toFixed(0)} req/s${range}, p50 ${sync.p50Ms.toFixed(1)} ms, p99 ${sync.p99Ms.toFixed(1)} ms; ${sync.connections} connections${per}; non-2xx ${syncRuns.reduce((n, r) => n + r.errors, 0)}, socket errors ${syncRuns.reduce((n, r) => n + r.socketErrors, 0)}`,
    );
    show(...sync.notes);

    // Engine: 202 once stored; count the runs that complete while the load runs, then let the backlog drain.
    const asyncFlow = await publishWebhookWorkflow(servers[0]!.url, "cluster async", greetStep());
    const asyncUrls = front.map((s) => asyncFlow.url.replace(servers[0]!.url, s.url));
    const count = (status?: string) => runCount(front[0]!.url, asyncFlow.id, status);
    const drain = async () => {
      const total = await count();
      const t0 = performance.now();
      const start = await count("completed");
      let done = start;
      while (done < total && performance.now() - t0 < DRAIN_SECONDS * 1000) {
        await Bun.sleep(250);
        done = (await count("completed")) + (await count("failed"));
      }
      return { backlog: total - start, drained: done - start, drainSeconds: (performance.now() - t0) / 1000 };
    };
    const phases: Array<{
      accepted: number;
      completed: number;
      errors: number;
      backlog: number;
      drained: number;
      drainSeconds: number;
      notes: string[];
    }> = [];
    for (let i = 0; i < REPEAT; i++) {
      const measured = await quietly(
        servers,
        env.WEFT_DATABASE_URL,
        async () => {
          const before = await count("completed");
          const result = await load(asyncUrls, { connections: CONNECTIONS, seconds: SECONDS, ...post });
          const completed = ((await count("completed")) - before) / SECONDS;
          return { accepted: result.requestsPerSecond, completed, errors: result.errors, requests: result.requests };
        },
        drain,
      );
      phases.push({ ...measured, ...(await drain()) });
    }
    const engine = median(phases, (p) => p.completed);
    const runsRange = REPEAT > 1 ? ` (median of ${REPEAT}, ${phases.map((p) => p.completed.toFixed(0)).join(", ")})` : "";
    const drainRate = engine.backlog > 0 ? engine.drained / engine.drainSeconds : undefined;
    const backlog =
      drainRate === undefined
        ? "no backlog at its end"
        : `a backlog of ${engine.backlog} at its end, ${engine.drained} drained in ${engine.drainSeconds.toFixed(1)} s (${drainRate.toFixed(0)} runs/s with no intake)`;
    console.log(
      `  engine (async webhook → set_fields): ${engine.completed.toFixed(0)} runs completed/s during the load${runsRange}, ${engine.accepted.toFixed(0)} calls accepted/s; ${backlog}`,
    );
    show(...engine.notes);
    const failedRuns = (await runCount(front[0]!.url, syncFlow.id, "failed")) + (await count("failed"));
    const errors = syncRuns.reduce((n, r) => n + r.errors, 0) + phases.reduce((n, p) => n + p.errors, 0) + failedRuns;
    if (errors > 0) console.log(`  ERRORS: ${errors} calls answered with an error or runs failed (${failedRuns} failed runs): see the instances' log above`);
    return { setup, sync, accepted: engine.accepted, completed: engine.completed, drainRate, errors };
  } finally {
    await stopInstances(servers);
  }
}

/** Seconds after the kill, or that it did not happen before the deadline. */
const after = (seconds: number) => (Number.isNaN(seconds) ? "not before the deadline" : `${seconds.toFixed(1)} s after the kill`);

interface Takeover {
  lease: number;
  heartbeat: number;
  held: number;
  claimedAfter: number;
  finishedAfter: number;
  statuses: string;
}

/** Three instances under a paced load; one SIGKILLed; how long until its unfinished runs are held elsewhere and finished. */
async function measureTakeover(lease: number): Promise<Takeover> {
  const heartbeat = Math.max(1, Math.floor(lease / 3));
  const url = await freshDatabase();
  const servers = await startInstances(
    ["all", "all", "all"],
    { WEFT_DATABASE_URL: url, WEFT_HEARTBEAT_SECONDS: String(heartbeat), WEFT_LEASE_SECONDS: String(lease) },
    2,
  );
  const db = new SQL(url, { adapter: "postgres", max: 1 });
  try {
    const delay = { name: "wait", type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds: 1 } };
    const flow = await publishWebhookWorkflow(servers[0]!.url, "cluster takeover", greetStep(delay));
    const victim = servers[2]!;
    const [row] = await db`SELECT id FROM instances WHERE pid = ${victim.proc.pid}`;
    const victimId = String(row.id);
    let alive = servers;
    let sending = true;
    const tally = { accepted: 0, refused: 0, lost: 0 };
    const sender = (async () => {
      const pending = new Set<Promise<void>>();
      let next = performance.now();
      for (let n = 0; sending; n++) {
        const target = alive[n % alive.length]!;
        const call: Promise<void> = fetch(flow.url.replace(servers[0]!.url, target.url), post)
          .then(async (res) => {
            await res.arrayBuffer();
            if (res.status === 202) tally.accepted++;
            else tally.refused++;
          })
          .catch(() => {
            tally.lost++;
          })
          .finally(() => pending.delete(call));
        pending.add(call);
        next += 1000 / RATE;
        await Bun.sleep(Math.max(0, next - performance.now()));
      }
      await Promise.all(pending);
    })();
    // Long enough for every instance to have runs paused in the delay and to have beaten at least twice.
    await Bun.sleep(Math.max(3, 2 * heartbeat + 1) * 1000);
    const killedAt = performance.now();
    victim.proc.kill("SIGKILL");
    alive = servers.slice(0, 2);
    await victim.proc.exited;
    live.delete(victim);
    const left = (await db`SELECT id FROM runs WHERE owner = ${victimId} AND status IN ${db(UNFINISHED)}`).map((r: { id: string }) => r.id);
    let claimedAfter = Number.NaN;
    let finishedAfter = Number.NaN;
    const deadline = killedAt + (lease + heartbeat + 20) * 1000;
    while (left.length > 0 && performance.now() < deadline) {
      const [state] = await db`SELECT count(*) FILTER (WHERE owner = ${victimId})::int AS held,
        count(*) FILTER (WHERE status IN ${db(UNFINISHED)})::int AS unfinished FROM runs WHERE id IN ${db(left)}`;
      const now = (performance.now() - killedAt) / 1000;
      if (state.held === 0 && Number.isNaN(claimedAfter)) claimedAfter = now;
      if (state.unfinished === 0) {
        finishedAfter = now;
        break;
      }
      await Bun.sleep(100);
    }
    sending = false;
    await sender;
    const statuses =
      left.length === 0
        ? "none"
        : (await db`SELECT status, count(*)::int AS n FROM runs WHERE id IN ${db(left)} GROUP BY status ORDER BY status`)
            .map((r: { status: string; n: number }) => `${r.n} ${r.status}`)
            .join(", ");
    console.log(
      `\ntakeover, lease ${lease} s (heartbeat ${heartbeat} s), ${RATE} calls/s over 3 instances, one SIGKILLed (${otherHost ? "running under another host name, so the lease is waited out as for another machine" : "on this host: the survivors see its pid gone and need not wait out the lease"}): it held ${left.length} unfinished runs (paused in the 1 s delay or about to run); the survivors held them all ${after(claimedAfter)}, all finished ${after(finishedAfter)} (${statuses}); goal ≤ lease + 5 s = ${lease + 5} s: ${finishedAfter <= lease + 5 ? "PASS" : "MISS"}`,
    );
    console.log(`  calls: ${tally.accepted} accepted, ${tally.refused} refused, ${tally.lost} lost with the connection (to the killed instance)`);
    return { lease, heartbeat, held: left.length, claimedAfter, finishedAfter, statuses };
  } finally {
    await db.close();
    await stopInstances(servers.filter((s) => live.has(s)));
  }
}

try {
  console.log(
    `machine: ${machine()} (${cpus()[0]?.model ?? "?"}), load average ${loadAverage()}; PostgreSQL ${pgVersion} on 127.0.0.1, fsync=${fsync}; SQLite with WEFT_DB_SYNCHRONOUS=FULL`,
  );
  console.log(
    `every instance, PostgreSQL, wrk and this script share these ${CORES} cores; ${SECONDS} s per phase, ${REPEAT === 1 ? "one phase" : `median of ${REPEAT}`}, ${CONNECTIONS} connections (rounded down to a multiple of the instances taking load); bound ${boundSeconds} s`,
  );
  const results: SetupResult[] = [];
  const failures: string[] = [];
  const attempt = async <T>(what: string, measure: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await measure();
    } catch (error) {
      failures.push(`${what}: ${(error as Error).message}`);
      console.log(`  FAILED, left out of the summary: ${(error as Error).message}`);
      return undefined;
    }
  };
  for (const setup of SETUPS) {
    const result = await attempt(setup.name, () => measureSetup(setup));
    if (result) results.push(result);
  }
  const takeovers: Takeover[] = [];
  for (const lease of LEASES) {
    const result = await attempt(`takeover, lease ${lease} s`, () => measureTakeover(lease));
    if (result) takeovers.push(result);
  }

  console.log(`\nsummary (${machine()}: the instances, PostgreSQL and the load generator share ${CORES} cores)`);
  console.log(
    `  ${"configuration".padEnd(30)}${"sync req/s".padStart(11)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"runs/s".padStart(9)}${"202/s".padStart(9)}${"drain/s".padStart(9)}`,
  );
  for (const r of results)
    console.log(
      `  ${r.setup.name.padEnd(30)}${r.sync.requestsPerSecond.toFixed(0).padStart(11)}${r.sync.p50Ms.toFixed(1).padStart(9)}${r.sync.p99Ms.toFixed(1).padStart(9)}${r.completed.toFixed(0).padStart(9)}${r.accepted.toFixed(0).padStart(9)}${(r.drainRate === undefined ? "-" : r.drainRate.toFixed(0)).padStart(9)}${r.errors ? `  ! ${r.errors} errors` : ""}`,
    );
  const by = (key: string) => results.find((r) => r.setup.key === key);
  const ratio = (what: string, a: SetupResult | undefined, b: SetupResult | undefined, goal: number) => {
    if (!a || !b) return;
    const line = (label: string, x: number, y: number) => {
      const r = x / y;
      const word = r >= goal ? "PASS" : r >= goal * 0.95 ? "MISS (within the ±5 % a phase varies)" : "MISS";
      return `${label} ${goal === 1 ? `${r.toFixed(2)}×` : `${(100 * r).toFixed(0)} %`} ${word}`;
    };
    console.log(
      `  ${what} (goal ${goal === 1 ? "≥ 1×" : `≥ ${100 * goal} %`}): ${line("sync", a.sync.requestsPerSecond, b.sync.requestsPerSecond)}, ${line("engine", a.completed, b.completed)}`,
    );
  };
  console.log("goals");
  ratio("PostgreSQL 1 instance / SQLite", by("pg1"), by("sqlite"), 0.5);
  ratio("PostgreSQL 2 instances / 1", by("pg2"), by("pg1"), 1);
  ratio("PostgreSQL 3 instances / 2", by("pg3"), by("pg2"), 1);
  ratio("api + 2 workers / api + 1 worker", by("api2"), by("api1"), 1);
  for (const t of takeovers)
    console.log(
      `  takeover after SIGKILL, lease ${t.lease} s, heartbeat ${t.heartbeat} s (goal ≤ lease + 5 s = ${t.lease + 5} s): ${after(t.finishedAfter)} ${t.finishedAfter <= t.lease + 5 ? "PASS" : "MISS"} (${t.held} runs)`,
    );
  console.log(
    `processes other than the instances, PostgreSQL, wrk and this script took up to ${busiestOther.toFixed(2)} cores during a phase${busiestOther > BUSY_CORES ? ": the figures are skewed by other work on the machine" : ""}`,
  );
  for (const failure of failures) console.log(`FAILED: ${failure}`);
  process.exitCode = failures.length ? 1 : 0;
  console.log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s; load average now ${loadAverage()}`);
} finally {
  clearTimeout(bound);
  for (const server of [...live]) await stopInstances([server]);
  await admin.close();
  await pg.stop();
}
process.exit();
