/**
 * The clock (src/lib/clock.ts, docs/architecture.md "Time"): a FakeClock moves only when told, and moving it
 * fires the timers that fall due, each at its own time, earliest first.
 */
import { expect, test } from "bun:test";
import { FakeClock, systemClock } from "../../src/lib/clock";

test("advance fires the timers due by then, in order of their time, each seeing the clock at its own time", () => {
  const clock = new FakeClock("2025-01-06T09:00:00.000Z");
  const start = clock.now();
  const fired: Array<[string, number]> = [];
  clock.setTimeout(() => fired.push(["b", clock.now() - start]), 2_000);
  clock.setTimeout(() => fired.push(["a", clock.now() - start]), 1_000);
  clock.setTimeout(() => fired.push(["c", clock.now() - start]), 5_000);
  clock.advance(999);
  expect(fired).toEqual([]);
  clock.advance(1_500);
  expect(fired).toEqual([
    ["a", 1_000],
    ["b", 2_000],
  ]);
  expect(clock.now() - start).toBe(2_499);
  expect(clock.pending).toBe(1);
});

test("a timer armed by a timer fires in the same advance when it falls due; a cleared one never fires", () => {
  const clock = new FakeClock(0);
  const fired: number[] = [];
  const cleared = clock.setTimeout(() => fired.push(-1), 100);
  clock.setTimeout(() => {
    fired.push(clock.now());
    clock.setTimeout(() => fired.push(clock.now()), 300);
  }, 200);
  clock.clearTimeout(cleared);
  clock.advance(1_000);
  expect(fired).toEqual([200, 500]);
  expect(clock.now()).toBe(1_000);
  expect(clock.pending).toBe(0);
});

test("sleep resolves once the clock passed its time; set moves to a time and fires what is due", async () => {
  const clock = new FakeClock("2025-01-06T09:00:00.000Z");
  let woke = false;
  const sleeping = clock.sleep(60_000).then(() => {
    woke = true;
  });
  clock.advance(59_999);
  await Promise.resolve();
  expect(woke).toBe(false);
  clock.set("2025-01-06T09:01:00.000Z");
  await sleeping;
  expect(woke).toBe(true);
  expect(new Date(clock.now()).toISOString()).toBe("2025-01-06T09:01:00.000Z");
});

test("the system clock reads the time and its timers fire", async () => {
  const before = Date.now();
  expect(systemClock.now()).toBeGreaterThanOrEqual(before);
  const fired = await new Promise<boolean>((resolve) => systemClock.setTimeout(() => resolve(true), 1));
  expect(fired).toBe(true);
});
