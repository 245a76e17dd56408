/**
 * Foundation figures (issue 2): authenticated one-row GET throughput and p99 at 50 connections,
 * binary size, cold start to first answer, idle RSS.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { BENCH_TOKEN, ROOT, load, machine, rssMiB, startBenchServer } from "./_support";

const binary = join(ROOT, "dist/weft");
if (!existsSync(binary)) {
  const built = Bun.spawnSync([process.execPath, "build.ts"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (built.exitCode !== 0) process.exit(1);
}
console.log(`machine: ${machine()}`);
console.log(`binary size: ${(statSync(binary).size / 1024 / 1024).toFixed(1)} MiB`);

const colds: number[] = [];
for (let i = 0; i < 5; i++) {
  const s = await startBenchServer([binary, "serve"]);
  colds.push(s.coldStartMs);
  if (i === 4) {
    await Bun.sleep(2000);
    console.log(`idle RSS (binary, after 2 s): ${rssMiB(s.proc.pid).toFixed(1)} MiB`);
  }
  await s.stop();
}
colds.sort((a, b) => a - b);
console.log(`cold start to first answer (binary, fresh data dir, median of 5): ${colds[2]!.toFixed(0)} ms`);

const server = await startBenchServer([binary, "serve"]);
const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
await load(`${server.url}/api/auth/me`, { connections: 50, seconds: 2, headers }); // warm-up
const result = await load(`${server.url}/api/auth/me`, { connections: 50, seconds: 10, headers });
console.log(
  `authenticated GET /api/auth/me (token + one workspace row), 50 connections, ${result.tool}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, non-2xx ${result.errors}`,
);
console.log(`RSS after load: ${rssMiB(server.proc.pid).toFixed(1)} MiB`);
await server.stop();
