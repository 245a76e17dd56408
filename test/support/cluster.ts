/**
 * Real `weft serve` processes forming a cluster on one PostgreSQL database, for test/cluster/ — reached, as in
 * a real cluster, across a "network": a loopback proxy ~2 ms away (postgres-storage.ts, networkPostgresDatabase).
 * The environment they share, starting instances (one encryption key for all), JSON calls, a loopback sink that
 * counts the side effects of steps, and a workflow of HTTP steps calling it.
 */
import { resolve } from "node:path";
import { type ServerHandle, startServer } from "./server";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");

/** What every instance of a test cluster shares: the database, one encryption key, a 1 s heartbeat, no rate limits. */
export function clusterEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WEFT_DATABASE_URL: databaseUrl,
    WEFT_ENCRYPTION_KEY: "cluster-test-key-".repeat(3),
    WEFT_HEARTBEAT_SECONDS: "1",
    WEFT_LOG_LEVEL: "warn",
    WEFT_RATE_LIMIT: "0",
    WEFT_FLOOD_LIMIT: "0",
    WEFT_ALLOW_CIDRS: "127.0.0.0/8",
    ...extra,
  };
}

/** Starts an instance of the cluster (`role` passed as `weft serve --role`), remembered in `servers` for the clean-up. */
export async function startInstance(
  servers: ServerHandle[],
  env: Record<string, string>,
  options: { role?: "all" | "api" | "worker"; env?: Record<string, string> } = {},
): Promise<ServerHandle> {
  const server = await startServer({
    env: { ...env, ...options.env },
    command: [process.execPath, MAIN, "serve", ...(options.role ? ["--role", options.role] : [])],
  });
  servers.push(server);
  return server;
}

/** A JSON call answering its status and body, whatever the status. */
export async function call(server: ServerHandle, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await server.fetch(path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** A JSON call that must succeed: its body. */
export async function ok(server: ServerHandle, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await call(server, method, path, body);
  if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Every run of the workspace, all pages, tests included. */
export async function allRuns(server: ServerHandle): Promise<any[]> {
  const runs: any[] = [];
  for (let page = 1; ; page++) {
    const res = await ok(server, "GET", `/api/runs?environment=all&limit=100&page=${page}`);
    runs.push(...res.data);
    if (page >= res.pagination.totalPages) return runs;
  }
}

/** A loopback server counting calls per path (each step's side effect), answering after `delayMs`. */
export function effectSink(delayMs: number) {
  const hits = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      await Bun.sleep(delayMs);
      return Response.json({ path });
    },
  });
  return { hits, port: server.port as number, stop: () => server.stop(true) };
}

/** Publishes, through `server`, a webhook workflow whose steps each GET `/{tag}/{step}` on the sink (tag from the body); its webhook token. */
export async function publishSinkChain(server: ServerHandle, sinkPort: number, steps: string[]): Promise<string> {
  let next: Record<string, unknown> | undefined;
  for (const name of [...steps].reverse()) {
    next = {
      name,
      type: "PIECE",
      pieceId: "http",
      actionId: "send_request",
      config: { method: "GET", url: `http://127.0.0.1:${sinkPort}/{{trigger.body.tag}}/${name}`, timeout_ms: 10_000 },
      ...(next ? { nextAction: next } : {}),
    };
  }
  return publishWebhook(server, `chain of ${steps.join(", ")}`, next!);
}

/**
 * Publishes, through `server`, a workflow: a webhook trigger, then `nextAction`; its webhook token. `triggerConfig`:
 * the trigger's, e.g. `{ reply: "respond_action" }` for a call answered by a `webhook.respond` step.
 */
export async function publishWebhook(
  server: ServerHandle,
  name: string,
  nextAction: Record<string, unknown>,
  triggerConfig: Record<string, unknown> = {},
): Promise<string> {
  const made = await ok(server, "POST", "/api/workflows", {
    name,
    definition: {
      schemaVersion: 2,
      trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: triggerConfig, nextAction },
    },
  });
  await ok(server, "POST", `/api/workflows/${made.data.id}/publish`);
  return made.data.webhookToken as string;
}
