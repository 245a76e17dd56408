/**
 * Who polls, holds a subscription, renews a registration (src/core/triggers/ownership.ts). Two instances are
 * two LeaseOwnerships on one database with one fake clock: one holds a name at a time, the holder keeps it by
 * renewing, the other takes it once it lapses or is released. A single process (SQLite) owns everything and
 * writes no lease. The same with real processes on PostgreSQL: test/cluster/triggers.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "../../src/lib/clock";
import { LeaseOwnership, POLL_LEASE, soleOwner, SUBSCRIPTION_LEASE } from "../../src/core/triggers/ownership";
import { definePiece, trigger } from "../../src/pieces-sdk";
import { openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import { storageOf } from "../../src/store/storage";
import { definition, triggerApp, type TriggerApp } from "./harness";

const LEASE_MS = 30_000;

function twoInstances() {
  const db: Db = openDatabase(join(mkdtempSync(join(tmpdir(), "weft-own-")), "weft.db"), { synchronous: "NORMAL" });
  const clock = new FakeClock("2025-01-06T09:00:00.000Z");
  const storage = storageOf(db);
  const one = new LeaseOwnership({ storage, owner: "one", leaseMs: LEASE_MS, clock });
  const two = new LeaseOwnership({ storage, owner: "two", leaseMs: LEASE_MS, clock });
  return { db, clock, one, two };
}

describe("leases between two instances", () => {
  test("one holds a name at a time; renewing keeps it; once the holder stops renewing, the other takes it after the lease", async () => {
    const { clock, one, two } = twoInstances();
    expect(await one.claim("poll:a")).toBe(true);
    expect(await two.claim("poll:a")).toBe(false);
    expect(one.holds("poll:a")).toBe(true);
    expect(two.holds("poll:a")).toBe(false);
    expect(await two.holder("poll:a")).toBe("one");

    // The holder renews every third of the lease: the other never gets it.
    for (let i = 0; i < 6; i++) {
      clock.advance(LEASE_MS / 3);
      expect(await one.renew()).toEqual([]);
      expect(await two.claim("poll:a")).toBe(false);
    }
    // The holder dies (no more renewals): the lease lapses and the other takes it.
    clock.advance(LEASE_MS - 1);
    expect(await two.claim("poll:a")).toBe(false);
    clock.advance(1);
    expect(await two.claim("poll:a")).toBe(true);
    expect(await two.confirm("poll:a")).toBe(true);
    // The old holder, back, learns it lost the name at its next renewal, and cannot take it back.
    expect(await one.confirm("poll:a")).toBe(false);
    expect(await one.renew()).toEqual(["poll:a"]);
    expect(one.holds("poll:a")).toBe(false);
    expect(await one.claim("poll:a")).toBe(false);
  });

  test("a release hands the name over at once; a drop forgets it for everyone; known lists claimed names by kind", async () => {
    const { one, two } = twoInstances();
    await one.claim(`${SUBSCRIPTION_LEASE}a`);
    await one.claim(`${SUBSCRIPTION_LEASE}b`);
    await one.claim(`${POLL_LEASE}a`);
    expect(await two.known(SUBSCRIPTION_LEASE)).toEqual([`${SUBSCRIPTION_LEASE}a`, `${SUBSCRIPTION_LEASE}b`]);

    await one.release(`${SUBSCRIPTION_LEASE}a`);
    expect(await two.claim(`${SUBSCRIPTION_LEASE}a`)).toBe(true);
    await two.drop(`${SUBSCRIPTION_LEASE}b`);
    expect(await two.known(SUBSCRIPTION_LEASE)).toEqual([`${SUBSCRIPTION_LEASE}a`]);
    expect(await one.renew()).toEqual([`${SUBSCRIPTION_LEASE}b`]);

    // A clean stop releases everything it holds.
    await one.releaseAll();
    expect(await two.claim(`${POLL_LEASE}a`)).toBe(true);
    expect(await one.renew()).toEqual([]);
  });

  test("a held name is claimed again without asking the database while more than half the lease runs", async () => {
    const { db, clock, one } = twoInstances();
    await one.claim("poll:a");
    db.run("DELETE FROM leases");
    clock.advance(LEASE_MS / 2 - 1);
    expect(await one.claim("poll:a")).toBe(true);
    expect(await one.holder("poll:a")).toBeNull();
    // Past half the lease it asks again (and, the row being gone, takes it anew).
    clock.advance(2);
    expect(await one.claim("poll:a")).toBe(true);
    expect(await one.holder("poll:a")).toBe("one");
  });
});

describe("a single process (SQLite)", () => {
  let h: TriggerApp | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  test("owns every poll and subscription without writing a lease", async () => {
    const piece = definePiece({
      id: "solo",
      name: "Solo",
      version: "1.0.0",
      description: "a poll and a subscription for the ownership test",
      actions: [],
      triggers: [
        trigger({ id: "items", name: "Items", description: "", type: "poll", props: {}, poll: async () => [{ id: 1 }] }),
        trigger({ id: "held", name: "Held", description: "", type: "subscription", props: {}, subscribe: async () => ({ close() {} }) }),
      ],
    });
    h = await triggerApp({ clock: new FakeClock("2025-01-06T09:00:00.000Z"), pieces: [piece] });
    expect(h.triggers.ownership).toBe(soleOwner);
    const step = { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: {} } };
    const polled = await h.publishWorkflow(definition({ name: "trigger", type: "poll", pieceId: "solo", actionId: "items", config: {} }, step));
    const held = await h.publishWorkflow(definition({ name: "trigger", type: "subscription", pieceId: "solo", actionId: "held", config: {} }, step));
    h.triggers.subscriptions.start();
    expect((await h.triggers.poller.tick()).map((outcome) => outcome.result)).toEqual(["baseline"]);
    for (let i = 0; i < 50 && !(await h.triggers.subscriptions.status(held.id))?.open; i++) await Bun.sleep(10);

    expect(await h.triggers.subscriptions.status(held.id)).not.toHaveProperty("owner");
    expect(await h.triggers.poller.status(polled.id)).not.toHaveProperty("owner");
    expect((await h.triggers.subscriptions.status(held.id))?.open).toBe(true);
    expect(h.db.query("SELECT COUNT(*) AS n FROM leases").get()).toEqual({ n: 0 });
  });
});
