/** Shared by benchmarks: start a server, drive load with wrk when present, read RSS. */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve } from "node:path";

// A benchmark's data directories, wrk scripts and spawned servers' files go into one temporary directory,
// removed when it exits (a bench run writes hundreds of megabytes of runs).
const scratch = mkdtempSync(join(tmpdir(), "weft-bench-"));
process.env.TMPDIR = scratch;
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

export const ROOT = resolve(import.meta.dir, "..");
export const BENCH_TOKEN = "weft_bench_token_0123456789abcdef";

/** How long a server is left alone before its idle RSS is read (benches engine and peers). */
export const IDLE_SETTLE_MS = 2_000;

/** One figure a bench measured against a goal the product has set itself (issue 19's "Done when"). */
export interface GoalFigure {
  /** What was measured, with where: "GET /api/runs p95, slowest figure, 1,000,000 runs (sqlite)". */
  figure: string;
  /** The measurement as printed: "4.98 ms (status=failed middle page)". */
  value: string;
  /** The goal as printed: "< 20 ms". */
  goal: string;
  met: boolean;
}

/**
 * Hands a goal figure to `npm run bench` (bench/run.ts), which prints every bench's figures in one table when
 * the last bench has run, so one sitting shows each goal beside its measurement. A bench run on its own
 * (no WEFT_BENCH_GOALS) only prints its own output.
 */
export function reportGoal(figure: GoalFigure): void {
  const file = process.env.WEFT_BENCH_GOALS;
  if (file) appendFileSync(file, `${JSON.stringify({ ...figure, bench: Bun.main.split("/").pop() })}\n`);
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024;
}

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/**
 * Spawns a server and returns at once, without waiting for it to answer (`spawned` is when, for timing the
 * first answer). A fresh data directory unless `env` names one with WEFT_DATA_DIR.
 */
export async function spawnBenchServer(command: string[], env: Record<string, string> = {}) {
  const port = await freePort();
  const dataDir = env.WEFT_DATA_DIR ?? mkdtempSync(join(tmpdir(), "weft-bench-"));
  const spawned = performance.now();
  const proc = Bun.spawn(command, {
    cwd: ROOT,
    env: {
      ...process.env,
      WEFT_PORT: String(port),
      WEFT_DATA_DIR: dataDir,
      WEFT_BOOTSTRAP_TOKEN: BENCH_TOKEN,
      WEFT_LOG_LEVEL: "warn",
      WEFT_RATE_LIMIT: "0",
      WEFT_FLOOD_LIMIT: "0",
      ...env,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    proc,
    dataDir,
    spawned,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

export type BenchServer = Awaited<ReturnType<typeof spawnBenchServer>>;

/** Spawns a server and waits (up to 20 s) until /healthz answers; `coldStartMs` is how long that took. */
export async function startBenchServer(command: string[], env: Record<string, string> = {}) {
  const server = await spawnBenchServer(command, env);
  for (;;) {
    try {
      if ((await fetch(`${server.url}/healthz`)).ok) break;
    } catch {}
    if (performance.now() - server.spawned > 20_000) throw new Error("server did not start");
    await Bun.sleep(1);
  }
  return { ...server, coldStartMs: performance.now() - server.spawned };
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  tool: string /** Completed requests. */;
  requests: number;
  /** Connections that failed to connect, read, write or timed out (wrk's 2 s timeout: such a request has no latency). */
  socketErrors: number;
  /** Connections actually open: `connections` rounded down to a multiple of the number of URLs. */
  connections: number;
}

/**
 * Drives `connections` concurrent clients for `seconds` with wrk (apt install wrk), else a Bun client.
 * Several URLs (the same path on several servers) share the connections evenly: wrk gets a thread per URL,
 * each connected to its own server, and reports the latencies of all of them together.
 */
export async function load(
  url: string | string[],
  options: { connections: number; seconds: number; method?: string; headers?: Record<string, string>; body?: string },
): Promise<LoadResult> {
  const urls = typeof url === "string" ? [url] : url;
  const parsed = urls.map((u) => new URL(u));
  if (urls.length === 0 || new Set(parsed.map((u) => u.pathname + u.search)).size !== 1)
    throw new Error(`load: one path on one or more servers, not ${urls.join(", ")}`);
  const connections = urls.length === 1 ? options.connections : Math.max(1, Math.floor(options.connections / urls.length)) * urls.length;
  const wrk = Bun.which("wrk");
  if (wrk) {
    const script = join(mkdtempSync(join(tmpdir(), "wrk-")), "req.lua");
    const headerLines = Object.entries(options.headers ?? {})
      .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
      .join("\n");
    // Thread n connects to server n (wrk splits the connections evenly over its threads).
    const targets = parsed.map((u) => `{${JSON.stringify(u.hostname)}, ${JSON.stringify(u.port)}}`);
    const spread =
      urls.length === 1
        ? ""
        : `local targets = {${targets.join(", ")}}\nlocal counter = 0\nfunction setup(thread)\n  local t = targets[counter % #targets + 1]\n  counter = counter + 1\n  thread.addr = wrk.lookup(t[1], t[2])[1]\nend\n`;
    await Bun.write(
      script,
      `wrk.method = ${JSON.stringify(options.method ?? "GET")}\n${headerLines}\n${options.body ? `wrk.body = ${JSON.stringify(options.body)}` : ""}\n${spread}`,
    );
    // wrk refuses more threads than connections.
    const threads = urls.length === 1 ? Math.min(2, connections) : urls.length;
    // Not spawnSync: the caller's event loop keeps running (a sampler may watch the servers meanwhile).
    const proc = Bun.spawn([wrk, `-t${threads}`, `-c${connections}`, `-d${options.seconds}s`, "--latency", "-s", script, urls[0]!], { stdout: "pipe" });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
    const ms = (label: string) => {
      const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out);
      if (!m) return NaN;
      const v = Number(m[1]);
      return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
    };
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const socketErrors = socket ? socket.slice(1).reduce((n, v) => n + Number(v), 0) : 0;
    return { requestsPerSecond: rps, p50Ms: ms("50%"), p99Ms: ms("99%"), errors: non2xx, tool: "wrk", requests, socketErrors, connections };
  }
  const latencies: number[] = [];
  let errors = 0;
  let socketErrors = 0;
  const end = performance.now() + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, i) => {
      const target = urls[i % urls.length]!;
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await fetch(target, { method: options.method ?? "GET", headers: options.headers, body: options.body });
          await res.arrayBuffer();
          if (!res.ok) errors++;
          latencies.push(performance.now() - t0);
        } catch {
          socketErrors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / options.seconds,
    p50Ms: latencies[Math.floor(latencies.length * 0.5)]!,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)]!,
    errors,
    tool: "bun fetch (install wrk for accurate figures)",
    requests: latencies.length,
    socketErrors,
    connections,
  };
}

/**
 * User+system CPU time of a process (all its threads), ms; with `reaped`, also that of the children it has
 * waited for (a wrk run, a PostgreSQL backend that has exited). 0 once the process is gone.
 */
export function processCpuMs(pid: number, reaped = false): number {
  const fields = procStat(pid);
  if (!fields) return 0;
  const own = Number(fields[11]) + Number(fields[12]);
  return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) * 10;
}

/** The fields of /proc/{pid}/stat after the command name (state first, then ppid…); undefined once it is gone. */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Busy CPU time of the whole machine (every core, every process), ms: what a phase left idle is the rest. */
export function machineBusyMs(): number {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const busy = cpu.slice(0, 8).reduce((n, v, i) => (i === 3 || i === 4 ? n : n + v), 0);
  return busy * 10;
}

/** How many runs of a workflow the server lists (with `status`, only those), production and test alike. */
export async function runCount(baseUrl: string, workflowId: string, status?: string): Promise<number> {
  const json = await benchApi(baseUrl)("GET", `/api/runs?workflowId=${workflowId}&environment=all&limit=1${status ? `&status=${status}` : ""}`);
  return json.pagination.total;
}

export const machine = () => `nproc=${cpus().length}`;

/** A caller of a bench server's API with the bench token: answers the JSON body, throws on a non-2xx answer. */
export function benchApi(baseUrl: string) {
  const headers = { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/json" };
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
    return json;
  };
}

/** A webhook workflow (trigger → `nextAction`), created and published; its id and webhook URL on `baseUrl`. */
export async function publishWebhookWorkflow(
  baseUrl: string,
  name: string,
  nextAction: unknown,
  settings: Record<string, unknown> = {},
): Promise<{ id: string; url: string }> {
  const api = benchApi(baseUrl);
  const definition = {
    schemaVersion: 2,
    trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {}, nextAction },
    settings,
    variables: {},
    annotations: null,
    pinnedData: {},
  };
  const created = await api("POST", "/api/workflows", { name, definition });
  const published = await api("POST", `/api/workflows/${created.data.id}/publish`);
  return { id: created.data.id, url: String(published.data.webhookUrl).replace(/^https?:\/\/[^/]+/, baseUrl) };
}

/** The webhook benches' step: a greeting built from the body and a number doubled ({"name": "Ada", "n": 21}). */
export const greetStep = (nextAction?: unknown) => ({
  name: "greet",
  type: "PIECE",
  pieceId: "data",
  actionId: "set_fields",
  config: { fields: { greeting: "hello {{trigger.body.name}}", doubled: "{{trigger.body.n * 2}}" } },
  ...(nextAction ? { nextAction } : {}),
});

/** Answers the webhook call with the greet step's output. */
export const replyStep = { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config: { status: 200, body: "{{greet.output}}" } };
