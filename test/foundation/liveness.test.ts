/**
 * /healthz's database check (src/core/liveness.ts): a probe answers from a round trip under a second old without
 * waiting for another, starts the next one when it is older, and waits for one when the last is too old, failed,
 * or there was none. A database of promises the test settles stands in for the storage port's ping.
 */
import { describe, expect, test } from "bun:test";
import { Liveness } from "../../src/core/liveness";
import { FakeClock } from "../../src/lib/clock";

/** A ping that answers only when the test says so; `count` says how many were asked. */
function heldPings() {
  const pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  return {
    storage: {
      ping: () => new Promise<void>((resolve, reject) => void pending.push({ resolve, reject })),
    },
    get count() {
      return pending.length;
    },
    answer: (i: number) => pending[i]!.resolve(),
    fail: (i: number, message: string) => pending[i]!.reject(new Error(message)),
  };
}

/** Whether `promise` has settled after the microtasks now queued have run: "ok", the error's message, or "waiting". */
async function state(promise: Promise<void>): Promise<string> {
  let outcome = "waiting";
  promise.then(
    () => {
      outcome = "ok";
    },
    (error: Error) => {
      outcome = error.message;
    },
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return outcome;
}

/** A liveness whose first round trip has been answered, at the fake clock's start. */
async function answeredOnce() {
  const clock = new FakeClock();
  const db = heldPings();
  const liveness = new Liveness({ storage: db.storage, clock });
  const first = liveness.check();
  db.answer(0);
  await first;
  return { clock, db, liveness };
}

describe("liveness", () => {
  test("the first probe waits for a round trip; probes within a second after it ask the database nothing", async () => {
    const clock = new FakeClock();
    const db = heldPings();
    const liveness = new Liveness({ storage: db.storage, clock });
    const first = liveness.check();
    const together = liveness.check();
    expect(await state(first)).toBe("waiting");
    expect(db.count).toBe(1); // probes arriving together share one round trip
    db.answer(0);
    expect([await state(first), await state(together)]).toEqual(["ok", "ok"]);

    clock.advance(1_000);
    expect(await state(liveness.check())).toBe("ok");
    expect(db.count).toBe(1);
  });

  test("an older round trip answers at once and starts the next; past five seconds a probe waits for it", async () => {
    const { clock, db, liveness } = await answeredOnce();

    clock.advance(1_500);
    expect(await state(liveness.check())).toBe("ok"); // not waiting for the database...
    expect(db.count).toBe(2); // ...which is asked again
    expect(await state(liveness.check())).toBe("ok");
    expect(db.count).toBe(2); // one round trip at a time

    clock.advance(4_000); // the database has not answered for 5.5 s: now a probe waits
    const late = liveness.check();
    expect(await state(late)).toBe("waiting");
    db.answer(1);
    expect(await state(late)).toBe("ok");
    expect(await state(liveness.check())).toBe("ok");
    expect(db.count).toBe(2);
  });

  test("a failed round trip fails the probes that wait for it, and the next probe asks again instead of answering ok", async () => {
    const { clock, db, liveness } = await answeredOnce();

    clock.advance(2_000);
    expect(await state(liveness.check())).toBe("ok"); // answered from the last round trip, 2 s old
    db.fail(1, "connection refused");
    await Promise.resolve();

    const next = liveness.check();
    expect(await state(next)).toBe("waiting");
    expect(db.count).toBe(3);
    db.fail(2, "connection refused");
    expect(await state(next)).toBe("connection refused");

    const recovered = liveness.check();
    db.answer(3);
    expect(await state(recovered)).toBe("ok");
    expect(await state(liveness.check())).toBe("ok");
    expect(db.count).toBe(4);
  });
});
