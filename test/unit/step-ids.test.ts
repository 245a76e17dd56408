/**
 * Step ids (src/lib/ids.ts, stepIdOf): the UUIDv5 of the step's number in its run id's namespace, as any
 * RFC 9562 implementation computes it (the values below are Python's uuid.uuid5), whichever runs were named
 * in between (the function keeps the last run id's bytes).
 */
import { expect, test } from "bun:test";
import { isStepIdOf, isUuid, stepIdOf } from "../../src/lib/ids";

test("a step id is the standard UUIDv5 of its number in the run id's namespace", () => {
  const run = "0198f2a0-0000-7000-8000-0000000000aa";
  const other = "0b55ac5e-df54-5367-86a0-6d737745d22c";
  const expected: Array<[string, number, string]> = [
    [run, 1, "db1034b4-7fd0-5307-b7fc-e1c8220f2b04"],
    [other, 1, "08bc59c3-0a62-5aa8-8bc3-7c8b567669ad"],
    [run, 2, "0b738605-ecdb-55c9-a0a6-14e23b9133fd"],
    [run, 10, "763588b0-e7c6-5906-91fe-ab54a54e767b"],
    [run, 250_000, "99190396-c669-5df1-8866-6c1302f48a44"],
  ];
  for (const [runId, k, id] of expected) expect(`${runId} ${k} ${stepIdOf(runId, k)}`).toBe(`${runId} ${k} ${id}`);
  // Upper-case hex names the same namespace.
  expect(stepIdOf(run.toUpperCase(), 2)).toBe(stepIdOf(run, 2));
});

test("a run id that is not a UUID still gives distinct UUIDs, the same each time", () => {
  const ids = [stepIdOf("run-1", 1), stepIdOf("run-1", 2), stepIdOf("run-11", 1), stepIdOf("x".repeat(200), 1)];
  expect(ids.every(isUuid)).toBe(true);
  expect(new Set(ids).size).toBe(4);
  expect(stepIdOf("run-1", 2)).toBe(ids[1]!);
});

test("isStepIdOf answers for the run and number only, whether the id was named just now or long ago", () => {
  const run = "0198f2a0-0000-7000-8000-0000000000aa";
  const id = stepIdOf(run, 3);
  expect(isStepIdOf(id, run, 3)).toBe(true);
  expect(isStepIdOf(id, run, 4)).toBe(false);
  expect(isStepIdOf(id, "0198f2a0-0000-7000-8000-0000000000ab", 3)).toBe(false);
  // Named long ago: every remembered slot taken by other ids since.
  for (let k = 1; k <= 5_000; k++) stepIdOf("0b55ac5e-df54-5367-86a0-6d737745d22c", k);
  expect(isStepIdOf(id, run, 3)).toBe(true);
  expect(isStepIdOf(id, run, 2)).toBe(false);
  expect(isStepIdOf(Bun.randomUUIDv7(), run, 3)).toBe(false);
});
