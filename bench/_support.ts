/** Shared by benchmarks: start a server, drive load with wrk when present, read RSS. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve } from "node:path";

// A benchmark's data directories, wrk scripts and spawned servers' files go into one temporary directory,
// removed when it exits (a bench run writes hundreds of megabytes of runs).
const scratch = mkdtempSync(join(tmpdir(), "weft-bench-"));
process.env.TMPDIR = scratch;
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

export const ROOT = resolve(import.meta.dir, "..");
export const BENCH_TOKEN = "weft_bench_token_0123456789abcdef";

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
}

/** Drives `connections` concurrent clients for `seconds` with wrk (apt install wrk), else a Bun client. */
export async function load(
  url: string,
  options: { connections: number; seconds: number; method?: string; headers?: Record<string, string>; body?: string },
): Promise<LoadResult> {
  const wrk = Bun.which("wrk");
  if (wrk) {
    const script = join(mkdtempSync(join(tmpdir(), "wrk-")), "req.lua");
    const headerLines = Object.entries(options.headers ?? {})
      .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
      .join("\n");
    await Bun.write(
      script,
      `wrk.method = ${JSON.stringify(options.method ?? "GET")}\n${headerLines}\n${options.body ? `wrk.body = ${JSON.stringify(options.body)}` : ""}\n`,
    );
    const out = Bun.spawnSync([wrk, "-t2", `-c${options.connections}`, `-d${options.seconds}s`, "--latency", "-s", script, url]).stdout.toString();
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
    const ms = (label: string) => {
      const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out);
      if (!m) return NaN;
      const v = Number(m[1]);
      return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
    };
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    return { requestsPerSecond: rps, p50Ms: ms("50%"), p99Ms: ms("99%"), errors: non2xx, tool: "wrk", requests };
  }
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { method: options.method ?? "GET", headers: options.headers, body: options.body });
        await res.arrayBuffer();
        if (!res.ok) errors++;
        latencies.push(performance.now() - t0);
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
  };
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
export async function publishWebhookWorkflow(baseUrl: string, name: string, nextAction: unknown): Promise<{ id: string; url: string }> {
  const api = benchApi(baseUrl);
  const definition = {
    schemaVersion: 2,
    trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {}, nextAction },
    settings: {},
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
