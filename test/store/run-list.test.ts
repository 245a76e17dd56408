/**
 * The run list (GET /api/runs, docs/api.md "4. Run") from kept counts (migration 008): for every filter and
 * sort, on the first, a middle, the last and a page past the end, the store answers exactly what a plain
 * reading of all runs gives — after inserts, status changes, tag changes and deletions, which the counts must
 * follow. Runs share start times and spread over hours with gaps, so page boundaries fall inside hours and
 * between them. Runs on SQLite, and on PostgreSQL under `npm run test:postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import type { RunReadRepository } from "../../src/store/run-read-repository";
import { inlineRunWriter } from "../support/inline-run-writer";
import type { RunWrites } from "../../src/store/run-writes";
import { migrations } from "../../src/store/sqlite/migrations";
import type { RunListFilter, RunPosition, RunRow } from "../../src/store/run-rows";
import { RunStore } from "../../src/store/sqlite/run-store";
import { storageOf } from "../../src/store/storage";
import { FRESH_RUN } from "../../src/engine/run-table";
import type { Environment, RunStatus } from "../../src/schema/run";
import { freshPostgresDatabase, postgresClient, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-run-list-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store under test, on either database. */
interface Store {
  db: Db;
  /** The run writer (the engine's way of writing runs, on both databases). */
  writes: RunWrites;
  /**
   * The test's own query of the store's tables: on SQLite on its connection, on PostgreSQL on a connection of the
   * test's own (the store's Db answers no SQL there).
   */
  all<T>(sql: string): Promise<T[]>;
  close(): Promise<void>;
}

async function openStore(): Promise<Store> {
  if (testStorage() === "postgres") {
    const { db, url } = await freshPostgresDatabase();
    const client = postgresClient(url);
    const writes = inlineRunWriter(db);
    return {
      db,
      writes,
      all: (sql) => client.all(sql),
      close: async () => {
        await writes.close();
        db.close();
      },
    };
  }
  const db = openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
  const writes = inlineRunWriter(db);
  return {
    db,
    writes,
    all: async <T>(sql: string) => db.query(sql).all() as T[],
    close: async () => {
      await writes.close();
      db.close();
    },
  };
}

/** mulberry32: the same history on every run of the test. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORKSPACES = ["ws-a", "ws-b"];
const WORKFLOWS: Record<string, string[]> = { "ws-a": ["wf-a1", "wf-a2", "wf-a3"], "ws-b": ["wf-b1"] };
const STATUSES: RunStatus[] = ["completed", "failed", "running", "paused", "cancelled", "pending"];
const TRIGGERS = ["webhook", "cron", "api"];
const TAG_SETS = ["[]", "[]", "[]", '["vip"]', '["vip","eu"]', '["eu"]'];

function runRow(pick: () => number, i: number): RunRow {
  const one = <T>(list: T[]) => list[Math.floor(pick() * list.length)]!;
  const workspace = pick() < 0.85 ? "ws-a" : "ws-b";
  // 60 hours, every third one empty; within an hour a few distinct seconds, so start times repeat.
  let hour = Math.floor(pick() * 60);
  if (hour % 3 === 2) hour -= 1;
  const started = new Date(Date.UTC(2026, 10, 1, 0, 0, 0) + hour * 3_600_000 + Math.floor(pick() * 4) * 1000).toISOString();
  const status = one(STATUSES);
  return {
    ...FRESH_RUN,
    id: `0190${String(i).padStart(4, "0")}-0000-7000-8000-${Math.floor(pick() * 1e12)
      .toString(16)
      .padStart(12, "0")}`,
    workspace_id: workspace,
    org_id: "org",
    workflow_id: one(WORKFLOWS[workspace]!),
    workflow_name: "w",
    workflow_trigger_type: "webhook",
    status,
    trigger_type: one(TRIGGERS),
    trigger_data: "{}",
    environment: (pick() < 0.8 ? "production" : "test") as Environment,
    version_id: null,
    version_number: null,
    executed_version_id: null,
    executed_version_number: null,
    definition_hash: "h",
    started_at: started,
    finished_at: null,
    duration_ms: pick() < 0.2 ? null : Math.floor(pick() * 50),
    tags: one(TAG_SETS),
    started_from_step: null,
    retry_of_run_id: null,
    parent_run_id: null,
    depth: 0,
  } as RunRow;
}

/** `count` new runs, stored (one batch of the run writer) and kept by id. */
async function insertRuns(writes: RunWrites, pick: () => number, count: number): Promise<Map<string, RunRow>> {
  const all = new Map<string, RunRow>();
  for (let i = 0; i < count; i++) {
    const row = runRow(pick, i);
    all.set(row.id, row);
  }
  await writes.write([...all.values()].map((row) => ({ op: "insertRun", row })));
  return all;
}

/** insertRuns on a schema from before a column existed: the row's columns that the table has. */
function insertOlderRuns(db: Db, pick: () => number, count: number): Map<string, RunRow> {
  const columns = (db.query("PRAGMA table_info(runs)").all() as Array<{ name: keyof RunRow }>).map((c) => c.name);
  const insert = db.prepare(`INSERT INTO runs (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
  const all = new Map<string, RunRow>();
  for (let i = 0; i < count; i++) {
    const row = runRow(pick, i);
    insert.run(...columns.map((c) => row[c]));
    all.set(row.id, row);
  }
  return all;
}

/** What the list must answer, read the slow way. */
/**
 * How the store orders runs of the same start, per run: in its list index's order (run-layout.ts: the stored
 * environment, status and trigger type, then seq; for sort=duration the environment, then seq), on both
 * storages. The tag filter orders its runs of one start by id.
 */
type Ties = Map<string, { start: Array<string | number>; duration: Array<string | number> }>;
async function storedTies(store: Pick<Store, "all">): Promise<Ties> {
  const ties: Ties = new Map();
  const rows = await store.all<Record<string, number> & { id: string }>("SELECT id, environment, status, trigger_type, seq FROM runs");
  for (const r of rows) ties.set(r.id, { start: [r.environment, r.status, r.trigger_type, r.seq], duration: [r.environment, r.seq] });
  return ties;
}

function expected(all: Map<string, RunRow>, filter: RunListFilter, ties: Ties = new Map()): { ids: string[]; total: number } {
  const rows = [...all.values()].filter(
    (r) =>
      r.workspace_id === filter.workspaceId &&
      filter.environments.includes(r.environment) &&
      (!filter.status || r.status === filter.status) &&
      (!filter.triggerType || r.trigger_type === filter.triggerType) &&
      (!filter.workflowId || r.workflow_id === filter.workflowId) &&
      (filter.tag === undefined || (JSON.parse(r.tags) as string[]).includes(filter.tag)),
  );
  const cmp = (x: string | number, y: string | number) => (x < y ? -1 : x > y ? 1 : 0);
  const kind = filter.sort === "duration" ? "duration" : "start";
  const tie = (r: RunRow) => (filter.tag === undefined || kind === "duration" ? ties.get(r.id)?.[kind] : undefined) ?? [r.id];
  const byTie = (x: RunRow, y: RunRow) => {
    const [a, b] = [tie(x), tie(y)];
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return cmp(a[i]!, b[i]!);
    return 0;
  };
  rows.sort((x, y) => {
    if (filter.sort === "oldest") return cmp(x.started_at, y.started_at) || byTie(x, y);
    if (filter.sort === "duration") {
      if ((x.duration_ms === null) !== (y.duration_ms === null)) return x.duration_ms === null ? 1 : -1;
      const byDuration = x.duration_ms === null ? 0 : cmp(y.duration_ms!, x.duration_ms!);
      // Equal durations: the index's order (environment, seq), newest stored first; the start plays no part.
      return byDuration || byTie(y, x);
    }
    return cmp(y.started_at, x.started_at) || byTie(y, x);
  });
  return { ids: rows.slice(filter.offset, filter.offset + filter.limit).map((r) => r.id), total: rows.length };
}

function filters(): Array<Omit<RunListFilter, "sort" | "limit" | "offset">> {
  const out: Array<Omit<RunListFilter, "sort" | "limit" | "offset">> = [];
  for (const workspaceId of WORKSPACES) {
    for (const environments of [["production"], ["test"], ["production", "test"]] as Environment[][]) {
      out.push({ workspaceId, environments });
      out.push({ workspaceId, environments, status: "failed" });
      out.push({ workspaceId, environments, triggerType: "cron" });
      out.push({ workspaceId, environments, workflowId: WORKFLOWS[workspaceId]![0] });
      out.push({ workspaceId, environments, status: "completed", triggerType: "webhook", workflowId: WORKFLOWS[workspaceId]!.at(-1) });
      out.push({ workspaceId, environments, tag: "vip" });
      out.push({ workspaceId, environments, tag: "eu", status: "running" });
    }
  }
  // Another workspace's workflow, and a tag nobody has: nothing, total 0.
  out.push({ workspaceId: "ws-b", environments: ["production", "test"], workflowId: "wf-a1" });
  out.push({ workspaceId: "ws-a", environments: ["production"], tag: "nobody" });
  return out;
}

/** Every list read through the storage port (RunStore.list on SQLite, PostgreSQL's own on PostgreSQL) against a full reading. */
async function checkEveryList(store: Pick<Store, "all">, reads: RunReadRepository, all: Map<string, RunRow>): Promise<number> {
  let checked = 0;
  const ties = await storedTies(store);
  for (const base of filters()) {
    for (const sort of ["newest", "oldest", "duration"] as const) {
      for (const limit of [7, 20]) {
        const total = expected(all, { ...base, sort, limit, offset: 0 }).total;
        const pages = Math.max(1, Math.ceil(total / limit));
        for (const page of new Set([1, 2, Math.ceil(pages / 2), pages - 1, pages, pages + 1].filter((p) => p >= 1))) {
          const filter: RunListFilter = { ...base, sort, limit, offset: (page - 1) * limit };
          const got = await reads.list(filter);
          const want = expected(all, filter, ties);
          expect({ filter, total: got.total, ids: got.rows.map((r) => r.id) }).toEqual({ filter, total: want.total, ids: want.ids });
          checked++;
        }
      }
    }
  }
  return checked;
}

describe("GET /api/runs from kept counts", () => {
  test("every filter and sort, first to past-the-last page, matches a full reading — after inserts, status and tag changes, deletions", async () => {
    const store = await openStore();
    const pick = random(19);
    const all = await insertRuns(store.writes, pick, 700);
    const reads = storageOf(store.db).runReads;
    expect(await checkEveryList(store, reads, all)).toBeGreaterThan(500);

    // Runs finish, get tagged, are retried into other statuses; retention deletes some.
    const ids = [...all.keys()];
    for (const id of ids.filter(() => pick() < 0.3)) {
      const row = all.get(id)!;
      const status = STATUSES[Math.floor(pick() * STATUSES.length)]!;
      const tags = pick() < 0.5 ? row.tags : TAG_SETS[Math.floor(pick() * TAG_SETS.length)]!;
      await store.writes.write([{ op: "patchRun", id, patch: { status, tags, duration_ms: 99 } }]);
      all.set(id, { ...row, status, tags, duration_ms: 99 });
    }
    const doomed = ids.filter(() => pick() < 0.15);
    await store.writes.write([{ op: "deleteRuns", ids: doomed }]);
    for (const id of doomed) all.delete(id);
    expect(await checkEveryList(store, reads, all)).toBeGreaterThan(500);

    // Every run of a workspace gone: every list is empty with total 0.
    const wsB = [...all.values()].filter((r) => r.workspace_id === "ws-b").map((r) => r.id);
    await store.writes.write([{ op: "deleteRuns", ids: wsB }]);
    for (const id of wsB) all.delete(id);
    expect(await reads.list({ workspaceId: "ws-b", environments: ["production", "test"], sort: "newest", limit: 20, offset: 0 })).toEqual({
      rows: [],
      total: 0,
    });
    await checkEveryList(store, reads, all);
    await store.close();
  }, 120_000);

  test("unfinished runs are found without reading finished ones; retention's queries pick the oldest finished runs and count from the kept counts", async () => {
    const store = await openStore();
    const { runReads, runRetention } = storageOf(store.db);
    const pick = random(7);
    const rows = Array.from({ length: 120 }, (_, i) => runRow(pick, i));
    await store.writes.write(rows.map((row) => ({ op: "insertRun", row })));
    const open = rows.filter((r) => ["pending", "running", "paused"].includes(r.status)).map((r) => r.id);
    expect((await runReads.unfinished()).map((r) => r.id)).toEqual([...open].sort());
    await store.writes.write([{ op: "patchRun", id: open[0]!, patch: { status: "completed" } }]);
    expect((await runReads.unfinished()).map((r) => r.id)).toEqual(open.slice(1).sort());
    const finished = rows.filter((r) => r.id === open[0] || !open.includes(r.id));
    const oldestFirst = (list: RunRow[]) =>
      [...list].sort((a, b) => (a.started_at === b.started_at ? (a.id < b.id ? -1 : 1) : a.started_at < b.started_at ? -1 : 1)).map((r) => r.id);

    const byWorkflow = await runRetention.runCountsByWorkflow();
    expect(byWorkflow.reduce((sum, c) => sum + c.runs, 0)).toBe(rows.length);
    for (const c of byWorkflow) expect(c.runs).toBe(rows.filter((r) => r.workflow_id === c.workflowId && r.workspace_id === c.workspaceId).length);

    const workflow = byWorkflow[0]!.workflowId;
    const ofWorkflow = finished.filter((r) => r.workflow_id === workflow);
    const ids = (found: RunPosition[]) => found.map((p) => p.id);
    const at = (id: string) => ({ id, startedAt: rows.find((r) => r.id === id)!.started_at });
    expect(ids(await runRetention.oldestFinishedOf(workflow, 3))).toEqual(oldestFirst(ofWorkflow).slice(0, 3));
    expect((await runRetention.oldestFinishedOf(workflow, 3)).map(({ id, startedAt }) => ({ id, startedAt }))).toEqual(
      oldestFirst(ofWorkflow).slice(0, 3).map(at),
    );
    const cutoff = oldestFirst(ofWorkflow).map((id) => rows.find((r) => r.id === id)!.started_at)[4]!;
    expect(ids(await runRetention.oldestFinishedOf(workflow, 100))).toEqual(oldestFirst(ofWorkflow));
    expect(ids(await runRetention.oldestFinishedOf(workflow, 100, cutoff))).toEqual(oldestFirst(ofWorkflow.filter((r) => r.started_at < cutoff)));

    const exempt = WORKFLOWS["ws-a"]!.slice(0, 1);
    const inA = finished.filter((r) => r.workspace_id === "ws-a");
    expect(ids(await runRetention.oldestFinishedIn("ws-a", [], 7))).toEqual(oldestFirst(inA).slice(0, 7));
    expect(ids(await runRetention.oldestFinishedIn("ws-a", exempt, 7))).toEqual(oldestFirst(inA.filter((r) => !exempt.includes(r.workflow_id))).slice(0, 7));

    // Retention looks for each batch after the last one's last run: paging by position visits every run once, in order.
    const paged = async (page: (after: RunPosition | undefined) => Promise<RunPosition[]>) => {
      const seen: string[] = [];
      // (Bounded: a page that ignored `after` would repeat forever.)
      for (let after: RunPosition | undefined, found = await page(undefined); found.length > 0 && seen.length <= rows.length; found = await page(after)) {
        seen.push(...ids(found));
        after = found[found.length - 1];
      }
      return seen;
    };
    expect(await paged((after) => runRetention.oldestFinishedOf(workflow, 2, undefined, after))).toEqual(oldestFirst(ofWorkflow));
    expect(await paged((after) => runRetention.oldestFinishedOf(workflow, 2, cutoff, after))).toEqual(
      oldestFirst(ofWorkflow.filter((r) => r.started_at < cutoff)),
    );
    expect(await paged((after) => runRetention.oldestFinishedIn("ws-a", exempt, 3, after))).toEqual(
      oldestFirst(inA.filter((r) => !exempt.includes(r.workflow_id))),
    );
    await store.close();
  });

  // SQLite's own history: migrations 8 and 9 of its schema (PostgreSQL's schema started with the counts).
  test.skipIf(testStorage() === "postgres")(
    "a database with runs from before the counts is counted when it is upgraded, and its definitions' uses",
    async () => {
      const db = openDatabase(join(dir, "upgrade.db"), { migrate: false });
      for (const m of migrations.filter((m) => m.version < 8)) db.transaction(() => db.run(m.sql))();
      db.run("PRAGMA user_version = 7");
      db.run(`INSERT INTO run_definitions (hash, definition, created_at) VALUES ('h', '{}', 'then'), ('unused', '{}', 'then')`);
      const all = insertOlderRuns(db, random(3), 300);
      // 8 and 9, and whatever came after them.
      expect(migrate(db)).toEqual(migrations.filter((m) => m.version >= 8).map((m) => m.version));
      const store = new RunStore(db);
      const sqlite = { all: async <T>(sql: string) => db.query(sql).all() as T[] };
      expect(await checkEveryList(sqlite, storageOf(db).runReads, all)).toBeGreaterThan(500);
      // Migration 9 counted each definition's runs; deletions keep counting, and the unused one is pruned.
      const uses = () => db.query("SELECT hash, runs FROM run_definitions ORDER BY hash").all();
      expect(uses()).toEqual([
        { hash: "h", runs: 300 },
        { hash: "unused", runs: 0 },
      ]);
      store.deleteRuns([...all.keys()].slice(0, 10));
      expect(store.deleteOrphanDefinitions()).toBe(1);
      expect(uses()).toEqual([{ hash: "h", runs: 290 }]);
      db.close();
    },
  );
});
