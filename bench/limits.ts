/**
 * Limits instead of collapse (docs/engine.md): a real `weft serve` given runs that used to take it down,
 * while a client keeps asking GET /healthz and GET /api/runs/{id} every 50 ms. Prints, per scenario, how
 * the run ended, the server's peak RSS, and the slowest answer of each route.
 *
 *   bun bench/limits.ts
 *
 * 1. A code step returning 1,000,000 small objects, then LOOP_ON_ITEMS with one set_fields inside:
 *    with default limits (the result is refused inside the sandbox), and with the step output limit and
 *    sandbox memory raised (the loop refuses the list).
 * 2. The same with 100,000 items: processed to the end (the loop limit's value).
 * 3. A 50 MB step output: an http step downloading 50 MB from a loopback server.
 */
import { cpus } from "node:os";
import { startServer } from "../test/support/server";

const big = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response("z".repeat(50 * 1024 * 1024), { headers: { "content-type": "text/plain" } }),
});

function loopDefinition(n: number) {
  return {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      config: {},
      nextAction: {
        name: "make",
        type: "PIECE",
        pieceId: "code",
        actionId: "run_code",
        config: { code: `const out = []; for (let i = 0; i < ${n}; i++) out.push({ i }); return out;`, input: {} },
        nextAction: {
          name: "each",
          type: "LOOP_ON_ITEMS",
          config: { items: "{{make.output}}" },
          firstLoopAction: { name: "touch", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { n: "{{each.item.i}}" } } },
        },
      },
    },
  };
}

const downloadDefinition = {
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "manual",
    config: {},
    nextAction: {
      name: "download",
      type: "PIECE",
      pieceId: "http",
      actionId: "send_request",
      config: { method: "GET", url: `http://127.0.0.1:${big.port}/big`, timeout_ms: 60_000 },
    },
  },
};

async function scenario(label: string, definition: unknown, env: Record<string, string> = {}) {
  const server = await startServer({ env: { WEFT_FLOOD_LIMIT: "0", WEFT_RATE_LIMIT: "0", WEFT_LOG_LEVEL: "warn", WEFT_ALLOW_CIDRS: "127.0.0.0/8", ...env } });
  try {
    const created = (await (
      await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: label, definition }),
      })
    ).json()) as any;
    const started = (await (
      await server.fetch(`/api/workflows/${created.data.id}/run?environment=test`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })
    ).json()) as any;
    const id = started.data.id;
    let peakRss = 0;
    let slowestDetail = 0;
    let slowestHealth = 0;
    let run: any;
    const t0 = performance.now();
    while (performance.now() - t0 < 120_000) {
      let at = performance.now();
      run = ((await (await server.fetch(`/api/runs/${id}`, { signal: AbortSignal.timeout(30_000) })).json()) as any).data;
      slowestDetail = Math.max(slowestDetail, performance.now() - at);
      at = performance.now();
      await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
      slowestHealth = Math.max(slowestHealth, performance.now() - at);
      const status = await Bun.file(`/proc/${server.proc.pid}/status`).text();
      peakRss = Math.max(peakRss, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
      if (["completed", "failed", "cancelled"].includes(run.status)) break;
      await Bun.sleep(50);
    }
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(`${label}`);
    console.log(`  ${run.status} after ${seconds} s${run.errorMessage ? `: ${run.errorMessage.slice(0, 150)}` : ""}`);
    console.log(
      `  peak RSS ${peakRss.toFixed(0)} MiB   slowest GET /api/runs/{id} ${slowestDetail.toFixed(0)} ms   slowest GET /healthz ${slowestHealth.toFixed(0)} ms`,
    );
  } finally {
    await server.stop("SIGKILL");
  }
}

console.log(`limits under load, ${cpus().length} cores, a client polling every 50 ms:`);
await scenario("1,000,000 items, default limits", loopDefinition(1_000_000));
await scenario("1,000,000 items, output limit 64 MB and sandbox memory 1 GB (the loop refuses)", loopDefinition(1_000_000), {
  WEFT_STEP_MAX_OUTPUT_MB: "64",
  WEFT_SANDBOX_MEMORY_MB: "1024",
});
await scenario("100,000 items, processed", loopDefinition(100_000));
await scenario("a 50 MB step output (http download), default limits", downloadDefinition);
big.stop(true);
