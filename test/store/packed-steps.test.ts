/**
 * A finished run's steps packed into its row (src/store/runs.ts, packSteps; run-writes.ts, packFinishedRuns):
 * every column comes back exactly as written, large step data shrinks, a run with both forms reads in
 * order, a run too long to pack keeps its rows, and the detail's bounded read sees packed steps too.
 */
import { expect, test } from "bun:test";
import { openDatabase } from "../../src/store/db";
import { applyWireOp, encodeOp, packFinishedRuns, type WireOp, type WriteOp } from "../../src/store/run-writes";
import { MAX_PACKED_STEPS, RunStore, STEP_COLUMNS, packSteps, stepValues, unpackSteps, type StepRow } from "../../src/store/runs";
import { runRow, stepRow } from "../support/run-rows";

/** One writer's ops as the run writer applies them (one group). */
const apply = (store: RunStore, ops: WriteOp[]) => {
  for (const op of packFinishedRuns(ops.map(encodeOp))) applyWireOp(store.db, store, op);
};
const rowsOf = (store: RunStore, id: string) => (store.db.query("SELECT count(*) AS n FROM run_steps WHERE run_id = ?").get(id) as { n: number }).n;
const packedOf = (store: RunStore, id: string) => (store.db.query("SELECT packed_steps IS NOT NULL AS p FROM runs WHERE id = ?").get(id) as { p: number }).p;

test("packed steps read back exactly as written, whatever their values", () => {
  const steps: StepRow[] = [
    stepRow("r1", { id: "0198f2a0-0000-7000-8000-000000000001", seq: 2, started_at: "2026-11-26T03:00:00.123Z", finished_at: "2026-11-26T03:00:00.125Z" }),
    stepRow("r1", {
      id: "s2",
      seq: 3,
      node_type: "LOOP",
      piece_id: null,
      action_id: null,
      display_name: null,
      status: "failed",
      input_data: '{"text":"line\\nbreak \\"quoted\\" é ☃ \\u2028"}',
      output_data: null,
      output_truncated: 1,
      error_message: "upstream answered 502",
      retry_count: 3,
      // Not the canonical ISO text of its instant: kept as written, not as an offset.
      started_at: "2026-11-26T04:00:00Z",
      finished_at: null,
      duration_ms: null,
    }),
    stepRow("r1", { id: "s3", seq: 3, started_at: null, finished_at: "1999-12-31T23:59:59.999Z", output_data: "[1, 2.50, -0]" }),
  ];
  const packed = packSteps(steps.map(stepValues));
  expect(unpackSteps("r1", packed)).toEqual(steps);
  expect(Object.keys(unpackSteps("r1", packed)[0]!)).toEqual([...STEP_COLUMNS]);
});

test("large step data is stored compressed", () => {
  const rows = Array.from({ length: 2_000 }, (_, i) => ({ id: i, email: `customer${i % 50}@example.com`, status: i % 3 ? "paid" : "open" }));
  const output = JSON.stringify(rows);
  const packed = packSteps([stepValues(stepRow("r1", { output_data: output }))]);
  expect(output.length).toBeGreaterThan(100_000);
  expect(packed.byteLength).toBeLessThan(output.length / 5);
  expect(unpackSteps("r1", packed)[0]!.output_data).toBe(output);
});

test("a finished run is inserted with its steps packed, an update applied first; a running run keeps rows", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  const done = stepRow("r1", { id: "b", seq: 3, output_data: '{"n":2}' });
  apply(store, [
    { op: "insertRun", row: runRow("r1") },
    { op: "insertStep", row: stepRow("r1", { id: "a", seq: 2 }) },
    { op: "insertStep", row: { ...done, status: "running", output_data: null } },
    { op: "updateStep", row: done },
    { op: "insertRun", row: runRow("r2", { status: "running", finished_at: null, duration_ms: null }) },
    { op: "insertStep", row: stepRow("r2") },
  ]);
  expect(store.steps("r1")).toEqual([stepRow("r1", { id: "a", seq: 2 }), done]);
  expect([rowsOf(store, "r1"), packedOf(store, "r1")]).toEqual([0, 1]);
  expect(store.steps("r2")).toEqual([stepRow("r2")]);
  expect([rowsOf(store, "r2"), packedOf(store, "r2")]).toEqual([1, 0]);
  // The run row reads the same as one inserted without packing.
  expect(store.getRow("r1")).toEqual(runRow("r1"));
});

test("a run with packed steps and step rows reads them in seq order; the bounded read keeps first and last", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  apply(store, [
    { op: "insertRun", row: runRow("r1") },
    ...[2, 4, 6].map((seq): WriteOp => ({ op: "insertStep", row: stepRow("r1", { id: `p${seq}`, seq }) })),
  ]);
  for (const seq of [3, 7]) store.insertStep(stepRow("r1", { id: `r${seq}`, seq }));
  expect(store.steps("r1").map((s) => s.id)).toEqual(["p2", "r3", "p4", "p6", "r7"]);
  expect(store.stepsBounded("r1", 4)).toMatchObject({ omitted: 1 });
  expect(store.stepsBounded("r1", 4).steps.map((s) => s.id)).toEqual(["p2", "r3", "p6", "r7"]);
  expect(store.stepsBounded("r1", 5).steps.map((s) => s.id)).toEqual(["p2", "r3", "p4", "p6", "r7"]);
});

test(`a run of more than ${MAX_PACKED_STEPS} steps keeps its step rows`, () => {
  const ops: WireOp[] = [encodeOp({ op: "insertRun", row: runRow("r1") })];
  for (let seq = 0; seq <= MAX_PACKED_STEPS; seq++) ops.push(encodeOp({ op: "insertStep", row: stepRow("r1", { id: `s${seq}`, seq }) }));
  expect(packFinishedRuns(ops)).toEqual(ops);
  expect(packFinishedRuns(ops.slice(0, MAX_PACKED_STEPS + 1)).map((op) => op[0])).toEqual([8]);
});

test("a run inserted running has its step rows packed when it finishes; a step that ends later is updated there", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  const first = stepRow("r1", { id: "a", seq: 2 });
  const slow = stepRow("r1", { id: "b", seq: 3, status: "running", output_data: null, finished_at: null, duration_ms: null });
  apply(store, [
    { op: "insertRun", row: runRow("r1", { status: "running", finished_at: null, duration_ms: null }) },
    { op: "insertStep", row: first },
  ]);
  apply(store, [{ op: "insertStep", row: slow }]);
  expect([rowsOf(store, "r1"), packedOf(store, "r1")]).toEqual([2, 0]);
  // Cancelled while its second step still runs.
  apply(store, [{ op: "patchRun", id: "r1", patch: { status: "cancelled", finished_at: "2026-11-22T00:00:01.000Z", duration_ms: 1000 } }]);
  expect([rowsOf(store, "r1"), packedOf(store, "r1")]).toEqual([0, 1]);
  expect(store.steps("r1")).toEqual([first, slow]);
  const ended = { ...slow, status: "cancelled" as const, finished_at: "2026-11-22T00:00:01.200Z", duration_ms: 1200 };
  apply(store, [{ op: "updateStep", row: ended }]);
  expect(store.steps("r1")).toEqual([first, ended]);
  expect(store.getRow("r1")).toMatchObject({ status: "cancelled", duration_ms: 1000 });
});
