/**
 * Idempotency records (src/store/idempotency.ts) as a cluster shares them: one claim per key however many ask
 * at once, a running claim names the instance executing it, and only the claims of instances no longer alive
 * are released (a live instance's request may still answer). Alone (SQLite) every running claim is released at
 * start-up, as before. Runs on SQLite, and on PostgreSQL under `npm run test:postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Idempotency } from "../../src/api/middleware/idempotency";
import { type Db, openDatabase } from "../../src/store/db";
import { IdempotencyStore } from "../../src/store/idempotency";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-idempotency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

describe(`idempotency records (${testStorage()})`, () => {
  test("of two instances claiming one key, one gets it; the other finds it running, then the stored answer", async () => {
    const store = new IdempotencyStore(await openStoreDb());
    expect(store.claim("token-1", "k", "fp", "instance-a")).toBe(true);
    expect(store.claim("token-1", "k", "fp", "instance-b")).toBe(false);
    expect(store.get("token-1", "k")).toMatchObject({ state: "running", owner: "instance-a", body: null });
    store.finish("token-1", "k", 201, '{"data":{"id":"w1"}}');
    expect(store.claim("token-1", "k", "fp", "instance-b")).toBe(false);
    expect(store.get("token-1", "k")).toMatchObject({ state: "done", status: 201, body: '{"data":{"id":"w1"}}' });
    // Another credential's key of the same name is its own.
    expect(store.claim("token-2", "k", "fp", "instance-b")).toBe(true);
  });

  test("in a cluster only the claims of instances no longer alive are released, and unowned ones", async () => {
    const store = new IdempotencyStore(await openStoreDb());
    store.claim("t", "live", "fp", "instance-a");
    store.claim("t", "dead-1", "fp", "instance-b");
    store.claim("t", "dead-2", "fp", "instance-b");
    store.claim("t", "unowned", "fp", null);
    store.claim("t", "answered", "fp", "instance-b");
    store.finish("t", "answered", 200, "{}");
    expect(store.releaseAbandonedExcept(new Set(["instance-a"]))).toBe(3);
    expect(store.get("t", "live")?.state).toBe("running");
    expect(store.get("t", "dead-1")).toBeNull();
    expect(store.get("t", "dead-2")).toBeNull();
    expect(store.get("t", "unowned")).toBeNull();
    expect(store.get("t", "answered")?.state).toBe("done");
    // Released, a retry claims the key again.
    expect(store.claim("t", "dead-1", "fp", "instance-a")).toBe(true);
  });

  test("alone, start-up releases every running claim", async () => {
    const store = new IdempotencyStore(await openStoreDb());
    store.claim("t", "a", "fp", null, Date.now() - 10);
    store.claim("t", "b", "fp", null, Date.now() - 10);
    expect(store.releaseAbandoned()).toBe(2);
    expect(store.get("t", "a")).toBeNull();
  });

  test("the middleware looks again only when an instance alive at its last look is gone", async () => {
    const store = new IdempotencyStore(await openStoreDb());
    const idempotency = new Idempotency(store, "instance-a");
    store.claim("t", "of-b", "fp", "instance-b");
    store.claim("t", "of-c", "fp", "instance-c");
    // First look (start-up): b and c alive, nothing released.
    expect(idempotency.releaseAbandoned(new Set(["instance-a", "instance-b", "instance-c"]))).toBe(0);
    expect(idempotency.releaseAbandoned(new Set(["instance-a", "instance-b", "instance-c", "instance-d"]))).toBe(0);
    // c is gone: its claim is released, b's stays.
    expect(idempotency.releaseAbandoned(new Set(["instance-a", "instance-b", "instance-d"]))).toBe(1);
    expect(store.get("t", "of-b")?.state).toBe("running");
    expect(store.get("t", "of-c")).toBeNull();
  });
});
