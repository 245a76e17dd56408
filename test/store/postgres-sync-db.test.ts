/**
 * The synchronous PostgreSQL client the repositories run on (src/store/postgres/sync-db.ts): how SQLite
 * statements are rewritten, and — against a real server (Debian `postgresql`) — that its transactions,
 * savepoints, errors and values behave as bun:sqlite's do for the code above it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { StorageError } from "../../src/lib/storage-error";
import { PostgresDb, startEarly, toPostgres } from "../../src/store/postgres/sync-db";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";

describe("SQLite statements as PostgreSQL takes them", () => {
  test("positional and named placeholders become numbered ones; a name used twice binds once", () => {
    expect(toPostgres("SELECT * FROM t WHERE a = ? AND b = ?")).toEqual({ text: "SELECT * FROM t WHERE a = $1 AND b = $2", order: [0, 1] });
    expect(toPostgres("UPDATE t SET a = $a WHERE id = $id OR parent = $id")).toEqual({
      text: "UPDATE t SET a = $1 WHERE id = $2 OR parent = $2",
      order: ["a", "id"],
    });
  });

  test("text in quotes is left alone", () => {
    expect(toPostgres("SELECT '?', \"$x\" FROM t WHERE a = ?").text).toBe("SELECT '?', \"$x\" FROM t WHERE a = $1");
  });

  test("the SQLite idioms the repositories use are rewritten", () => {
    expect(toPostgres("INSERT OR IGNORE INTO d (h, t) VALUES (?, ?)").text).toBe("INSERT INTO d (h, t) VALUES ($1, $2) ON CONFLICT DO NOTHING");
    expect(toPostgres("SELECT * FROM f WHERE ws = ? AND name = ? COLLATE NOCASE").text).toBe("SELECT * FROM f WHERE ws = $1 AND lower(name) = lower($2)");
    expect(toPostgres("SELECT * FROM folders f ORDER BY f.name COLLATE NOCASE").text).toBe("SELECT * FROM folders f ORDER BY lower(f.name)");
    expect(toPostgres("WHERE instr(lower(w.name), ?) > 0").text).toBe("WHERE strpos(lower(w.name), $1) > 0");
    expect(toPostgres("EXISTS (SELECT 1 FROM json_each(runs.tags) WHERE json_each.value = $tag)").text).toBe(
      "EXISTS (SELECT 1 FROM jsonb_array_elements_text((runs.tags)::jsonb) AS json_each(value) WHERE json_each.value = $1)",
    );
  });
});

const pgBin = postgresBinaries();
announceMissingPostgres();

describe.skipIf(!pgBin)("on a real PostgreSQL", () => {
  let db: PostgresDb;

  beforeAll(async () => {
    const { url } = await freshPostgresDatabase();
    db = new PostgresDb(url);
    db.run("CREATE TABLE t (id text PRIMARY KEY, n bigint, flag integer, body text)");
  });
  afterAll(() => db?.close());

  const count = () => (db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n;

  test("a connection thread started early (weft serve, while the program loads) is the one the store then opens", async () => {
    const { db: probe, url } = await freshPostgresDatabase();
    const database = new URL(url).pathname.slice(1);
    const pids = () =>
      (probe.query(`SELECT pid FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()`).all(database) as Array<{ pid: number }>).map((r) => r.pid);
    const before = new Set(pids());
    startEarly(url);
    let early: number[] = [];
    for (const until = Date.now() + 5_000; early.length === 0 && Date.now() < until; await Bun.sleep(10)) early = pids().filter((pid) => !before.has(pid));
    expect(early).toHaveLength(1);
    const store = new PostgresDb(url);
    expect(store.query("SELECT pg_backend_pid() AS pid").get()).toEqual({ pid: early[0] });
    store.close();
  });

  test("rows come back as bun:sqlite's do: int8 as numbers, a missing row as null, run() counts changes", () => {
    expect(
      db.query("INSERT INTO t (id, n, flag, body) VALUES ($id, $n, $flag, $body)").run({ id: "a", n: 1_700_000_000_000, flag: true, body: "x" }).changes,
    ).toBe(1);
    expect(db.query("SELECT * FROM t WHERE id = ?").get("a")).toEqual({ id: "a", n: 1_700_000_000_000, flag: 1, body: "x" });
    expect(db.query("SELECT * FROM t WHERE id = ?").get("nope")).toBeNull();
    expect(db.query("UPDATE t SET n = n + 1").run().changes).toBe(1);
  });

  test("a transaction that throws leaves nothing; one that returns keeps everything", () => {
    const before = count();
    expect(() =>
      db
        .transaction(() => {
          db.run("INSERT INTO t (id) VALUES (?)", "b");
          throw new Error("changed my mind");
        })
        .immediate(),
    ).toThrow("changed my mind");
    expect(count()).toBe(before);
    db.transaction(() => {
      db.run("INSERT INTO t (id) VALUES (?)", "b");
      db.run("INSERT INTO t (id) VALUES (?)", "c");
    }).immediate();
    expect(count()).toBe(before + 2);
  });

  test("a nested transaction is a savepoint: its error undoes only its own writes", () => {
    const before = count();
    db.transaction(() => {
      db.run("INSERT INTO t (id) VALUES (?)", "d");
      try {
        db.transaction(() => {
          db.run("INSERT INTO t (id) VALUES (?)", "e");
          db.run("INSERT INTO t (id) VALUES (?)", "d");
        })();
      } catch (error) {
        expect(error).toBeInstanceOf(StorageError);
        expect((error as StorageError).kind).toBe("unique");
      }
    }).immediate();
    expect(db.query("SELECT id FROM t WHERE id IN ('d', 'e') ORDER BY id").all()).toEqual([{ id: "d" }]);
    expect(count()).toBe(before + 1);
  });

  test("an error names PostgreSQL's reason and the statement; a big value round-trips exactly", () => {
    expect(() => db.query("SELECT nope FROM t").all()).toThrow(/nope.*\(in: SELECT nope FROM t\)/);
    const body = `${"é🙂\r\n".repeat(500_000)}end`;
    db.run("INSERT INTO t (id, body) VALUES (?, ?)", "big", body);
    expect((db.query("SELECT body FROM t WHERE id = ?").get("big") as { body: string }).body === body).toBe(true);
  });
});
