/**
 * Pieces figures (issue 4): schema-projection requests/s for http.send_request with two gates
 * (target ≥ 15,000 req/s at 50 connections, with the compiled projection cached), plus the in-process
 * cost of a projection without the cache, for scale.
 */
import { builtinRegistry } from "../src/pieces-runtime/registry";
import { project } from "../src/core/pieces/projection";
import { BENCH_TOKEN, load, machine, rssMiB, startBenchServer } from "./_support";

console.log(`machine: ${machine()}`);

// In-process: one projection computed from scratch (no LRU) vs served from the cache path.
const registry = builtinRegistry();
const piece = registry.get("http")!;
const action = registry.action("http", "send_request")!;
const query = { body_type: "json", auth_type: "bearer" };
const N = 200_000;
let t0 = performance.now();
for (let i = 0; i < N; i++) JSON.stringify({ data: project(piece, action, "action", query) });
const uncachedPerSecond = N / ((performance.now() - t0) / 1000);
console.log(`in-process projection + JSON, no cache: ${uncachedPerSecond.toFixed(0)} ops/s (${(1e6 / uncachedPerSecond).toFixed(1)} µs each)`);

const server = await startBenchServer([process.execPath, "src/main.ts", "serve"]);
const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
const url = `${server.url}/api/pieces/http/actions/send_request?body_type=json&auth_type=bearer`;
const check = await fetch(url, { headers });
const body = (await check.json()) as any;
if (check.status !== 200 || body.data.filteredBy.body_type !== "json") throw new Error(`unexpected answer ${check.status}`);

await load(url, { connections: 50, seconds: 2, headers }); // warm-up
const cached = await load(url, { connections: 50, seconds: 10, headers });
console.log(
  `GET projection http.send_request?body_type=json&auth_type=bearer, 50 connections, ${cached.tool}: ${cached.requestsPerSecond.toFixed(0)} req/s (target ≥ 15,000), p50 ${cached.p50Ms.toFixed(2)} ms, p99 ${cached.p99Ms.toFixed(2)} ms, non-2xx ${cached.errors}`,
);

const summary = await load(`${server.url}/api/pieces/http?view=summary`, { connections: 50, seconds: 5, headers });
console.log(`GET /api/pieces/http?view=summary, 50 connections: ${summary.requestsPerSecond.toFixed(0)} req/s, p99 ${summary.p99Ms.toFixed(2)} ms`);
console.log(`RSS after load: ${rssMiB(server.proc.pid).toFixed(1)} MiB`);
await server.stop();
