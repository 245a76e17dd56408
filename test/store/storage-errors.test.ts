/**
 * Errors cross the storage port as Weft's own (src/lib/storage-error.ts): real refusals of SQLite and — against
 * a real server (Debian `postgresql`) — of PostgreSQL become a StorageError with the same kind, however the
 * store met them (a statement, a unit of work, the run writer's batches, Bun's asynchronous client), and the
 * HTTP error handler answers by kind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { AppError } from "../../src/http/errors";
import { toErrorResponse } from "../../src/http/error-handler";
import { StorageError } from "../../src/lib/storage-error";
import type { Db } from "../../src/store/db";
import { openDatabase } from "../../src/store/sqlite/db";
import { openPool, PostgresConnection, PostgresQueryError } from "../../src/store/postgres/connection";
import { applyBatch } from "../../src/store/sqlite/run-writers";
import { errorOf, failureOf, kindOfCode, storageError } from "../../src/store/storage-errors";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";

const TABLES = [
  "CREATE TABLE se_parent (id TEXT PRIMARY KEY)",
  "CREATE TABLE se_child (id TEXT PRIMARY KEY, parent TEXT REFERENCES se_parent (id), name TEXT NOT NULL UNIQUE, k INTEGER CHECK (k > 0))",
];

/** What `work` threw. */
function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("nothing was thrown");
}

/** The refusals both databases make alike, each with the kind the code above the store is given. */
const REFUSALS: Array<[string, string, string]> = [
  ["a second row with a unique name", "INSERT INTO se_child (id, name) VALUES ('c2', 'taken')", "unique"],
  ["a primary key taken", "INSERT INTO se_parent (id) VALUES ('p1')", "unique"],
  ["a parent that does not exist", "INSERT INTO se_child (id, parent, name) VALUES ('c3', 'nobody', 'n3')", "foreign_key"],
  ["a parent still named by a child", "DELETE FROM se_parent WHERE id = 'p1'", "foreign_key"],
  ["no value for a NOT NULL column", "INSERT INTO se_child (id, name) VALUES ('c4', NULL)", "not_null"],
  ["a value its CHECK refuses", "INSERT INTO se_child (id, name, k) VALUES ('c5', 'n5', -1)", "check"],
];

/** Weft's schema in a database capped near its current size, filled until a page-sized row no longer fits. */
function fullDatabase(): Db {
  const db = openDatabase(":memory:");
  db.run("CREATE TABLE filler (x BLOB)");
  const { page_count } = db.query("PRAGMA page_count").get() as { page_count: number };
  db.run(`PRAGMA max_page_count = ${page_count + 4}`);
  for (let i = 0; i < 100; i++) {
    try {
      db.run("INSERT INTO filler VALUES (randomblob(4000))");
    } catch {
      return db;
    }
  }
  throw new Error("the database never filled");
}

const SEED = [...TABLES, "INSERT INTO se_parent (id) VALUES ('p1')", "INSERT INTO se_child (id, parent, name) VALUES ('c1', 'p1', 'taken')"];

describe("SQLite", () => {
  let db: Db;
  beforeAll(() => {
    db = openDatabase(":memory:", { migrate: false });
    for (const statement of SEED) db.run(statement);
  });
  afterAll(() => db.close());

  for (const [what, refused, kind] of REFUSALS) {
    test(`${what}: kind "${kind}", SQLite's message kept for the log`, () => {
      const error = thrown(() => db.run(refused));
      const translated = storageError(error);
      expect(translated).toBeInstanceOf(StorageError);
      expect(translated?.kind).toBe(kind as StorageError["kind"]);
      expect(translated?.message).toBe((error as Error).message);
      expect(translated?.cause).toBe(error);
    });
  }

  test('a full database (max_page_count, as test/security/disk-full.test.ts fills it): kind "full", from a statement and the run writer\'s batch', () => {
    const full = fullDatabase();
    const fill = () => full.run("INSERT INTO filler VALUES (randomblob(4000))");
    const error = thrown(fill);
    expect(String((error as Error).message)).toContain("full");
    expect(storageError(error)?.kind).toBe("full");
    // The run writer answers across a thread with the failure's kind, and its caller is given a StorageError.
    const [failure] = applyBatch(full, [[0]], fill);
    expect(failure).toEqual({ kind: "full", message: expect.stringContaining("full") });
    expect(errorOf(failure!)).toBeInstanceOf(StorageError);
    full.close();
  });

  test("anything else is left as it is", () => {
    const syntax = thrown(() => db.run("SELECT nope FROM se_parent"));
    expect(storageError(syntax)).toBeUndefined();
    expect(storageError(new AppError("CONFLICT", "taken"))).toBeUndefined();
    expect(storageError("a string")).toBeUndefined();
    expect(failureOf(syntax, "while writing: ")).toEqual({ message: `while writing: ${(syntax as Error).message}` });
    expect(errorOf({ message: "gone" })).not.toBeInstanceOf(StorageError);
  });
});

describe("the HTTP answer goes by kind", () => {
  const answer = (error: unknown, classify = storageError) => toErrorResponse("UNKNOWN", error, "req-1", "POST", "/api/x", classify);

  test("not storable: 400 saying what to remove; full: 503 with Retry-After; other kinds: 500", () => {
    const nul = answer(new StorageError("not_storable", 'invalid byte sequence for encoding "UTF8": 0x00'));
    expect(nul.status).toBe(400);
    expect(nul.body.error.code).toBe("VALIDATION_FAILED");
    expect(nul.body.error.message).toContain("U+0000");
    const full = answer(new StorageError("full", "database or disk is full"));
    expect(full.status).toBe(503);
    expect(full.body.error.code).toBe("SERVICE_UNAVAILABLE");
    expect(full.body.error.message).toContain("storage is full");
    expect(full.headers?.["retry-after"]).toBe("30");
    const unique = answer(new StorageError("unique", "UNIQUE constraint failed: t.id"));
    expect([unique.status, unique.internal]).toEqual([500, true]);
  });

  test("a driver's error nobody translated is classified by what the composition root hands in, not by the handler", () => {
    const full = fullDatabase();
    const raw = thrown(() => full.run("INSERT INTO filler VALUES (randomblob(4000))"));
    full.close();
    expect(raw).not.toBeInstanceOf(StorageError);
    expect(answer(raw).status).toBe(503);
    // The handler itself knows no database's codes or messages.
    expect(answer(raw, () => undefined).status).toBe(500);
  });
});

const pgBin = postgresBinaries();
announceMissingPostgres();

describe.skipIf(!pgBin)("PostgreSQL", () => {
  let url: string;
  let c: PostgresConnection;
  const open: Array<{ close(): unknown }> = [];
  const rejection = (work: Promise<unknown>) =>
    work.then(
      () => {
        throw new Error("nothing was thrown");
      },
      (error: unknown) => error,
    );

  beforeAll(async () => {
    ({ url } = await freshPostgresDatabase());
    const pool = openPool(url, 1);
    open.push(pool);
    c = new PostgresConnection(pool);
    for (const statement of SEED) await c.run(statement);
    await c.run("CREATE TABLE se_text (id TEXT PRIMARY KEY, body TEXT, doc JSONB)");
  });
  afterAll(async () => {
    for (const connection of open) await connection.close();
  });

  for (const [what, refused, kind] of REFUSALS) {
    test(`${what}: the storage port's connection rejects with kind "${kind}", PostgreSQL's message and the statement`, async () => {
      const error = await rejection(c.run(refused));
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).kind).toBe(kind as StorageError["kind"]);
      expect((error as Error).message).toContain(refused.slice(0, 20));
      expect(storageError(error)).toBe(error as StorageError);
    });
  }

  test('U+0000 in text or in JSON: kind "not_storable"', async () => {
    const inText = await rejection(c.run("INSERT INTO se_text (id, body) VALUES ($1, $2)", ["t1", "a\u0000b"]));
    expect((inText as StorageError).kind).toBe("not_storable");
    const inJson = await rejection(c.run("INSERT INTO se_text (id, doc) VALUES ($1, $2::text::jsonb)", ["t2", JSON.stringify({ a: "a\u0000b" })]));
    expect((inJson as StorageError).kind).toBe("not_storable");
    expect(await c.get("SELECT count(*)::int AS n FROM se_text")).toEqual({ n: 0 });
  });

  test("Bun's asynchronous client (the run writer's lanes): its errors are translated by their SQLSTATE", async () => {
    const sql = new SQL(url, { adapter: "postgres", max: 1 });
    open.push(sql);
    const unique = await sql.unsafe("INSERT INTO se_parent (id) VALUES ($1)", ["p1"]).catch((error: unknown) => error);
    expect(storageError(unique)?.kind).toBe("unique");
    const nul = await sql.unsafe("INSERT INTO se_text (id, body) VALUES ($1, $2)", ["t3", "a\u0000b"]).catch((error: unknown) => error);
    expect(failureOf(nul)).toEqual({ kind: "not_storable", message: (nul as Error).message });
  });

  test("an error Weft does not tell apart stays PostgreSQL's, with its SQLSTATE", async () => {
    const error = await rejection(c.run("SELECT nope FROM se_parent"));
    expect(error).toBeInstanceOf(PostgresQueryError);
    expect(error).not.toBeInstanceOf(StorageError);
    expect((error as PostgresQueryError).sqlstate).toBe("42703");
  });

  test('a full disk (53100, not simulated here) is kind "full"', () => {
    expect(kindOfCode("53100")).toBe("full");
  });
});
