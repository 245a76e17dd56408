/**
 * Leases (src/store/leases.ts, migration 13): take a free or lapsed name, keep one already held, never take one
 * another holder still has; renew, release (the row stays, anyone may take it) and drop. Runs on SQLite, and on
 * PostgreSQL under `npm run test:postgres`; on a real PostgreSQL server, processes racing for the same names
 * each get a name exactly once, free or lapsed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import { storageOf } from "../../src/store/storage";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-leases-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

const at = (second: number) => new Date(Date.UTC(2025, 0, 6, 9, 0, second)).toISOString();

describe(`leases (${testStorage()})`, () => {
  test("a free name is taken; its holder renews it; nobody else gets it until it lapses, then the first to ask does", async () => {
    const leases = storageOf(await openStoreDb()).leases;
    expect(await leases.holder("poll:a", at(0))).toBeNull();
    expect(await leases.acquire("poll:a", "one", at(0), at(30))).toBe(true);
    expect(await leases.holder("poll:a", at(0))).toBe("one");

    expect(await leases.acquire("poll:a", "two", at(10), at(40))).toBe(false);
    expect(await leases.acquire("poll:a", "one", at(10), at(40))).toBe(true);
    expect(await leases.acquire("poll:a", "two", at(39), at(69))).toBe(false);
    expect(await leases.holder("poll:a", at(39))).toBe("one");

    // Lapsed at 40: the holder is nobody, and whoever asks first takes it.
    expect(await leases.holder("poll:a", at(40))).toBeNull();
    expect(await leases.acquire("poll:a", "two", at(40), at(59))).toBe(true);
    expect(await leases.acquire("poll:a", "one", at(41), at(59))).toBe(false);
    expect(await leases.holder("poll:a", at(41))).toBe("two");
  });

  test("renewAll moves every lease the asker still holds, and none that lapsed, was released or is another's", async () => {
    const leases = storageOf(await openStoreDb()).leases;
    await leases.acquire("poll:a", "one", at(0), at(30));
    await leases.acquire("poll:b", "one", at(0), at(20));
    await leases.acquire("poll:c", "one", at(0), at(20));
    await leases.acquire("poll:d", "one", at(0), at(30));
    await leases.acquire("poll:e", "two", at(0), at(30));
    // b lapsed and was taken by two; c lapsed and nobody took it; d was released.
    expect(await leases.acquire("poll:b", "two", at(21), at(51))).toBe(true);
    await leases.release("poll:d", "one", at(22));

    expect((await leases.renewAll("one", at(25), at(55))).sort()).toEqual(["poll:a"]);
    expect(await leases.holder("poll:a", at(50))).toBe("one");
    expect(await leases.holder("poll:c", at(25))).toBeNull();
    expect(await leases.holder("poll:d", at(25))).toBeNull();
    expect(await leases.holder("poll:b", at(50))).toBe("two");
    expect(await leases.holder("poll:e", at(29))).toBe("two");
    expect(await leases.renewAll("three", at(25), at(55))).toEqual([]);
  });

  test("release lets anyone take the name at once and keeps the row; drop forgets it whoever held it", async () => {
    const leases = storageOf(await openStoreDb()).leases;
    await leases.acquire("subscription:a", "one", at(0), at(30));
    await leases.acquire("subscription:b", "one", at(0), at(30));
    await leases.acquire("poll:a", "one", at(0), at(30));

    await leases.release("subscription:a", "two", at(5));
    expect(await leases.holder("subscription:a", at(5))).toBe("one");
    await leases.release("subscription:a", "one", at(5));
    expect(await leases.holder("subscription:a", at(5))).toBeNull();
    expect((await leases.withPrefix("subscription:")).map((row) => row.name)).toEqual(["subscription:a", "subscription:b"]);
    expect(await leases.acquire("subscription:a", "two", at(6), at(36))).toBe(true);

    await leases.drop("subscription:b");
    expect(await leases.withPrefix("subscription:")).toEqual([{ name: "subscription:a", owner: "two", expires_at: at(36) }]);
    expect((await leases.withPrefix("poll:")).map((row) => row.name)).toEqual(["poll:a"]);
    expect(await leases.withPrefix("renewal:")).toEqual([]);
  });
});

const pgBin = postgresBinaries();
announceMissingPostgres();

/** One contender: asks for every name in turn, as fast as it can, and prints the ones it got and when it asked. */
const CONTENDER = `
import { openPool } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/postgres/connection.ts"))};
import { postgresStorage } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/postgres/storage.ts"))};
const [url, me, startAt, rounds] = process.argv.slice(2);
const leases = postgresStorage(openPool(url, 1)).leases;
await Bun.sleep(Number(startAt) - Date.now());
const won = [];
const from = Date.now();
for (let round = 0; round < Number(rounds); round++) {
  for (const name of ["free:" + round, "lapsed:" + round]) {
    const now = Date.now();
    if (await leases.acquire(name, me, new Date(now).toISOString(), new Date(now + 60_000).toISOString())) won.push(name);
  }
}
console.log(JSON.stringify({ won, from, to: Date.now() }));
process.exit(0);
`;

describe.skipIf(!pgBin)("leases on PostgreSQL, four processes racing", () => {
  test("every free name and every lapsed name is taken by exactly one of them", async () => {
    const { db, url } = await freshPostgresDatabase();
    const rounds = 400;
    const leases = storageOf(db).leases;
    for (let round = 0; round < rounds; round++) await leases.acquire(`lapsed:${round}`, "dead", at(0), at(30));
    const script = join(dir, "contender.ts");
    writeFileSync(script, CONTENDER);
    const startAt = Date.now() + 3000;
    const contenders = ["a", "b", "c", "d"].map((me) =>
      Bun.spawn([process.execPath, script, url, me, String(startAt), String(rounds)], { stdout: "pipe", stderr: "inherit" }),
    );
    const answers = await Promise.all(
      contenders.map(async (proc) => JSON.parse(await new Response(proc.stdout).text()) as { won: string[]; from: number; to: number }),
    );
    const wins = answers.map((answer) => answer.won);
    // They did race: all four were asking at the same time (the fastest usually wins every name, the others lose each by microseconds).
    expect(Math.max(...answers.map((a) => a.from))).toBeLessThan(Math.min(...answers.map((a) => a.to)));

    const all = wins.flat().sort();
    const expected = Array.from({ length: rounds }, (_, round) => [`free:${round}`, `lapsed:${round}`])
      .flat()
      .sort();
    expect(all).toEqual(expected);
    // Each winner is the holder the database records.
    for (const [index, me] of ["a", "b", "c", "d"].entries()) {
      for (const name of wins[index]!) expect(await leases.holder(name, new Date().toISOString())).toBe(me);
    }
  }, 30_000);
});
