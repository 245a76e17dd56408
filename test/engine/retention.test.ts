/**
 * Run retention (issue 5 item 4): finished runs older than WEFT_RUN_RETENTION_DAYS, and the oldest beyond
 * WEFT_RUN_RETENTION_MAX, are pruned with their steps; unfinished runs are kept; freed pages return to the
 * file system (incremental vacuum) and the WAL is truncated.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import type { RunRow } from "../../src/store/runs";
import type { TestApp } from "../support/app";
import { createWorkflow, definition, engineApp, runAndWait, stopEngines, template } from "./support";

afterAll(stopEngines);

const DAY = 86_400_000;

/** Copies of a real run with ids and start times `daysAgo` in the past, each with a fat step row. */
function seed(t: TestApp, model: RunRow, daysAgo: number, count: number, status: RunRow["status"] = "completed"): string[] {
  const ids: string[] = [];
  const [step] = t.deps.engine.store.steps(model.id);
  t.db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const at = Date.now() - daysAgo * DAY + i;
      const id = Bun.randomUUIDv7("hex", at);
      t.deps.engine.store.insertRun({ ...model, id, status, started_at: new Date(at).toISOString() });
      t.deps.engine.store.insertStep({ ...step!, id: Bun.randomUUIDv7(), run_id: id, output_data: JSON.stringify({ blob: "z".repeat(4000) }) });
      ids.push(id);
    }
  })();
  return ids;
}

describe("retention", () => {
  test("prunes finished runs older than the retention period with their steps; keeps recent and unfinished runs", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = t.deps.engine.store.getRow(run.id)!;
    const old = seed(t, model, 30, 300);
    const oldPaused = seed(t, model, 30, 2, "paused");
    const recent = seed(t, model, 1, 5);
    const result = await t.deps.engine.retention.sweep();
    expect(result.deletedRuns).toBe(300);
    for (const id of old.slice(0, 5)) expect(t.deps.engine.store.getRow(id)).toBeNull();
    expect(t.deps.engine.store.steps(old[0]!)).toEqual([]);
    for (const id of [...recent, ...oldPaused, run.id]) expect(t.deps.engine.store.getRow(id)).not.toBeNull();
    const listed = await t.req("GET", "/api/runs?environment=all&limit=100");
    expect(listed.body.pagination.total).toBe(1 + 5 + 2);
  });

  test("keeps at most WEFT_RUN_RETENTION_MAX runs, dropping the oldest first", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "0", WEFT_RUN_RETENTION_MAX: "50" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = t.deps.engine.store.getRow(run.id)!;
    const older = seed(t, model, 3, 60);
    const newer = seed(t, model, 2, 40);
    const result = await t.deps.engine.retention.sweep();
    expect(result.deletedRuns).toBe(51);
    expect(t.deps.engine.store.getRow(older[50]!)).toBeNull();
    expect(t.deps.engine.store.getRow(older[51]!)).not.toBeNull();
    for (const id of [...newer, run.id]) expect(t.deps.engine.store.getRow(id)).not.toBeNull();
  });

  test("the database file shrinks after pruning: incremental vacuum and a truncated WAL", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    expect((t.db.query("PRAGMA auto_vacuum").get() as any).auto_vacuum).toBe(2); // incremental, set when the engine started
    const model = t.deps.engine.store.getRow(run.id)!;
    seed(t, model, 30, 2000);
    t.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const file = join(t.dataDir, "weft.db");
    const grown = statSync(file).size;
    expect(grown).toBeGreaterThan(8_000_000);
    const result = await t.deps.engine.retention.sweep();
    expect(result.deletedRuns).toBe(2000);
    expect(result.walCheckpointed).toBe(true);
    expect(statSync(file).size).toBeLessThan(grown / 4);
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect((t.db.query("PRAGMA freelist_count").get() as any).freelist_count).toBe(0);
  });
});
