/**
 * The latency proxy (test/support/latency-proxy.ts) in front of a real PostgreSQL: queries through it answer
 * the right rows, its delay shows in the measured round trip, and a stall holds one connection's query while
 * another connection's query answers at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { startLatencyProxy, type LatencyProxy } from "../support/latency-proxy";
import { announceMissingPostgres, postgresBinaries, startPostgres, type PostgresHandle } from "../support/postgres";

announceMissingPostgres();

/** ms that `work` took. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

describe.skipIf(!postgresBinaries())("latency proxy", () => {
  let pg: PostgresHandle;
  let proxy: LatencyProxy;
  const clients: SQL[] = [];
  /** A client of one connection through the proxy, closed after the suite. */
  const connect = () => {
    const sql = new SQL(proxy.url(pg.url), { adapter: "postgres", max: 1 });
    clients.push(sql);
    return sql;
  };

  beforeAll(async () => {
    pg = await startPostgres();
    proxy = await startLatencyProxy(pg.url);
  }, 30_000);
  afterAll(async () => {
    for (const sql of clients) await sql.close();
    await proxy?.stop();
    await pg?.stop();
  });

  test("url points at the proxy and queries through it answer the right rows", async () => {
    const url = new URL(proxy.url(pg.url));
    expect([url.hostname, url.port, url.username, url.pathname]).toEqual(["127.0.0.1", String(proxy.port), "weft", "/postgres"]);
    const sql = connect();
    expect(await sql`SELECT n, repeat('x', n) AS text FROM generate_series(1, 3) AS n`).toEqual([
      { n: 1, text: "x" },
      { n: 2, text: "xx" },
      { n: 3, text: "xxx" },
    ]);
    // A reply of several megabytes passes whole (writes the client cannot take at once wait for its drain).
    const [big] = await sql`SELECT length(string_agg(md5(n::text), '')) AS length FROM generate_series(1, 200000) AS n`;
    expect(big.length).toBe(6_400_000);
    const [echo] = await sql`SELECT ${"é".repeat(100_000)}::text AS text`;
    expect(echo.text).toBe("é".repeat(100_000));
  });

  test("the delay shows in the measured round trip", async () => {
    const direct = await proxy.measureRttMs();
    expect(direct).toBeLessThan(2);
    proxy.setDelay(1);
    const delayed = await proxy.measureRttMs();
    proxy.setDelay(0);
    // 1 ms each way, and at most a timer's tick more each way (more on a busy machine).
    expect(delayed).toBeGreaterThanOrEqual(2);
    expect(delayed).toBeLessThan(10);
  });

  test("a stalled connection holds its query while another connection's answers at once", async () => {
    const held = connect();
    await held`SELECT 1`;
    const heldId = proxy.connections().at(-1)!;
    const other = connect();
    await other`SELECT 1`;

    proxy.stallConnection(heldId, 500);
    const [slow, fast] = await Promise.all([timed(() => held`SELECT 1`), timed(() => other`SELECT 1`)]);
    expect(slow).toBeGreaterThanOrEqual(500);
    expect(slow).toBeLessThan(2000);
    expect(fast).toBeLessThan(250);

    // The next query that matches, on whichever connection it comes: held, and only it.
    const matched = proxy.stallNextQuery("stalled_query", 500);
    const [slowMatch, fastOther] = await Promise.all([timed(() => other`SELECT 2 AS stalled_query`), timed(() => held`SELECT 1`)]);
    expect(await matched).toBe(proxy.connections().at(-1)!);
    expect(slowMatch).toBeGreaterThanOrEqual(500);
    expect(fastOther).toBeLessThan(250);
  }, 15_000);

  test("stop closes every socket", async () => {
    const sql = new SQL(proxy.url(pg.url), { adapter: "postgres", max: 1 });
    await sql`SELECT 1`;
    await proxy.stop();
    await expect(sql`SELECT 1`).rejects.toThrow();
    expect(proxy.connections()).toEqual([]);
    await sql.close();
    // Nothing listens any more.
    await expect(Bun.connect({ hostname: "127.0.0.1", port: proxy.port, socket: { data() {} } })).rejects.toThrow();
  });
});
