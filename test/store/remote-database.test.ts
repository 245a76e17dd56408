/**
 * Weft on a PostgreSQL server across a network: a real `weft serve` reaching a real PostgreSQL through a
 * loopback proxy that adds ~1 ms each way (test/support/latency-proxy.ts; a round trip of ~2 ms, another rack).
 * One request's query held for 500 ms delays that request only: /healthz and a webhook of the same instance
 * answer meanwhile. Before reads were off the serving thread (src/store/run-reads.ts: now the storage port's,
 * awaited), a list read waited on the serving thread and held both for the whole 500 ms.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { CONNECTION_NAMES } from "../../src/store/postgres/connection";
import { LANES } from "../../src/store/postgres/writer-lanes";
import { startLatencyProxy, type LatencyProxy } from "../support/latency-proxy";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase, postgresClient } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

const servers: ServerHandle[] = [];
let proxy: LatencyProxy | undefined;
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  await proxy?.stop();
});

const HELLO = {
  name: "Hello over a network",
  definition: {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "webhook",
      pieceId: "webhook",
      actionId: "catch_webhook",
      config: {},
      nextAction: {
        name: "reply",
        type: "PIECE",
        pieceId: "webhook",
        actionId: "respond",
        config: { status: 200, body: "{{ {'hello': trigger.body.name} }}" },
      },
    },
  },
};

/** How long `work` takes, ms. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe.skipIf(!postgresBinaries())("a PostgreSQL server ~2 ms away", () => {
  test("a list read held 500 ms holds neither /healthz nor a webhook of the same instance", async () => {
    const { url } = await freshPostgresDatabase();
    // The run writer's connections, as the server lists them (each of Weft's connections says what it is for),
    // counted on the test's own connection (the store's Db answers no SQL).
    const client = postgresClient(url);
    const writerConnections = async () =>
      (await client.get<{ n: number }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1", [
        CONNECTION_NAMES.writer,
      ]))!.n;
    proxy = await startLatencyProxy(url, { delayMs: 1 });
    const rtt = await proxy.measureRttMs();
    expect(rtt).toBeGreaterThan(1.5);
    const server = await startServer({ env: { WEFT_DATABASE_URL: proxy.url(url), WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0" } });
    servers.push(server);
    const created = await (
      await server.fetch("/api/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(HELLO) })
    ).json();
    const published = await (await server.fetch(`/api/workflows/${created.data.id}/publish`, { method: "POST" })).json();
    const hook = published.data.webhookUrl as string;
    const call = async () => {
      const res = await fetch(hook, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"Ada"}' });
      expect(await res.json()).toEqual({ hello: "Ada" });
    };
    for (let i = 0; i < 20; i++) await call();
    // The run writer's own connections open a second after its first use (CONNECT_AFTER_MS); until then it
    // commits on the store's connection. Counted below, they must be open.
    await Bun.sleep(1_500);

    // The list's first query on its connection is sent with its text: held, with what follows it, for 500 ms.
    const held = proxy.stallNextQuery("AS n FROM run_counts", 500);
    const listStarted = performance.now();
    const list = server.fetch("/api/runs?limit=5").then(async (res) => ({ ms: performance.now() - listStarted, body: await res.json() }));
    await held;
    const health: number[] = [];
    const webhook: number[] = [];
    for (let i = 0; i < 5; i++) {
      health.push(await timed(() => server.fetch("/healthz", { token: null })));
      webhook.push(await timed(call));
    }
    const answered = await list;
    // Everything above was answered while the list was held; the list itself waited its 500 ms and is right.
    expect(answered.ms).toBeGreaterThan(450);
    expect(performance.now() - listStarted).toBeGreaterThan(health.concat(webhook).reduce((a, b) => a + b, 0));
    // Its count was held until after the five webhooks above committed: it counts them too.
    expect(answered.body.pagination.total).toBe(25);
    expect(median(health)).toBeLessThan(20);
    expect(median(webhook)).toBeLessThan(20);

    // Ten callers, each calling again once answered, all answered and counted. The run writer's own connections are
    // open (LANES at least); whether it opens more depends on how long writes wait for a free one (1 ms,
    // src/store/postgres/writer.ts), which ten callers do not always make them do: bench/remote-db.ts measures it
    // under load (four to five of them at RTT ≈ 2.5 ms).
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 10; i++) await call();
      }),
    );
    expect(await writerConnections()).toBeGreaterThanOrEqual(LANES);
    const all = await (await server.fetch("/api/runs?limit=1")).json();
    expect(all.pagination.total).toBe(25 + 100);
  }, 60_000);
});
