/**
 * The run writer thread (src/store/sqlite/run-writers.ts, ThreadWriter), against a real database file: what a write
 * resolves is committed and readable from another connection; a failing write is rejected with SQLite's
 * message while the other writes of its batch commit; a definition is serialised once yet always stored,
 * also after retention pruned it; a run inserted finished has its steps packed in its row and reads back
 * exactly as written, one inserted running keeps step rows.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ThreadWriter } from "../../src/store/sqlite/run-writers";
import { openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import { CompactLayout } from "../../src/store/run-layout";
import { runLayout } from "../../src/store/sqlite/run-names";
import { PostgresRunNames } from "../../src/store/postgres/run-names";
import { RUN_COLUMNS, type RunRow, type StepRow } from "../../src/store/run-rows";
import { RunStore } from "../../src/store/sqlite/run-store";
import { appSql } from "../support/app-sql";
import { postgresClient } from "../support/postgres-storage";
import { runRow, stepRow } from "../support/run-rows";

const open: Array<{ writer: ThreadWriter; db: Db }> = [];
afterEach(async () => {
  for (const { writer, db } of open.splice(0)) {
    await writer.close();
    db.close();
  }
});

function setup() {
  const path = join(mkdtempSync(join(tmpdir(), "weft-writer-")), "weft.db");
  const db = openDatabase(path, { synchronous: "NORMAL" });
  const errors: unknown[] = [];
  const writer = new ThreadWriter({ dbPath: path, synchronous: "NORMAL" }, (error) => errors.push(error));
  open.push({ writer, db });
  return { db, writer, errors };
}

const run = (id: string, hash = "h1"): RunRow => runRow(id, { definition_hash: hash, trigger_data: JSON.stringify({ body: { 'quote"d': "line\nbreak" } }) });
const step = (runId: string): StepRow => stepRow(runId);

const definitionOf = (db: Db, hash: string) =>
  (db.query("SELECT definition FROM run_definitions WHERE hash = ?").get(hash) as { definition: string } | null)?.definition;

/** A run's columns as another connection reads them, the searched ones as text (SQLite stores them compact: run-layout.ts). */
const stored = (db: Db, id: string) => runLayout(db).decode(db.query(`SELECT ${RUN_COLUMNS.join(", ")} FROM runs WHERE id = ?`).get(id) as object);
const stepRowsOf = (db: Db, id: string) => (db.query("SELECT count(*) AS n FROM run_steps WHERE run_id = ?").get(id) as { n: number }).n;

test("a resolved write is committed: another connection reads the rows exactly as written", async () => {
  const { db, writer } = setup();
  // Finished when inserted: its steps are packed into its row. Running: a step row, then its completion.
  const second = stepRow("r1", { id: "r1-t", seq: 1, started_at: "2026-11-22T00:00:00.5Z", finished_at: null, output_data: '{"é":"\u2028 ☃"}' });
  const running = { ...run("r2"), status: "running" as const, finished_at: null, duration_ms: null };
  await writer.write([
    { op: "putDefinition", hash: "h1", text: '{"trigger":{}}' },
    { op: "insertRun", row: run("r1") },
    { op: "insertStep", row: step("r1") },
    { op: "insertStep", row: { ...second, status: "running", output_data: null } },
    { op: "updateStep", row: second },
    { op: "insertRun", row: running },
    { op: "insertStep", row: step("r2") },
  ]);
  const store = new RunStore(db);
  // The finished run's cold columns are in its record (blank in the row), and read back as written.
  expect(store.getRow("r1")).toEqual(run("r1"));
  expect(stored(db, "r1")).toMatchObject({ trigger_data: "", org_id: "", version_id: null, finished_at: null, status: "completed" });
  expect(store.steps("r1")).toEqual([step("r1"), second]);
  expect(stepRowsOf(db, "r1")).toBe(0);
  expect(stored(db, "r2")).toEqual(running);
  expect(store.steps("r2")).toEqual([step("r2")]);
  expect(stepRowsOf(db, "r2")).toBe(1);
  expect(definitionOf(db, "h1")).toBe('{"trigger":{}}');
});

test("a write that fails is rejected with SQLite's reason; the other writes of its batch still commit", async () => {
  const { db, writer } = setup();
  await writer.write([{ op: "insertRun", row: run("r1") }]);
  // Queued in the same turn: one batch. The duplicate id violates the primary key.
  const results = await Promise.allSettled([
    writer.write([{ op: "insertRun", row: run("r2") }]),
    writer.write([{ op: "insertRun", row: run("r1") }]),
    writer.write([{ op: "insertRun", row: run("r3") }]),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(String((results[1] as PromiseRejectedResult).reason.message)).toContain("UNIQUE constraint failed: runs.id");
  expect((db.query("SELECT id FROM runs ORDER BY id").all() as Array<{ id: string }>).map((r) => r.id)).toEqual(["r1", "r2", "r3"]);
});

test("a definition is stored with the first run that needs it, and again after retention pruned it", async () => {
  const { db, writer } = setup();
  const text = JSON.stringify({ trigger: { name: "t", padding: "x".repeat(10_000) } });
  await writer.write([
    { op: "putDefinition", hash: "h1", text },
    { op: "insertRun", row: run("r1") },
  ]);
  await writer.write([
    { op: "putDefinition", hash: "h1", text },
    { op: "insertRun", row: run("r2") },
  ]);
  expect(definitionOf(db, "h1")).toBe(text);

  // Retention deleted every run of it, then pruned the orphaned definition.
  db.run("DELETE FROM runs");
  await writer.write([{ op: "pruneDefinitions" }]);
  expect(definitionOf(db, "h1")).toBeUndefined();

  // The writer must not assume the definition is still stored.
  await writer.write([
    { op: "putDefinition", hash: "h1", text },
    { op: "insertRun", row: run("r3") },
  ]);
  expect(definitionOf(db, "h1")).toBe(text);
});

test("many writers in flight: every write resolves once and every row is stored", async () => {
  const { db, writer } = setup();
  const ids = Array.from({ length: 2000 }, (_, i) => `r${String(i).padStart(5, "0")}`);
  let resolved = 0;
  await Promise.all(
    ids.map(async (id, i) => {
      if (i % 100 === 0) await Bun.sleep(1); // several batches, some while others are in flight
      await writer.write([
        { op: "insertRun", row: run(id) },
        { op: "insertStep", row: step(id) },
      ]);
      resolved++;
    }),
  );
  expect(resolved).toBe(ids.length);
  expect((db.query("SELECT count(*) AS n FROM runs").get() as { n: number }).n).toBe(ids.length);
  const store = new RunStore(db);
  expect(ids.filter((id) => store.steps(id).length === 1).length).toBe(ids.length);
  expect(writer.stats.batches).toBeGreaterThan(1);
});

test("a webhook run of main-thread steps is committed in one write: its row inserted finished, its steps packed in it", async () => {
  const { engineApp, stopEngines, createWorkflow, set } = await import("./support");
  const t = await engineApp();
  try {
    const def = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "webhook",
        pieceId: "webhook",
        actionId: "catch_webhook",
        config: {},
        nextAction: { ...set("a", { x: "{{trigger.body.n}}" }), nextAction: set("b", { y: "{{a.output.x}}" }) },
      },
      settings: {},
      variables: {},
      annotations: null,
      pinnedData: {},
    };
    const id = await createWorkflow(t, def, { publish: true });
    const token = (await t.req("GET", `/api/workflows/${id}`)).body.data.webhookUrl.split("/webhook/")[1];
    await t.deps.engine.committed();
    const before = t.deps.engine.writerForTests.stats.ops;
    const res = await t.app.handle(
      new Request(`http://localhost/webhook/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":7}' }),
    );
    expect(res.status).toBe(202);
    const runId = (await res.json()).data.runId;
    await t.deps.engine.committed();
    // One queued write for the whole run (no `running` update, no finish update, no write per step).
    expect(t.deps.engine.writerForTests.stats.ops - before).toBe(1);
    // The row and the step rows as stored: on PostgreSQL on a connection of the test's own (its Db answers no SQL).
    const sql = appSql(t);
    const layout = t.databaseUrl ? new CompactLayout(new PostgresRunNames(postgresClient(t.databaseUrl))) : runLayout(t.db);
    const stored = layout.decode((await sql.get<object>("SELECT status, step_total FROM runs WHERE id = ?", [runId]))!);
    expect(stored).toEqual({ status: "completed", step_total: 2 });
    expect((await sql.get<{ n: number }>("SELECT count(*) AS n FROM run_steps WHERE run_id = ?", [runId]))!.n).toBe(0);
    const steps = (await t.deps.engine.storedSteps(runId)).map(({ node_id, status, output_data }) => ({ node_id, status, output_data }));
    expect(steps).toEqual([
      { node_id: "a", status: "completed", output_data: '{"x":7}' },
      { node_id: "b", status: "completed", output_data: '{"y":7}' },
    ]);
  } finally {
    await stopEngines();
  }
});
