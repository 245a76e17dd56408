/**
 * The reads of runs through the storage port (src/store/run-read-repository.ts): a run's row with its cold
 * columns from its record, its steps from rows, record or both (bounded for the detail), definitions, the last
 * run of workflows, the trigger data of recent runs and the unfinished runs — each the answer RunStore gives.
 * On PostgreSQL they are PostgreSQL's own statements, awaited on the port's pool (records decoded with their
 * dictionaries read first). Runs on SQLite, and on PostgreSQL under `WEFT_TEST_STORAGE=postgres`; there, where
 * the store answers no SQL of its own, the run writer writes the history and RunStore's answers are those it
 * gives on a SQLite database holding the same history.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/store/db";
import { openDatabase } from "../../src/store/sqlite/db";
import { recordDictionary } from "../../src/store/run-records";
import { type RunRow, runValues, type StepRow, stepValues } from "../../src/store/run-rows";
import { RunStore } from "../../src/store/sqlite/run-store";
import { isPostgres } from "../../src/store/postgres/handle";
import { inlineRunWriter } from "../support/inline-run-writer";
import type { WriteOp } from "../../src/store/run-writes";
import { storageOf } from "../../src/store/storage";
import { freshPostgresDatabase, postgresClient, testStorage } from "../support/postgres-storage";
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

/** The runs of the history below, and the steps each is written with. */
function history() {
  const rows = {
    running: runRow("r-running", { status: "running", finished_at: null, duration_ms: null, started_at: at(50), workflow_id: "wf-1" }),
    packed: runRow("r-packed", {
      started_at: at(10),
      finished_at: at(10, 250),
      duration_ms: 250,
      status: "failed",
      error_message: "upstream answered 502",
      trigger_type: "subscription",
      trigger_data: JSON.stringify({ body: { n: 1 } }),
      retry_of_run_id: "r-older",
      workflow_id: "wf-1",
    }),
    newer: runRow("r-newer", { started_at: at(20), trigger_type: "subscription", trigger_data: JSON.stringify({ body: { n: 2 } }), workflow_id: "wf-1" }),
    both: runRow("r-both", { started_at: at(5), status: "cancelled", workflow_id: "wf-2", tags: '["vip"]' }),
    long: runRow("r-long", { status: "paused", finished_at: null, duration_ms: null, started_at: at(1), workflow_id: "wf-2", wait_step: "n3" }),
    pending: runRow("r-pending", { status: "pending", finished_at: null, duration_ms: null, started_at: at(70), workflow_id: "wf-3", environment: "test" }),
  } satisfies Record<string, RunRow>;
  const runSteps = {
    running: steps("r-running", 3),
    packed: steps("r-packed", 2),
    newer: steps("r-newer", 1),
    both: steps("r-both", 4),
    long: steps("r-long", 12),
  };
  // A step that ended after its run was cancelled, written after the run's record.
  const late = steps("r-both", 1, 9)[0]!;
  return { rows: rows as Record<string, RunRow>, runSteps, late };
}

/** A history of every kind of run: unfinished with step rows, finished with a record, both forms, long ones. */
function seed(db: Db) {
  const store = new RunStore(db);
  const { rows, runSteps, late } = history();
  store.putDefinition("h1", '{"trigger":{"name":"t"}}');
  store.insertRun(rows.running!);
  for (const step of runSteps.running) store.insertStep(step);
  // Cold columns in its record, compressed against its definition's dictionary.
  store.insertFinishedRun(runValues(rows.packed!), runSteps.packed.map(stepValues));
  store.insertFinishedRun(runValues(rows.newer!), runSteps.newer.map(stepValues));
  // Packed by the writer after its end, then one more step row (a step that ended after the run was cancelled).
  store.insertRun(rows.both!);
  for (const step of runSteps.both) store.insertStep(step);
  store.packStoredSteps("r-both");
  store.insertStep(late);
  // Too many steps for the detail: rows only.
  store.insertRun(rows.long!);
  for (const step of runSteps.long) store.insertStep(step);
  store.insertRun(rows.pending!);
  return { store, rows };
}

/**
 * The same history written by the engine's run writer (src/store/run-writer.ts), one write after the other:
 * the store PostgreSQL's port reads answers no SQL of its own (src/store/postgres/handle.ts). A run inserted
 * finished with its steps is stored with them and its cold columns in its record (the packed ones, and r-both,
 * whose late step is then a row beside its record); unfinished runs keep step rows.
 */
async function writeHistory(db: Db): Promise<void> {
  const writer = inlineRunWriter(db, 1);
  const { rows, runSteps, late } = history();
  const run = (row: RunRow, of: StepRow[] = []): WriteOp[] => [{ op: "insertRun", row }, ...of.map((step): WriteOp => ({ op: "insertStep", row: step }))];
  await writer.write([{ op: "putDefinition", hash: "h1", text: '{"trigger":{"name":"t"}}' }]);
  await writer.write(run(rows.running!, runSteps.running));
  await writer.write(run(rows.packed!, runSteps.packed));
  await writer.write(run(rows.newer!, runSteps.newer));
  await writer.write(run(rows.both!, runSteps.both));
  await writer.write([{ op: "insertStep", row: late }]);
  await writer.write(run(rows.long!, runSteps.long));
  await writer.write(run(rows.pending!));
  await writer.close();
}

/**
 * The history on `db`, with the run store the port's answers are held against: on SQLite the one that wrote it
 * on the same database; on PostgreSQL, written there by the run writer, the one that wrote it on a SQLite
 * database of its own.
 */
async function seeded(db: Db) {
  if (testStorage() === "sqlite") return seed(db);
  await writeHistory(db);
  return seed(openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" }));
}

/** A run's record as stored (its packed_steps). */
async function storedRecord(db: Db, id: string): Promise<Uint8Array> {
  if (!isPostgres(db)) return db.query<{ packed_steps: Uint8Array }, [string]>("SELECT packed_steps FROM runs WHERE id = ?").get(id)!.packed_steps;
  return (await postgresClient(db.url).get<{ packed_steps: Uint8Array }>("SELECT packed_steps FROM runs WHERE id = $1", [id]))!.packed_steps;
}

describe(`the reads of runs through the port (${testStorage()})`, () => {
  test("a run's row, with the cold columns its record holds; an unknown run is null", async () => {
    const db = await openStoreDb();
    const { store, rows } = await seeded(db);
    const reads = storageOf(db).runReads;
    // The record of r-packed needs its definition's dictionary: the read fetches it before decoding.
    const record = await storedRecord(db, "r-packed");
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
    await seeded(db);
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
    const { store, rows } = await seeded(db);
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
    const { store } = await seeded(db);
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
