/**
 * Run retention's questions through the storage port (src/store/run-retention.ts): on PostgreSQL its own
 * statements, awaited on the pool; on SQLite the run store's. Both answer as the run store does (the sweep's
 * rules are tested in test/engine/retention.test.ts). Runs on SQLite, and on PostgreSQL under
 * `npm run test:postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/store/db";
import { openDatabase } from "../../src/store/sqlite/db";
import type { RunPosition, RunRow } from "../../src/store/run-rows";
import { RunStore } from "../../src/store/sqlite/run-store";
import { storageOf } from "../../src/store/storage";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";
import { runRow } from "../support/run-rows";

const dir = mkdtempSync(join(tmpdir(), "weft-run-retention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

const STATUSES: RunRow["status"][] = ["completed", "completed", "failed", "cancelled", "paused", "running", "pending"];
const SPOTS = [
  ["ws-a", "wf-1"],
  ["ws-a", "wf-2"],
  ["ws-a", "wf-3"],
  ["ws-b", "wf-4"],
] as const;

/** 90 runs over two workspaces and four workflows, some started in the same millisecond, some unfinished. */
function history(): RunRow[] {
  const rows: RunRow[] = [];
  for (let i = 0; i < 90; i++) {
    const [workspace, workflow] = SPOTS[(i * 7) % SPOTS.length]!;
    const status = STATUSES[i % STATUSES.length]!;
    const unfinished = ["paused", "running", "pending"].includes(status);
    // Every third run starts in the same millisecond as the one before it.
    const at = Date.UTC(2026, 0, 1) + Math.floor(i - i / 3) * 60_000;
    rows.push(
      runRow(`r${String(i).padStart(3, "0")}`, {
        workspace_id: workspace,
        workflow_id: workflow,
        status,
        started_at: new Date(at).toISOString(),
        finished_at: unfinished ? null : new Date(at + 5).toISOString(),
        duration_ms: unfinished ? null : 5,
      }),
    );
  }
  return rows;
}

/** The runs of `history`, inserted in order through the port (src/store/run-inserts.ts), in each database's layout. */
async function seed(db: Db): Promise<RunRow[]> {
  const rows = history();
  for (const row of rows) await storageOf(db).runInserts.insert(row, { hash: "h1", text: "{}" });
  return rows;
}

/**
 * The run store the port's answers are held against: on SQLite the one on the same database; on PostgreSQL,
 * whose store answers no SQL but through the port (src/store/postgres/handle.ts), the one on a SQLite database
 * holding the same runs, inserted in the same order.
 */
function runStoreOf(db: Db, rows: RunRow[]): RunStore {
  if (testStorage() === "sqlite") return new RunStore(db);
  const store = new RunStore(openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" }));
  store.putDefinition("h1", "{}");
  for (const row of rows) store.insertRun(row);
  return store;
}

/** Every position `page` answers, page after page from where the last one ended. */
async function paged(page: (after: RunPosition | undefined) => Promise<RunPosition[]>, most: number): Promise<string[]> {
  const seen: string[] = [];
  // (Bounded: a page that ignored `after` would repeat forever.)
  for (let found = await page(undefined); found.length > 0 && seen.length <= most; found = await page(found[found.length - 1])) {
    seen.push(...found.map((p) => p.id));
  }
  return seen;
}

describe(`run retention's questions (${testStorage()})`, () => {
  test("counts, oldest finished runs and unfinished positions answer as the run store does", async () => {
    const db = await openStoreDb();
    const rows = await seed(db);
    const store = runStoreOf(db, rows);
    const runs = storageOf(db).runRetention;
    const sorted = <T>(list: T[]) => [...list].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

    const counts = await runs.runCountsByWorkflow();
    expect(sorted(counts)).toEqual(sorted(store.runCountsByWorkflow()));
    expect(sorted(counts)).toEqual(
      sorted(SPOTS.map(([workspaceId, workflowId]) => ({ workspaceId, workflowId, runs: rows.filter((r) => r.workflow_id === workflowId).length }))),
    );

    const unfinished = await runs.unfinishedPositions();
    expect(sorted(unfinished)).toEqual(sorted(store.unfinishedPositions()));
    expect(unfinished.map((p) => p.id).sort()).toEqual(rows.filter((r) => r.finished_at === null).map((r) => r.id));

    const cutoff = rows[40]!.started_at;
    for (const [, workflow] of SPOTS) {
      expect(await runs.oldestFinishedOf(workflow, 4)).toEqual(store.oldestFinishedOf(workflow, 4));
      expect(await runs.oldestFinishedOf(workflow, 100, cutoff)).toEqual(store.oldestFinishedOf(workflow, 100, cutoff));
      const all = store.oldestFinishedOf(workflow, 1000);
      expect(all.map((p) => p.id)).toEqual(rows.filter((r) => r.workflow_id === workflow && r.finished_at !== null).map((r) => r.id));
      // Retention looks for each batch after the last one's last run: paging visits every run once, in order.
      expect(await paged((after) => runs.oldestFinishedOf(workflow, 2, undefined, after), rows.length)).toEqual(all.map((p) => p.id));
      const before = store.oldestFinishedOf(workflow, 1000, cutoff).map((p) => p.id);
      expect(await paged((after) => runs.oldestFinishedOf(workflow, 3, cutoff, after), rows.length)).toEqual(before);
    }

    for (const exempt of [[], ["wf-2"], ["wf-1", "wf-3", "never-ran"]]) {
      expect(await runs.oldestFinishedIn("ws-a", exempt, 7)).toEqual(store.oldestFinishedIn("ws-a", exempt, 7));
      const all = store.oldestFinishedIn("ws-a", exempt, 1000).map((p) => p.id);
      expect(all).toEqual(rows.filter((r) => r.workspace_id === "ws-a" && r.finished_at !== null && !exempt.includes(r.workflow_id)).map((r) => r.id));
      expect(await paged((after) => runs.oldestFinishedIn("ws-a", exempt, 3, after), rows.length)).toEqual(all);
    }
    // From a position between two runs of the same millisecond: the one after it, then on.
    const tied = store.oldestFinishedIn("ws-a", [], 1000);
    const from = { ...tied[3]!, id: "", tie: "" };
    expect(await runs.oldestFinishedIn("ws-a", [], 5, from)).toEqual(store.oldestFinishedIn("ws-a", [], 5, from));

    // Names no run was ever stored with.
    expect(await runs.oldestFinishedOf("no-such-workflow", 10)).toEqual([]);
    expect(await runs.oldestFinishedIn("no-such-workspace", [], 10)).toEqual([]);
    if (store.db !== db) store.db.close();
    db.close();
  });

  test("a database with no runs answers nothing to delete", async () => {
    const db = await openStoreDb();
    const runs = storageOf(db).runRetention;
    expect(await runs.runCountsByWorkflow()).toEqual([]);
    expect(await runs.unfinishedPositions()).toEqual([]);
    expect(await runs.oldestFinishedOf("wf", 10)).toEqual([]);
    expect(await runs.oldestFinishedIn("ws", ["wf"], 10)).toEqual([]);
    expect(await runs.freePages()).toBe(0);
    db.close();
  });
});
