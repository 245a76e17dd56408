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
import type { Db } from "../../src/store/db";
import { openDatabase } from "../../src/store/sqlite/db";
import { IDEMPOTENCY_RETENTION_MS } from "../../src/store/idempotency";
import { storageOf } from "../../src/store/storage";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-idempotency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

/** The records of a fresh store, with the calls the middleware makes (now: the claim's time). */
async function openRecords() {
  const store = storageOf(await openStoreDb()).idempotency;
  const since = () => Date.now() - IDEMPOTENCY_RETENTION_MS;
  return {
    store,
    claim: (credential: string, key: string, owner: string | null, now = Date.now()) =>
      store.claim(credential, key, "fp", owner, now, now - IDEMPOTENCY_RETENTION_MS),
    get: (credential: string, key: string) => store.get(credential, key, since()),
  };
}

describe(`idempotency records (${testStorage()})`, () => {
  test("of two instances claiming one key, one gets it; the other finds it running, then the stored answer", async () => {
    const { store, claim, get } = await openRecords();
    expect(await claim("token-1", "k", "instance-a")).toBe(true);
    expect(await claim("token-1", "k", "instance-b")).toBe(false);
    expect(await get("token-1", "k")).toMatchObject({ state: "running", owner: "instance-a", body: null });
    await store.finish("token-1", "k", 201, '{"data":{"id":"w1"}}');
    expect(await claim("token-1", "k", "instance-b")).toBe(false);
    expect(await get("token-1", "k")).toMatchObject({ state: "done", status: 201, body: '{"data":{"id":"w1"}}' });
    // Keys are per credential.
    expect(await claim("token-2", "k", "instance-b")).toBe(true);
  });

  test("in a cluster only the running claims of instances not alive (and those naming none) are released", async () => {
    const { store, claim, get } = await openRecords();
    await claim("t", "live", "instance-a");
    await claim("t", "dead-1", "instance-b");
    await claim("t", "dead-2", "instance-b");
    await claim("t", "unowned", null);
    await claim("t", "answered", "instance-b");
    await store.finish("t", "answered", 200, "{}");
    expect(await new Idempotency(store, "instance-a").releaseAbandoned(new Set(["instance-a"]))).toBe(3);
    expect((await get("t", "live"))?.state).toBe("running");
    expect(await get("t", "dead-1")).toBeNull();
    expect(await get("t", "dead-2")).toBeNull();
    expect(await get("t", "unowned")).toBeNull();
    expect((await get("t", "answered"))?.state).toBe("done");
    // A released key can be claimed again, by a live instance.
    expect(await claim("t", "dead-1", "instance-a")).toBe(true);
  });

  test("alone, every running claim is released at start-up", async () => {
    const { store, claim, get } = await openRecords();
    await claim("t", "a", null, Date.now() - 10);
    await claim("t", "b", null, Date.now() - 10);
    expect(await new Idempotency(store).releaseAbandoned()).toBe(2);
    expect(await get("t", "a")).toBeNull();
  });

  test("the middleware looks again only when an instance alive at its last look is gone", async () => {
    const { store, claim, get } = await openRecords();
    const idempotency = new Idempotency(store, "instance-a");
    await claim("t", "of-b", "instance-b");
    await claim("t", "of-c", "instance-c");
    // First look (start-up): b and c alive, nothing released.
    expect(await idempotency.releaseAbandoned(new Set(["instance-a", "instance-b", "instance-c"]))).toBe(0);
    expect(await idempotency.releaseAbandoned(new Set(["instance-a", "instance-b", "instance-c", "instance-d"]))).toBe(0);
    // c is gone: its claim is released, b's stays.
    expect(await idempotency.releaseAbandoned(new Set(["instance-a", "instance-b", "instance-d"]))).toBe(1);
    expect((await get("t", "of-b"))?.state).toBe("running");
    expect(await get("t", "of-c")).toBeNull();
  });
});
