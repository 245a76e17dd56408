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
import { openDatabase, type Db } from "../../src/store/db";
import { LeaseStore } from "../../src/store/leases";
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
    const leases = new LeaseStore(await openStoreDb());
    expect(leases.holder("poll:a", at(0))).toBeNull();
    expect(leases.acquire("poll:a", "one", at(0), at(30))).toBe(true);
    expect(leases.holder("poll:a", at(0))).toBe("one");

    expect(leases.acquire("poll:a", "two", at(10), at(40))).toBe(false);
    expect(leases.acquire("poll:a", "one", at(10), at(40))).toBe(true);
    expect(leases.acquire("poll:a", "two", at(39), at(69))).toBe(false);
    expect(leases.holder("poll:a", at(39))).toBe("one");

    // Lapsed at 40: the holder is nobody, and whoever asks first takes it.
    expect(leases.holder("poll:a", at(40))).toBeNull();
    expect(leases.acquire("poll:a", "two", at(40), at(59))).toBe(true);
    expect(leases.acquire("poll:a", "one", at(41), at(59))).toBe(false);
    expect(leases.holder("poll:a", at(41))).toBe("two");
  });

  test("renewAll moves every lease the asker still holds, and none that lapsed, was released or is another's", async () => {
    const leases = new LeaseStore(await openStoreDb());
    leases.acquire("poll:a", "one", at(0), at(30));
    leases.acquire("poll:b", "one", at(0), at(20));
    leases.acquire("poll:c", "one", at(0), at(20));
    leases.acquire("poll:d", "one", at(0), at(30));
    leases.acquire("poll:e", "two", at(0), at(30));
    // b lapsed and was taken by two; c lapsed and nobody took it; d was released.
    expect(leases.acquire("poll:b", "two", at(21), at(51))).toBe(true);
    leases.release("poll:d", "one", at(22));

    expect(leases.renewAll("one", at(25), at(55)).sort()).toEqual(["poll:a"]);
    expect(leases.holder("poll:a", at(50))).toBe("one");
    expect(leases.holder("poll:c", at(25))).toBeNull();
    expect(leases.holder("poll:d", at(25))).toBeNull();
    expect(leases.holder("poll:b", at(50))).toBe("two");
    expect(leases.holder("poll:e", at(29))).toBe("two");
    expect(leases.renewAll("three", at(25), at(55))).toEqual([]);
  });

  test("release lets anyone take the name at once and keeps the row; drop forgets it whoever held it", async () => {
    const leases = new LeaseStore(await openStoreDb());
    leases.acquire("subscription:a", "one", at(0), at(30));
    leases.acquire("subscription:b", "one", at(0), at(30));
    leases.acquire("poll:a", "one", at(0), at(30));

    leases.release("subscription:a", "two", at(5));
    expect(leases.holder("subscription:a", at(5))).toBe("one");
    leases.release("subscription:a", "one", at(5));
    expect(leases.holder("subscription:a", at(5))).toBeNull();
    expect(leases.withPrefix("subscription:").map((row) => row.name)).toEqual(["subscription:a", "subscription:b"]);
    expect(leases.acquire("subscription:a", "two", at(6), at(36))).toBe(true);

    leases.drop("subscription:b");
    expect(leases.withPrefix("subscription:")).toEqual([{ name: "subscription:a", owner: "two", expires_at: at(36) }]);
    expect(leases.withPrefix("poll:").map((row) => row.name)).toEqual(["poll:a"]);
    expect(leases.withPrefix("renewal:")).toEqual([]);
  });
});

const pgBin = postgresBinaries();
announceMissingPostgres();

/** One contender: asks for every name in turn, as fast as it can, and prints the ones it got and when it asked. */
const CONTENDER = `
import { PostgresDb } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/postgres/sync-db.ts"))};
import { LeaseStore } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/leases.ts"))};
const [url, me, startAt, rounds] = process.argv.slice(2);
const leases = new LeaseStore(new PostgresDb(url).asDatabase());
await Bun.sleep(Number(startAt) - Date.now());
const won = [];
const from = Date.now();
for (let round = 0; round < Number(rounds); round++) {
  for (const name of ["free:" + round, "lapsed:" + round]) {
    const now = Date.now();
    if (leases.acquire(name, me, new Date(now).toISOString(), new Date(now + 60_000).toISOString())) won.push(name);
  }
}
console.log(JSON.stringify({ won, from, to: Date.now() }));
process.exit(0);
`;

describe.skipIf(!pgBin)("leases on PostgreSQL, four processes racing", () => {
  test("every free name and every lapsed name is taken by exactly one of them", async () => {
    const { db, url } = await freshPostgresDatabase();
    const rounds = 400;
    const leases = new LeaseStore(db);
    for (let round = 0; round < rounds; round++) leases.acquire(`lapsed:${round}`, "dead", at(0), at(30));
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
      for (const name of wins[index]!) expect(leases.holder(name, new Date().toISOString())).toBe(me);
    }
  }, 30_000);
});
