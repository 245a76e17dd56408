/**
 * Run retention (issue 5 item 4, issue 19 item 3): finished runs older than WEFT_RUN_RETENTION_DAYS, and
 * the oldest beyond WEFT_RUN_RETENTION_MAX per workspace, are pruned with their steps; a workflow's own
 * settings.retentionDays / retentionMaxRuns replace those for its runs; unfinished runs are kept; freed pages
 * return to the file system (incremental vacuum) and the WAL is truncated.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { FakeClock } from "../../src/lib/clock";
import type { WriteOp } from "../../src/store/run-writes";
import type { RunPosition, RunRow, StepRow } from "../../src/store/run-rows";
import { storageOf } from "../../src/store/storage";
import type { TestApp } from "../support/app";
import { testStorage } from "../support/postgres-storage";
import { sqliteRunStore } from "../support/sqlite-run-store";
import { createWorkflow, definition, engineApp, runAndWait, stopEngines, template } from "./support";

afterAll(stopEngines);

const DAY = 86_400_000;

/** Copies of a real run with ids and start times `daysAgo` in the past, each with a fat step row (one batch of the run writer). */
async function seed(t: TestApp, model: RunRow, daysAgo: number, count: number, status: RunRow["status"] = "completed"): Promise<string[]> {
  const ids: string[] = [];
  const [step] = await t.deps.engine.storedSteps(model.id);
  const ops: WriteOp[] = [];
  for (let i = 0; i < count; i++) {
    const at = Date.now() - daysAgo * DAY + i;
    const id = Bun.randomUUIDv7("hex", at);
    ops.push({ op: "insertRun", row: { ...model, id, status, started_at: new Date(at).toISOString() } });
    ops.push({ op: "insertStep", row: { ...step!, id: Bun.randomUUIDv7(), run_id: id, output_data: JSON.stringify({ blob: "z".repeat(4000) }) } });
    ids.push(id);
  }
  await t.deps.engine.writerForTests.write(ops);
  return ids;
}

/**
 * `seed` on SQLite's own statements (sqliteRunStore), for the SQLite-only file-size test: row by row, uncompressed,
 * as the file grew before the run writer packed finished runs into compressed records.
 */
function seedSqliteRows(t: TestApp, model: RunRow, steps: StepRow[], daysAgo: number, count: number): void {
  const [step] = steps;
  const store = sqliteRunStore(t);
  t.db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const at = Date.now() - daysAgo * DAY + i;
      const id = Bun.randomUUIDv7("hex", at);
      store.insertRun({ ...model, id, started_at: new Date(at).toISOString() });
      store.insertStep({ ...step!, id: Bun.randomUUIDv7(), run_id: id, output_data: JSON.stringify({ blob: "z".repeat(4000) }) });
    }
  })();
}

/** Run `id` as stored, once the engine's writes so far are committed; null when it is not stored. */
async function stored(t: TestApp, id: string): Promise<RunRow | null> {
  await t.deps.engine.committed();
  return t.deps.engine.storedRow(id);
}

describe("retention", () => {
  test("the sweep runs on its own each WEFT_RUN_RETENTION_INTERVAL of the app's clock", async () => {
    // The clock is moved past the interval instead of waiting ten minutes (docs/architecture.md, "Time").
    const clock = new FakeClock(Date.now());
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" }, { clock });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = (await stored(t, run.id))!;
    const [old] = await seed(t, model, 30, 1);
    clock.advance(9 * 60_000);
    await t.deps.engine.committed();
    expect(await stored(t, old!)).not.toBeNull();
    clock.advance(60_000);
    for (let i = 0; i < 250 && (await stored(t, old!)) !== null; i++) await Bun.sleep(20);
    expect(await stored(t, old!)).toBeNull();
    expect(await stored(t, run.id)).not.toBeNull();
  });

  test("prunes finished runs older than the retention period with their steps; keeps recent and unfinished runs", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = (await stored(t, run.id))!;
    const old = await seed(t, model, 30, 300);
    const oldPaused = await seed(t, model, 30, 2, "paused");
    const recent = await seed(t, model, 1, 5);
    const result = await t.deps.engine.retention.sweep();
    expect(result.deletedRuns).toBe(300);
    for (const id of old.slice(0, 5)) expect(await stored(t, id)).toBeNull();
    expect(await t.deps.engine.storedSteps(old[0]!)).toEqual([]);
    for (const id of [...recent, ...oldPaused, run.id]) expect(await stored(t, id)).not.toBeNull();
    const listed = await t.req("GET", "/api/runs?environment=all&limit=100");
    expect(listed.body.pagination.total).toBe(1 + 5 + 2);
  });

  test("keeps at most WEFT_RUN_RETENTION_MAX runs, dropping the oldest first", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "0", WEFT_RUN_RETENTION_MAX: "50" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = (await stored(t, run.id))!;
    const older = await seed(t, model, 3, 60);
    const newer = await seed(t, model, 2, 40);
    const result = await t.deps.engine.retention.sweep();
    expect(result.deletedRuns).toBe(51);
    expect(await stored(t, older[50]!)).toBeNull();
    expect(await stored(t, older[51]!)).not.toBeNull();
    for (const id of [...newer, run.id]) expect(await stored(t, id)).not.toBeNull();
  });

  // SQLite's file and WAL; PostgreSQL's autovacuum returns space on its own schedule.
  test.skipIf(testStorage() === "postgres")("the database file shrinks after pruning: incremental vacuum and a truncated WAL", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    expect((t.db.query("PRAGMA auto_vacuum").get() as any).auto_vacuum).toBe(2); // incremental, set when the engine started
    const model = (await stored(t, run.id))!;
    seedSqliteRows(t, model, await t.deps.engine.storedSteps(run.id), 30, 2000);
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

  test("a workflow's own retentionDays and retentionMaxRuns replace the instance's settings for its runs", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const plain = await createWorkflow(t, definition(template("a", "x")), { name: "plain" });
    const longer = await createWorkflow(t, definition(template("a", "x"), { settings: { retentionDays: 60 } }), { name: "longer" });
    const shorter = await createWorkflow(t, definition(template("a", "x"), { settings: { retentionDays: 1 } }), { name: "shorter" });
    const forever = await createWorkflow(t, definition(template("a", "x"), { settings: { retentionDays: 0 } }), { name: "forever" });
    const capped = await createWorkflow(t, definition(template("a", "x"), { settings: { retentionMaxRuns: 4 } }), { name: "capped" });
    const model = async (id: string) => (await stored(t, (await runAndWait(t, id)).id))!;
    const plainOld = await seed(t, await model(plain), 30, 10);
    const plainRecent = await seed(t, await model(plain), 3, 5);
    const longerOld = await seed(t, await model(longer), 30, 10);
    const longerOlder = await seed(t, await model(longer), 90, 3);
    const shorterRecent = await seed(t, await model(shorter), 3, 5);
    const foreverOld = await seed(t, await model(forever), 400, 6);
    const cappedOld = await seed(t, await model(capped), 5, 10);

    const gone = async (ids: string[]) => {
      let n = 0;
      for (const id of ids) if ((await stored(t, id)) === null) n++;
      return n;
    };
    const result = await t.deps.engine.retention.sweep();
    expect(await gone(plainOld)).toBe(10);
    expect(await gone(plainRecent)).toBe(0);
    expect(await gone(longerOld)).toBe(0);
    expect(await gone(longerOlder)).toBe(3);
    expect(await gone(shorterRecent)).toBe(5);
    expect(await gone(foreverOld)).toBe(0);
    // 10 seeded + the run that made the model: 4 kept, the oldest 7 deleted (the model's run is the newest).
    expect(await gone(cappedOld)).toBe(7);
    expect(result.deletedRuns).toBe(10 + 3 + 5 + 7);

    // Changing the saved setting takes effect at the next sweep, without a publish.
    const current = await t.req("GET", `/api/workflows/${forever}`);
    const saved = await t.req("PUT", `/api/workflows/${forever}`, {
      body: { ...current.body.data, definition: { ...current.body.data.definition, settings: { retentionDays: 365 } } },
    });
    expect(saved.status).toBe(200);
    await t.deps.engine.retention.sweep();
    expect(await gone(foreverOld)).toBe(6);
  });

  test("WEFT_RUN_RETENTION_MAX caps each workspace; a workflow with its own retentionMaxRuns (0: none) is not counted in it", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "0", WEFT_RUN_RETENTION_MAX: "20" });
    const other = await t.otherWorkspace();
    const mine = await createWorkflow(t, definition(template("a", "x")), { name: "mine" });
    const exempt = await createWorkflow(t, definition(template("a", "x"), { settings: { retentionMaxRuns: 0 } }), { name: "exempt" });
    const theirs = await createWorkflow(t, definition(template("a", "x")), { name: "theirs", token: other.token });
    const model = async (id: string, token?: string) => {
      const res = await t.req("POST", `/api/workflows/${id}/run?environment=test&wait=10`, { body: {}, token });
      return (await stored(t, res.body.data.id))!;
    };
    const mineRuns = await seed(t, await model(mine), 5, 30);
    const exemptRuns = await seed(t, await model(exempt), 6, 30);
    const theirRuns = await seed(t, await model(theirs, other.token), 5, 15);
    const result = await t.deps.engine.retention.sweep();
    const kept = async (ids: string[]) => {
      const found: string[] = [];
      for (const id of ids) if ((await stored(t, id)) !== null) found.push(id);
      return found;
    };
    // Mine: 31 runs in a workspace capped at 20 (the exempt workflow's 31 do not count): the 11 oldest go.
    expect(await kept(mineRuns)).toEqual(mineRuns.slice(11));
    expect(await kept(exemptRuns)).toEqual(exemptRuns);
    // The other workspace has 16 runs, under its own cap of 20.
    expect(await kept(theirRuns)).toEqual(theirRuns);
    expect(result.deletedRuns).toBe(11);
  });

  test("a sweep looks from where the last one stopped, yet deletes a run passed over while it was unfinished once it ends", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = (await stored(t, run.id))!;
    const older = await seed(t, model, 31, 40);
    const [paused] = await seed(t, model, 30.5, 1, "paused");
    const newer = await seed(t, model, 30, 40);
    // Where each sweep's first look-up starts (undefined: at the oldest run).
    const firstLooks: Array<RunPosition | undefined> = [];
    const runs = storageOf(t.db).runRetention;
    const look = runs.oldestFinishedOf.bind(runs);
    let looked = false;
    runs.oldestFinishedOf = (workflowId, limit, beforeIso, after) => {
      if (!looked) firstLooks.push(after);
      looked = true;
      return look(workflowId, limit, beforeIso, after);
    };
    const sweep = async () => {
      looked = false;
      return (await t.deps.engine.retention.sweep()).deletedRuns;
    };

    expect(await sweep()).toBe(80);
    expect(await stored(t, paused!)).not.toBeNull();
    // The paused run was passed over: the next sweep looks from it, not from after the last run deleted.
    expect(await sweep()).toBe(0);
    const pausedAt = (await stored(t, paused!))!.started_at;
    expect(firstLooks).toEqual([undefined, { startedAt: pausedAt, id: "", tie: "" }]);
    // Once it ends it is deleted, and the sweep after that looks from it.
    await t.deps.engine.writerForTests.write([
      { op: "patchRun", id: paused!, patch: { status: "completed", finished_at: new Date().toISOString(), duration_ms: 5 } },
    ]);
    expect(await sweep()).toBe(1);
    expect(await stored(t, paused!)).toBeNull();
    expect(await sweep()).toBe(0);
    expect(firstLooks.slice(2)).toEqual([
      { startedAt: pausedAt, id: "", tie: "" },
      { startedAt: pausedAt, id: paused, tie: expect.any(String) },
    ]);
    for (const id of [...older, ...newer]) expect(await stored(t, id)).toBeNull();
    expect(await stored(t, run.id)).not.toBeNull();
  });

  test("a sweep asks the storage port; on PostgreSQL it never asks the store's Db synchronously", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "50" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = (await stored(t, run.id))!;
    const old = await seed(t, model, 30, 120);
    await seed(t, model, 1, 60);
    await t.deps.engine.committed();
    // What the sweep asks the port, and (PostgreSQL) every synchronous call on the store's Db meanwhile: the
    // synchronous bridge is gone, its members (src/store/postgres/handle.ts) throw, and none may be reached.
    const runs = storageOf(t.db).runRetention;
    const asked: string[] = [];
    for (const name of ["runCountsByWorkflow", "oldestFinishedOf", "oldestFinishedIn", "unfinishedPositions", "freePages"] as const) {
      const ask = (runs[name] as (...args: unknown[]) => Promise<unknown>).bind(runs);
      (runs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        asked.push(name);
        return ask(...args);
      };
    }
    const handle = t.db as unknown as Record<string, (...args: unknown[]) => unknown>;
    const blocked: unknown[] = [];
    const synchronous = ["query", "prepare", "run", "transaction"] as const;
    const own = new Map<string, (...args: unknown[]) => unknown>();
    if (testStorage() === "postgres") {
      for (const name of synchronous) {
        const member = handle[name];
        expect(member).toBeFunction();
        own.set(name, member!);
        handle[name] = (...args: unknown[]) => {
          blocked.push([name, ...args]);
          return member!.apply(handle, args);
        };
      }
    }
    let result: Awaited<ReturnType<typeof t.deps.engine.retention.sweep>>;
    try {
      result = await t.deps.engine.retention.sweep();
    } finally {
      for (const [name, member] of own) handle[name] = member;
    }
    expect(result.deletedRuns).toBe(120 + 11);
    expect(blocked).toEqual([]);
    expect(new Set(asked)).toEqual(new Set(["runCountsByWorkflow", "oldestFinishedOf", "oldestFinishedIn", "unfinishedPositions", "freePages"]));
    for (const id of old) expect(await stored(t, id)).toBeNull();
    const listed = await t.req("GET", "/api/runs?environment=all&limit=100");
    expect(listed.body.pagination.total).toBe(50);
  });

  test("stop waits for a sweep under way, which stops after the batch it is deleting", async () => {
    const t = await engineApp({ WEFT_RUN_RETENTION_DAYS: "7", WEFT_RUN_RETENTION_MAX: "0" });
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const model = (await stored(t, run.id))!;
    await seed(t, model, 30, 300);
    const runs = storageOf(t.db).runRetention;
    const look = runs.oldestFinishedOf.bind(runs);
    let looks = 0;
    let stopped: Promise<void> | undefined;
    runs.oldestFinishedOf = async (workflowId, _limit, beforeIso, after) => {
      // Small batches; the sweep is told to stop during its second look-up.
      if (++looks === 2) stopped = t.deps.engine.retention.stop();
      return look(workflowId, 10, beforeIso, after);
    };
    const result = await t.deps.engine.retention.sweep();
    await stopped;
    expect(looks).toBe(2);
    expect(result.deletedRuns).toBe(20);
    // Nothing is left half done: a sweep after a restart goes on from there.
    runs.oldestFinishedOf = look;
    t.deps.engine.retention.start();
    expect((await t.deps.engine.retention.sweep()).deletedRuns).toBe(280);
  });

  test("retention settings out of range are refused with the field and the allowed range named", async () => {
    const t = await engineApp();
    for (const settings of [{ retentionDays: -1 }, { retentionMaxRuns: 1.5 }, { retentionDays: "30" }]) {
      const res = await t.req("POST", "/api/workflows", { body: { name: "bad", definition: definition(undefined, { settings }) } });
      expect(res.status).toBe(400);
      const field = Object.keys(settings)[0]!;
      expect(res.body.error.message).toContain(field);
      expect(res.body.error.message).toContain(">= 0");
    }
  });
});
