/**
 * The reads of runs through the storage port (src/store/run-read-repository.ts): a run's row with its cold
 * columns from its record, its steps from rows, record or both (bounded for the detail), definitions, the last
 * run of workflows, the trigger data of recent runs and the unfinished runs — each the answer RunStore gives.
 * On PostgreSQL they are PostgreSQL's own statements, awaited on the port's pool (records decoded with their
 * dictionaries read first). Runs on SQLite, and on PostgreSQL under `WEFT_TEST_STORAGE=postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, openDatabase } from "../../src/store/db";
import { recordDictionary } from "../../src/store/run-records";
import { type RunRow, RunStore, runValues, type StepRow, stepValues } from "../../src/store/runs";
import { storageOf } from "../../src/store/storage";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";
import { runRow, stepRow } from "../support/run-rows";

const dir = mkdtempSync(join(tmpdir(), "weft-run-reads-port-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

const at = (minute: number, ms = 0) => new Date(Date.UTC(2026, 10, 22, 0, minute) + ms).toISOString();
const steps = (runId: string, n: number, from = 0): StepRow[] =>
  Array.from({ length: n }, (_, i) =>
    stepRow(runId, { id: `${runId}-s${from + i}`, seq: from + i, node_id: `n${from + i}`, output_data: JSON.stringify({ i: from + i, text: "é ☃" }) }),
  );

/** A history of every kind of run: unfinished with step rows, finished with a record, both forms, long ones. */
function seed(db: Db) {
  const store = new RunStore(db);
  const finished = (id: string, overrides: Partial<RunRow>, runSteps: StepRow[]) => {
    const row = runRow(id, overrides);
    store.insertFinishedRun(runValues(row), runSteps.map(stepValues));
    return row;
  };
  const rows: Record<string, RunRow> = {};
  store.putDefinition("h1", '{"trigger":{"name":"t"}}');
  rows.running = runRow("r-running", { status: "running", finished_at: null, duration_ms: null, started_at: at(50), workflow_id: "wf-1" });
  store.insertRun(rows.running);
  for (const step of steps("r-running", 3)) store.insertStep(step);
  // Cold columns in its record, compressed against its definition's dictionary.
  rows.packed = finished(
    "r-packed",
    {
      started_at: at(10),
      finished_at: at(10, 250),
      duration_ms: 250,
      status: "failed",
      error_message: "upstream answered 502",
      trigger_type: "subscription",
      trigger_data: JSON.stringify({ body: { n: 1 } }),
      retry_of_run_id: "r-older",
      workflow_id: "wf-1",
    },
    steps("r-packed", 2),
  );
  rows.newer = finished(
    "r-newer",
    { started_at: at(20), trigger_type: "subscription", trigger_data: JSON.stringify({ body: { n: 2 } }), workflow_id: "wf-1" },
    steps("r-newer", 1),
  );
  // Packed by the writer after its end, then one more step row (a step that ended after the run was cancelled).
  rows.both = runRow("r-both", { started_at: at(5), status: "cancelled", workflow_id: "wf-2", tags: '["vip"]' });
  store.insertRun(rows.both);
  for (const step of steps("r-both", 4)) store.insertStep(step);
  store.packStoredSteps("r-both");
  store.insertStep(steps("r-both", 1, 9)[0]!);
  // Too many steps for the detail: rows only.
  rows.long = runRow("r-long", { status: "paused", finished_at: null, duration_ms: null, started_at: at(1), workflow_id: "wf-2", wait_step: "n3" });
  store.insertRun(rows.long);
  for (const step of steps("r-long", 12)) store.insertStep(step);
  rows.pending = runRow("r-pending", { status: "pending", finished_at: null, duration_ms: null, started_at: at(70), workflow_id: "wf-3", environment: "test" });
  store.insertRun(rows.pending);
  return { store, rows };
}

describe(`the reads of runs through the port (${testStorage()})`, () => {
  test("a run's row, with the cold columns its record holds; an unknown run is null", async () => {
    const db = await openStoreDb();
    const { store, rows } = seed(db);
    const reads = storageOf(db).runReads;
    // The record of r-packed needs its definition's dictionary: the read fetches it before decoding.
    const record = db.query<{ packed_steps: Uint8Array }, [string]>("SELECT packed_steps FROM runs WHERE id = ?").get("r-packed")!.packed_steps;
    expect(recordDictionary(record)).not.toBeNull();
    for (const row of Object.values(rows)) {
      const got = await reads.getRow(row.id);
      expect(got).toEqual(store.getRow(row.id)!);
      expect(got).toEqual(row);
    }
    expect(await reads.getRow("nobody")).toBeNull();
    expect(await reads.has("r-packed")).toBe(true);
    expect(await reads.has("nobody")).toBe(false);
    expect(await reads.definition("h1")).toBe('{"trigger":{"name":"t"}}');
    expect(await reads.definition("h-none")).toBeNull();
  });

  test("steps from rows, from a record, and from both, in order; the detail's bounded read elides the middle", async () => {
    const db = await openStoreDb();
    seed(db);
    const reads = storageOf(db).runReads;
    expect(await reads.steps("r-running")).toEqual(steps("r-running", 3));
    expect(await reads.steps("r-packed")).toEqual(steps("r-packed", 2));
    expect(await reads.steps("r-both")).toEqual([...steps("r-both", 4), ...steps("r-both", 1, 9)]);
    expect(await reads.steps("nobody")).toEqual([]);

    expect(await reads.stepsBounded("r-long", 20)).toEqual({ steps: steps("r-long", 12), omitted: 0 });
    const long = steps("r-long", 12);
    expect(await reads.stepsBounded("r-long", 6)).toEqual({ steps: [...long.slice(0, 3), ...long.slice(9)], omitted: 6 });
    expect(await reads.stepsBounded("r-long", 5)).toEqual({ steps: [...long.slice(0, 2), ...long.slice(9)], omitted: 7 });
    const both = [...steps("r-both", 4), ...steps("r-both", 1, 9)];
    expect(await reads.stepsBounded("r-both", 4)).toEqual({ steps: [...both.slice(0, 2), ...both.slice(3)], omitted: 1 });
    expect(await reads.stepsBounded("r-packed", 4)).toEqual({ steps: steps("r-packed", 2), omitted: 0 });
  });

  test("the last run of each workflow, the trigger data of recent runs, the unfinished runs", async () => {
    const db = await openStoreDb();
    const { store, rows } = seed(db);
    const reads = storageOf(db).runReads;
    const ids = ["wf-3", "wf-1", "wf-none", "wf-2"];
    const last = await reads.lastRuns(ids);
    expect(last).toEqual(store.lastRuns(ids));
    expect([...last.entries()]).toEqual([
      ["wf-3", { status: "pending", startedAt: at(70) }],
      ["wf-1", { status: "running", startedAt: at(50) }],
      ["wf-2", { status: "cancelled", startedAt: at(5) }],
    ]);
    expect(await reads.lastRuns([])).toEqual(new Map());

    expect(await reads.recentTriggerData("wf-1", "subscription", 5)).toEqual([{ body: { n: 2 } }, { body: { n: 1 } }]);
    expect(await reads.recentTriggerData("wf-1", "subscription", 1)).toEqual(store.recentTriggerData("wf-1", "subscription", 1));
    expect(await reads.recentTriggerData("wf-1", "cron", 5)).toEqual([]);
    expect(await reads.recentTriggerData("wf-none", "subscription", 5)).toEqual([]);

    const unfinished = await reads.unfinished();
    expect(unfinished.map((row) => row.id)).toEqual(["r-long", "r-pending", "r-running"]);
    expect(unfinished).toEqual(store.unfinished());
    expect(unfinished[0]).toEqual(rows.long!);
  });

  test("a list page through the port is RunStore's, rows decoded with their cold columns", async () => {
    const db = await openStoreDb();
    const { store } = seed(db);
    const reads = storageOf(db).runReads;
    const base = { workspaceId: "ws", environments: ["production" as const], limit: 2, offset: 0 };
    for (const sort of ["newest", "oldest", "duration"] as const) {
      for (const extra of [
        {},
        { workflowId: "wf-1" },
        { tag: "vip" },
        { status: "failed" as const },
        { triggerType: "subscription" },
        { workflowId: "wf-none" },
      ]) {
        for (const offset of [0, 2, 4]) {
          const filter = { ...base, ...extra, sort, offset };
          expect({ filter, ...(await reads.list(filter)) }).toEqual({ filter, ...store.list(filter) });
        }
      }
    }
    const { rows, total } = await reads.list({ ...base, sort: "oldest", limit: 10 });
    expect(total).toBe(5);
    expect(rows.find((row) => row.id === "r-packed")).toMatchObject({ error_message: "upstream answered 502", retry_of_run_id: "r-older", status: "failed" });
    expect(await reads.list({ ...base, workspaceId: "ws-none", sort: "newest" })).toEqual({ rows: [], total: 0 });
  });
});
