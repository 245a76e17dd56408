/**
 * A finished run's steps packed into its row (src/store/sqlite/run-store.ts, packStoredSteps; run-writes.ts, packFinishedRuns):
 * every column comes back exactly as written, large step data shrinks, a run with both forms reads in
 * order, a run too long to pack keeps its rows, and the detail's bounded read sees packed steps too.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stepIdOf } from "../../src/lib/ids";
import { openDatabase } from "../../src/store/sqlite/db";
import { applyWireOp } from "../../src/store/sqlite/run-writers";
import { encodeOp, packFinishedRuns, type WireOp, type WriteOp } from "../../src/store/run-writes";
import { runLayout } from "../../src/store/sqlite/run-names";
import { packRecord, readRecord, recordText, type RowValues } from "../../src/store/run-records";
import { COLD_COLUMNS } from "../../src/store/run-records";
import { MAX_PACKED_STEPS, STEP_COLUMNS, stepValues, type StepRow } from "../../src/store/run-rows";
import { RunStore } from "../../src/store/sqlite/run-store";
import { runRow, stepRow } from "../support/run-rows";

/** Steps packed and read back (no cold columns, no dictionary). */
const packSteps = (steps: RowValues[]) => packRecord(recordText(null, steps));
const unpackSteps = (runId: string, bytes: Uint8Array) => readRecord(runId, bytes, () => null).steps;

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

test("a record stores no step id the engine derives and no duration that is finish minus start; both read back as written", () => {
  const run = "0198f2a0-0000-7000-8000-0000000000aa";
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 27, 12) + ms).toISOString();
  const steps: StepRow[] = [
    stepRow(run, { id: stepIdOf(run, 1), seq: 2, started_at: at(0), finished_at: at(3), duration_ms: 3 }),
    // The engine's id of another place (a step copied by a retry, say): its number is kept.
    stepRow(run, { id: stepIdOf(run, 4), seq: 3, started_at: at(3), finished_at: at(5), duration_ms: 2 }),
    // A random id, and a version-5 id of another run: kept as text. A duration that is not finish − start: kept.
    stepRow(run, { id: "0198f2a0-0000-7000-8000-000000000003", seq: 4, started_at: at(5), finished_at: at(9), duration_ms: 7 }),
    stepRow(run, { id: stepIdOf("0198f2a0-0000-7000-8000-0000000000bb", 4), seq: 5, started_at: at(9), finished_at: null, duration_ms: null }),
  ];
  const text = recordText(null, steps.map(stepValues));
  const [, , tuples] = JSON.parse(new TextDecoder().decode(text)) as [null, number, unknown[][]];
  expect(tuples.map((tuple) => tuple[0])).toEqual([null, 4, steps[2]!.id, steps[3]!.id]);
  expect(tuples.map((tuple) => tuple.length)).toEqual([STEP_COLUMNS.length - 2, STEP_COLUMNS.length - 2, STEP_COLUMNS.length - 1, STEP_COLUMNS.length - 1]);
  expect(unpackSteps(run, packRecord(text))).toEqual(steps);
  expect(Object.keys(unpackSteps(run, packRecord(text))[0]!)).toEqual([...STEP_COLUMNS]);
  // What it saves: the same three-step run with random step ids takes more than 30 bytes more.
  const engine = steps
    .slice(0, 3)
    .map((step, i) => ({ ...step, id: stepIdOf(run, i + 1), duration_ms: 2 + i, finished_at: at(i * 10 + 2 + i), started_at: at(i * 10) }));
  const random = engine.map((step, i) => ({ ...step, id: `0198f2a0-0000-7000-8${i}3c-4f1e9a7b2c0${i}` }));
  const size = (rows: StepRow[]) => packSteps(rows.map(stepValues)).byteLength;
  expect(size(random) - size(engine)).toBeGreaterThan(30);
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

/** A finished webhook run of definition h1 whose payload differs from the others' in a few values. */
const webhookRun = (id: string, order: number) => {
  const body = { orderId: order, email: `customer${order}@example.com`, total: order / 100 };
  const triggerData = JSON.stringify({ method: "POST", headers: { "content-type": "application/json", "user-agent": "Shop-Hook/1.0" }, query: {}, body });
  const run = runRow(id, {
    trigger_data: triggerData,
    org_id: "0198f2a0-0000-7000-8000-00000000000a",
    workflow_name: "Payment events",
    version_id: "0198f2a0-0000-7000-8000-00000000000b",
    executed_version_id: "0198f2a0-0000-7000-8000-00000000000b",
    error_message: order % 2 ? 'step "render" failed' : null,
    step_total: 2,
  });
  const steps = [
    stepRow(id, { id: `${id}-1`, seq: 1, node_id: "shape", input_data: JSON.stringify({ fields: body }), output_data: JSON.stringify(body) }),
    stepRow(id, {
      id: `${id}-2`,
      seq: 2,
      node_id: "render",
      input_data: JSON.stringify({ template: `Order ${order}` }),
      output_data: JSON.stringify({ text: `Order ${order}` }),
    }),
  ];
  return { run, steps, ops: [{ op: "insertRun", row: run }, ...steps.map((row): WriteOp => ({ op: "insertStep", row }))] as WriteOp[] };
};
/** A run's row as stored, its searched columns read back as text (SQLite stores them compact: run-layout.ts). */
const rawRow = (store: RunStore, id: string) =>
  runLayout(store.db).decode(store.db.query("SELECT * FROM runs WHERE id = ?").get(id) as Record<string, unknown>);

test("a finished run's cold columns are in its record, compressed against its definition's dictionary, and read back as written", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  const runs = [webhookRun("r1", 1001), webhookRun("r2", 2002), webhookRun("r3", 3003)];
  for (const r of runs) apply(store, r.ops);
  // The row keeps what queries use; the record holds the rest.
  expect(rawRow(store, "r2")).toMatchObject({ trigger_data: "", org_id: "", workflow_name: "", version_id: null, finished_at: null, error_message: null });
  expect(rawRow(store, "r2")).toMatchObject({ workflow_id: "wf", status: "completed", started_at: runs[1]!.run.started_at, definition_hash: "h1" });
  // One dictionary for the three runs of the definition: the first one's record.
  expect(db.query("SELECT definition_hash FROM run_dictionaries").all()).toEqual([{ definition_hash: "h1" }]);
  // Read through another store (nothing cached): the run, its steps, the list and the trigger data as written.
  const reader = new RunStore(db);
  for (const r of runs) {
    expect(reader.getRow(r.run.id)).toEqual(r.run);
    expect(reader.steps(r.run.id)).toEqual(r.steps);
  }
  const listed = reader.list({ workspaceId: "ws", environments: ["production"], sort: "newest", limit: 10, offset: 0 });
  expect(listed.total).toBe(3);
  expect([...listed.rows].sort((a, b) => a.id.localeCompare(b.id)) as unknown[]).toEqual(
    runs.map((r) => {
      const { state: _s, response: _r, resume_token_hash: _t, owner: _o, ...listedRow } = r.run;
      return listedRow;
    }),
  );
  expect(
    reader
      .recentTriggerData("wf", "webhook", 5)
      .map((d) => (d as { body: { orderId: number } }).body.orderId)
      .sort(),
  ).toEqual([1001, 2002, 3003]);
  // Against the dictionary, a run's record is a fraction of the same record compressed alone.
  const bytes = (rawRow(store, "r3").packed_steps as Uint8Array).byteLength;
  const alone = packRecord(recordText([], runs[2]!.steps.map(stepValues))).byteLength;
  expect(bytes).toBeLessThan(alone * 0.6);
});

test("a definition's dictionary is remade from its first four records: a first run unlike the rest costs the later ones nothing", () => {
  const recordBytes = (store: RunStore, ids: string[]) =>
    ids.reduce((sum, id) => sum + (rawRow(store, id).packed_steps as Uint8Array).byteLength, 0) / ids.length;
  const later = Array.from({ length: 30 }, (_, i) => `r${i + 5}`);
  // A test call first (empty body, no steps' data), then the real traffic.
  const odd = webhookRun("r1", 1);
  const probe = {
    run: { ...odd.run, trigger_data: '{"body":{},"headers":{},"query":{}}', error_message: null },
    steps: odd.steps.map((step) => ({ ...step, input_data: "{}", output_data: "{}" })),
  };
  const oddFirst = new RunStore(openDatabase(":memory:"));
  apply(oddFirst, [{ op: "insertRun", row: probe.run }, ...probe.steps.map((row): WriteOp => ({ op: "insertStep", row }))]);
  const usual = new RunStore(openDatabase(":memory:"));
  apply(usual, webhookRun("r1", 1999).ops);
  for (const store of [oddFirst, usual]) for (let i = 2; i <= 34; i++) apply(store, webhookRun(`r${i}`, 1000 + i * 37).ops);
  expect(Math.abs(recordBytes(oddFirst, later) - recordBytes(usual, later))).toBeLessThan(3);
  // Two dictionaries: the first record's (which the first runs name) and the one of the first four.
  expect(oddFirst.db.query("SELECT count(*) AS n FROM run_dictionaries WHERE definition_hash = 'h1'").get()).toEqual({ n: 2 });
  const reader = new RunStore(oddFirst.db);
  expect(reader.getRow("r1")).toEqual(probe.run);
  expect(reader.steps("r1")).toEqual(probe.steps);
  for (const i of [2, 4, 5, 34]) expect(reader.getRow(`r${i}`)).toEqual(webhookRun(`r${i}`, 1000 + i * 37).run);
});

test("a one-record dictionary found stored (another connection, a restart) goes on growing; a grown one does not", () => {
  const file = join(mkdtempSync(join(tmpdir(), "weft-dict-")), "weft.db");
  const dictionaries = (store: RunStore) => (store.db.query("SELECT count(*) AS n FROM run_dictionaries").get() as { n: number }).n;
  const first = new RunStore(openDatabase(file));
  apply(first, webhookRun("r1", 1).ops);
  expect(dictionaries(first)).toBe(1);
  const restarted = new RunStore(openDatabase(file));
  for (let i = 2; i <= 4; i++) apply(restarted, webhookRun(`r${i}`, i).ops);
  expect(dictionaries(restarted)).toBe(2);
  const again = new RunStore(openDatabase(file));
  for (let i = 5; i <= 9; i++) apply(again, webhookRun(`r${i}`, i).ops);
  expect(dictionaries(again)).toBe(2);
  const reader = new RunStore(openDatabase(file));
  for (let i = 1; i <= 9; i++) expect(reader.getRow(`r${i}`)).toEqual(webhookRun(`r${i}`, i).run);
});

test("a record whose dictionary is missing is an error, not an empty run", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  apply(store, webhookRun("r1", 1).ops);
  db.run("DELETE FROM run_dictionaries");
  expect(() => new RunStore(db).getRow("r1")).toThrow(/needs dictionary [0-9a-f]{16}, which is not stored/);
});

test("a cold column changed after the run was packed is changed in its record", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  const { run, ops } = webhookRun("r1", 2);
  apply(store, ops);
  apply(store, [{ op: "patchRun", id: "r1", patch: { error_message: "cancelled later", retried_by_run_id: "r9" } }]);
  expect(store.getRow("r1")).toEqual({ ...run, error_message: "cancelled later", retried_by_run_id: "r9" });
  expect(rawRow(store, "r1")).toMatchObject({ error_message: null, retried_by_run_id: "r9" });
});

test("a finish that is start plus duration is not in the record; one that is not is kept; a later duration leaves it as it was", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  const derived = webhookRun("r1", 1);
  // Written elsewhere: the finish is not the start plus the duration.
  const kept = webhookRun("r2", 2);
  kept.run.finished_at = "2026-11-22T00:00:00.005Z";
  for (const r of [derived, kept]) apply(store, r.ops);
  const dictionary = (id: string) => (db.query("SELECT bytes FROM run_dictionaries WHERE id = ?").get(id) as { bytes: Uint8Array } | null)?.bytes ?? null;
  const coldFinish = (id: string) => readRecord(id, rawRow(store, id).packed_steps as Uint8Array, dictionary).cold![COLD_COLUMNS.indexOf("finished_at")];
  expect([coldFinish("r1"), coldFinish("r2")]).toEqual([0, "2026-11-22T00:00:00.005Z"]);
  expect(store.getRow("r1")).toEqual(derived.run);
  expect(store.getRow("r2")).toEqual(kept.run);
  apply(store, [{ op: "patchRun", id: "r1", patch: { duration_ms: 50 } }]);
  expect(store.getRow("r1")).toEqual({ ...derived.run, duration_ms: 50 });
  expect(coldFinish("r1")).toBe(derived.run.finished_at);
});

test("a run packed when it finishes moves its cold columns into its record too", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  const { run, steps } = webhookRun("r1", 3);
  apply(store, [
    { op: "insertRun", row: { ...run, status: "running", finished_at: null, duration_ms: null, error_message: null } },
    ...steps.map((row): WriteOp => ({ op: "insertStep", row })),
  ]);
  expect(rawRow(store, "r1")).toMatchObject({ trigger_data: run.trigger_data, packed_steps: null });
  apply(store, [{ op: "patchRun", id: "r1", patch: { status: "completed", finished_at: run.finished_at, duration_ms: 1, error_message: run.error_message } }]);
  expect(rawRow(store, "r1")).toMatchObject({ trigger_data: "", org_id: "", finished_at: null });
  expect(store.getRow("r1")).toEqual(run);
  expect(store.steps("r1")).toEqual(steps);
});

test("retention deletes the dictionaries of definitions no run uses, once unannounced for a day", () => {
  const db = openDatabase(":memory:");
  const store = new RunStore(db);
  apply(store, [{ op: "putDefinition", hash: "h1", text: "{}" }, ...webhookRun("r1", 1).ops]);
  apply(store, [{ op: "deleteRuns", ids: ["r1"] }, { op: "pruneDefinitions" }]);
  // Announced moments ago: kept.
  expect(db.query("SELECT count(*) AS n FROM run_dictionaries").get()).toEqual({ n: 1 });
  db.run("UPDATE run_dictionaries SET seen_at = '2026-01-01T00:00:00.000Z'");
  apply(store, [{ op: "pruneDefinitions" }]);
  expect(db.query("SELECT count(*) AS n FROM run_dictionaries").get()).toEqual({ n: 0 });
  // The next run of that definition makes and stores a dictionary again.
  apply(store, [{ op: "putDefinition", hash: "h1", text: "{}" }, ...webhookRun("r2", 2).ops]);
  expect(new RunStore(db).getRow("r2")).toEqual(webhookRun("r2", 2).run);
});
