/**
 * The cluster bus (src/store/bus.ts) against a real PostgreSQL (Debian `postgresql`): one connection per
 * process, shared by everything that opens the bus, each holder's subscriptions ending when it closes.
 */
import { describe, expect, test } from "bun:test";
import { openBus } from "../../src/store/bus";
import { openDatabase } from "../../src/store/sqlite/db";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase, postgresClient } from "../support/postgres-storage";

const pgBin = postgresBinaries();
announceMissingPostgres();

/** Resolves with the messages `got` holds once it holds `n`, or what it holds after `ms`. */
async function settle<T>(got: T[], n: number, ms = 3_000): Promise<T[]> {
  const until = Date.now() + ms;
  while (got.length < n && Date.now() < until) await Bun.sleep(10);
  return got;
}

test("on SQLite there is no bus", () => {
  expect(openBus(openDatabase(":memory:"), () => {})).toBeNull();
});

describe.skipIf(!pgBin)("on a real PostgreSQL", () => {
  test("two holders share one connection; closing one ends its subscriptions only, the last closes the connection", async () => {
    const { db, url } = await freshPostgresDatabase();
    const database = new URL(url).pathname.slice(1);
    // Counted on a connection of the test's own (the store's Db answers no SQL), which leaves itself out; client
    // backends only: an autovacuum worker visiting the new database is listed under its name too.
    const client = postgresClient(url);
    const connections = async () =>
      (await client.get<{ n: number }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        [database],
      ))!.n;
    const before = await connections();
    const a = openBus(db, () => {})!;
    const gotA: unknown[] = [];
    await a.subscribe("weft_test", (m) => gotA.push(m));
    a.publish("weft_test", { n: 0 });
    expect(await settle(gotA, 1)).toEqual([{ n: 0 }]);
    gotA.length = 0;
    const alone = await connections();
    expect(alone).toBeGreaterThan(before);
    // The second holder listens and sends on the first one's connections (Bun's client: one sends, one listens).
    const b = openBus(db, () => {})!;
    const gotB: unknown[] = [];
    await b.subscribe("weft_test", (m) => gotB.push(m));
    b.publish("weft_test", { n: 1 });
    expect(await settle(gotA, 1)).toEqual([{ n: 1 }]);
    expect(await settle(gotB, 1)).toEqual([{ n: 1 }]);
    expect(await connections()).toBe(alone);

    await a.close();
    b.publish("weft_test", { n: 2 });
    expect(await settle(gotB, 2)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(gotA).toEqual([{ n: 1 }]);
    a.publish("weft_test", { n: 3 }); // a closed holder sends nothing
    await b.close();
    for (const until = Date.now() + 3_000; (await connections()) > before && Date.now() < until; ) await Bun.sleep(20);
    expect(await connections()).toBe(before);
    expect(gotB).toEqual([{ n: 1 }, { n: 2 }]);

    // Opened again after the last holder closed: a new connection that works.
    const c = openBus(db, () => {})!;
    const gotC: unknown[] = [];
    await c.subscribe("weft_test", (m) => gotC.push(m));
    c.publish("weft_test", { n: 4 });
    expect(await settle(gotC, 1)).toEqual([{ n: 4 }]);
    await c.close();
  });

  test("a notification the server refuses is reported to the bus's holder; the bus goes on working", async () => {
    const { db } = await freshPostgresDatabase();
    const errors: unknown[] = [];
    const bus = openBus(db, (error) => errors.push(error))!;
    const got: unknown[] = [];
    await bus.subscribe("weft_test", (m) => got.push(m));
    bus.publish("", { n: 0 }); // PostgreSQL: "channel name cannot be empty"
    expect(await settle(errors, 1)).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toContain("channel name cannot be empty");
    bus.publish("weft_test", { n: 1 });
    expect(await settle(got, 1)).toEqual([{ n: 1 }]);
    await bus.close();
  });
});
