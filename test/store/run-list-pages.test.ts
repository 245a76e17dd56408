/**
 * Every page of the run list, read through the storage port (RunStore.list on SQLite, PostgreSQL's own list on
 * PostgreSQL: walks from the nearer end, the tag filter read from the list index at a run's start, sort=duration
 * walked or sorted) is the page the plain query gives: `ORDER BY … LIMIT … OFFSET …` over runs (and run_tags for a tag), with `count(*)` as its total. The history is made to catch
 * the edges: a few thousand runs inserted out of start order (seq does not follow the start), half of them
 * sharing a few hundred start instants (runs of one millisecond, in other cells or not), durations from a few
 * values and NULL (many runs in one bucket of run_durations, several durations in one bucket, pages across
 * buckets), tags on a third of them; then statuses, tags and durations change (some tags and some durations alone) and some
 * runs are deleted; run_durations, run_tag_hours and run_tag_durations are compared with a count of the runs before and after. Every filter the API has, alone and together, in every sort, at two page sizes;
 * sort=duration both as the store chooses and with the buckets summed for every page. Runs on SQLite, and on
 * PostgreSQL under `WEFT_TEST_STORAGE=postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import { PostgresRunNames } from "../../src/store/postgres/run-names";
import { CompactLayout, type RunLayout } from "../../src/store/run-layout";
import { runLayout } from "../../src/store/sqlite/run-names";
import type { RunReadRepository } from "../../src/store/run-read-repository";
import { inlineRunWriter } from "../support/inline-run-writer";
import type { RunWrites } from "../../src/store/run-writes";
import { durationPageTuning, UNTIMED_BUCKET } from "../../src/store/run-duration-pages";
import { runFromRow, type RunListFilter, type RunRow } from "../../src/store/run-rows";
import { storageOf } from "../../src/store/storage";
import { FRESH_RUN } from "../../src/engine/run-table";
import type { Environment, RunStatus } from "../../src/schema/run";
import { freshPostgresDatabase, postgresClient, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-run-list-pages-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store under test, on either database. */
interface Store {
  db: Db;
  /** The run writer (the engine's way of writing runs, on both databases). */
  writes: RunWrites;
  /**
   * The test's own query of the store's tables (`?` placeholders): on SQLite on its connection, on PostgreSQL on a
   * connection of the test's own (the store's Db answers no SQL there).
   */
  all<T>(sql: string, params?: Array<string | number>): Promise<T[]>;
  /** How runs are stored (../../src/store/run-layout.ts), knowing the keys of `names` once it resolves. */
  layout(names: string[]): Promise<RunLayout>;
  close(): Promise<void>;
}

async function openStore(): Promise<Store> {
  if (testStorage() === "postgres") {
    const { db, url } = await freshPostgresDatabase();
    const client = postgresClient(url);
    const writes = inlineRunWriter(db);
    // The same layout as the store's, its names' keys read on the test's connection.
    const names = new PostgresRunNames(client);
    const layout = new CompactLayout(names);
    return {
      db,
      writes,
      all: (sql, params = []) => {
        let n = 0;
        return client.all(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        );
      },
      layout: async (wanted) => {
        await names.loadStored(wanted);
        return layout;
      },
      close: async () => {
        await writes.close();
        db.close();
      },
    };
  }
  const db = openDatabase(join(dir, "runs.db"), { synchronous: "NORMAL" });
  const writes = inlineRunWriter(db);
  return {
    db,
    writes,
    all: async <T>(sql: string, params: Array<string | number> = []) => db.query(sql).all(...params) as T[],
    layout: async () => runLayout(db),
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

const WORKFLOWS: Record<string, string[]> = { "ws-a": ["wf-a1", "wf-a2", "wf-a3"], "ws-b": ["wf-b1"] };
const STATUSES: RunStatus[] = ["completed", "completed", "completed", "failed", "running", "paused", "cancelled", "pending"];
const TRIGGERS = ["webhook", "webhook", "cron", "api"];
const TAG_SETS = ["[]", "[]", "[]", "[]", '["vip"]', '["vip","eu"]', '["eu"]'];
/**
 * Many runs of one duration, runs without one, and durations that share a bucket of run_durations (two significant
 * digits: 120–129, 1200–1299, 250,000–259,999) or sit at its edges (99, 100), and one set back (negative).
 */
const DURATIONS = [null, null, 0, 1, 1, 2, 5, 5, 5, 8, 13, 99, 100, 120, 125, 129, 1000, 1200, 1234, 1299, 250_000, 259_999, -3];
const START = Date.UTC(2026, 10, 1);
/** Start instants shared by many runs, over 40 hours (more than the hours the first pages are looked for in). */
const SHARED_STARTS = 300;
const HOURS = 40;
const DEFAULT_PLAIN_WALK = durationPageTuning.plainWalkRuns;

function runRow(pick: () => number, i: number, shared: number[]): RunRow {
  const one = <T>(list: readonly T[]) => list[Math.floor(pick() * list.length)]!;
  const workspace = pick() < 0.8 ? "ws-a" : "ws-b";
  const startMs = pick() < 0.5 ? one(shared) : START + Math.floor(pick() * HOURS * 3_600_000);
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
    status: one(STATUSES),
    trigger_type: one(TRIGGERS),
    trigger_data: "{}",
    environment: (pick() < 0.75 ? "production" : "test") as Environment,
    version_id: null,
    version_number: null,
    executed_version_id: null,
    executed_version_number: null,
    definition_hash: "h",
    started_at: new Date(startMs).toISOString(),
    finished_at: null,
    duration_ms: one(DURATIONS),
    tags: one(TAG_SETS),
    started_from_step: null,
    retry_of_run_id: null,
    parent_run_id: null,
    depth: 0,
  } as RunRow;
}

/** The filters of the list: each alone and together, in both workspaces and every environment, with and without a tag. */
function filters(): Array<Omit<RunListFilter, "sort" | "limit" | "offset">> {
  const out: Array<Omit<RunListFilter, "sort" | "limit" | "offset">> = [];
  for (const environments of [["production"], ["test"], ["production", "test"]] as Environment[][]) {
    for (const tag of [undefined, "vip", "eu"]) {
      const base = { workspaceId: "ws-a", environments, ...(tag ? { tag } : {}) };
      out.push(base, { ...base, status: "failed" }, { ...base, status: "running" }, { ...base, triggerType: "cron" }, { ...base, workflowId: "wf-a1" });
      out.push({ ...base, status: "completed", triggerType: "webhook", workflowId: "wf-a3" });
      // The other workspace: its runs share start instants with the first's.
      out.push({ ...base, workspaceId: "ws-b" });
    }
  }
  out.push({ workspaceId: "ws-b", environments: ["production", "test"], workflowId: "wf-a1" });
  out.push({ workspaceId: "ws-a", environments: ["production"], tag: "nobody" });
  out.push({ workspaceId: "ws-a", environments: ["production"], triggerType: "mcp" });
  return out;
}

/** The list as the plain query reads it: every matching run in the list's order, then LIMIT and OFFSET. */
async function plainPage(store: Store, filter: RunListFilter): Promise<{ ids: string[]; total: number }> {
  const layout = await store.layout([filter.workspaceId, filter.triggerType, filter.workflowId].filter((name) => name !== undefined));
  const workspace = layout.find(filter.workspaceId);
  const conditions = ["runs.workspace_id = ?"];
  const params: Array<string | number> = [workspace ?? -1];
  const named = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    conditions.push(`runs.${column} = ?`);
    params.push(layout.find(value) ?? -1);
  };
  if (filter.environments.length === 1) {
    conditions.push("runs.environment = ?");
    params.push(layout.environment(filter.environments[0]!));
  }
  if (filter.status) {
    conditions.push("runs.status = ?");
    params.push(layout.status(filter.status));
  }
  named("trigger_type", filter.triggerType);
  named("workflow_id", filter.workflowId);
  let from = "runs";
  let order = filter.sort === "duration" ? layout.durationOrder : layout.startOrder(filter.sort === "oldest" ? "ASC" : "DESC");
  order = order
    .split(", ")
    .map((term) => `runs.${term}`)
    .join(", ");
  if (filter.tag !== undefined) {
    from = "run_tags JOIN runs ON runs.id = run_tags.run_id";
    conditions.push("run_tags.workspace_id = ?", "run_tags.tag = ?");
    params.push(workspace ?? -1, filter.tag);
    if (filter.sort !== "duration") {
      const direction = filter.sort === "oldest" ? "ASC" : "DESC";
      order = `run_tags.started_at ${direction}, run_tags.run_id ${direction}`;
    }
  }
  const where = conditions.join(" AND ");
  const ids = (
    await store.all<{ id: string }>(`SELECT runs.id AS id FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [
      ...params,
      filter.limit,
      filter.offset,
    ])
  ).map((r) => r.id);
  const [{ n }] = (await store.all<{ n: number }>(`SELECT count(*) AS n FROM ${from} WHERE ${where}`, params)) as [{ n: number }];
  return { ids, total: Number(n) };
}

/**
 * Compares the pages of every filter, sort and page size, read through the storage port (on PostgreSQL its own
 * statements, awaited), with the plain query's; the number of pages compared.
 */
async function comparePages(store: Store, reads: RunReadRepository, pick: () => number): Promise<number> {
  let compared = 0;
  for (const base of filters()) {
    for (const sort of ["newest", "oldest", "duration"] as const) {
      for (const limit of [7, 50]) {
        const first: RunListFilter = { ...base, sort, limit, offset: 0 };
        const total = (await plainPage(store, first)).total;
        const pages = Math.max(1, Math.ceil(total / limit));
        // Every page of a short list; of a long one the first and last three, the middle and five at random.
        const chosen =
          pages <= 12
            ? Array.from({ length: pages + 1 }, (_, i) => i + 1)
            : [1, 2, 3, Math.ceil(pages / 2), pages - 2, pages - 1, pages, pages + 1, ...Array.from({ length: 5 }, () => 1 + Math.floor(pick() * pages))];
        for (const page of new Set(chosen)) {
          const filter: RunListFilter = { ...first, offset: (page - 1) * limit };
          const want = await plainPage(store, filter);
          // sort=duration: with the buckets of run_durations (run_tag_durations for a tag) summed for every page, and as the store chooses.
          let got = await reads.list(filter);
          expect({ filter, total: got.total, ids: got.rows.map((r) => r.id) }).toEqual({ filter, total: want.total, ids: want.ids });
          if (sort === "duration") {
            durationPageTuning.plainWalkRuns = 0;
            got = await reads.list(filter);
            durationPageTuning.plainWalkRuns = DEFAULT_PLAIN_WALK;
            expect({ filter, bucketsSummed: true, total: got.total, ids: got.rows.map((r) => r.id) }).toEqual({
              filter,
              bucketsSummed: true,
              total: want.total,
              ids: want.ids,
            });
          }
          // The rows themselves are the runs' (read by id).
          if (page === 1 && limit === 7) for (const row of got.rows) expect(runFromRow(row)).toEqual(runFromRow((await reads.getRow(row.id))!));
          compared++;
        }
      }
    }
  }
  return compared;
}

/** A duration's bucket in run_durations (migration 024): two significant digits; none and negative ones their own. */
function bucketOf(duration: number | null): number {
  if (duration === null) return UNTIMED_BUCKET;
  if (duration < 0) return UNTIMED_BUCKET + 1;
  if (duration < 100) return duration;
  const step = 10 ** (String(Math.trunc(duration)).length - 2);
  return Math.trunc(duration / step) * step;
}

/** run_durations (summed over its slots) is the runs counted per cell and bucket. */
async function expectDurationCounts(store: Store): Promise<void> {
  const cells = "workspace_id, environment, workflow_id, status, trigger_type";
  const kept = await store.all<Record<string, number>>(
    `SELECT ${cells}, bucket, CAST(sum(n) AS INTEGER) AS n FROM run_durations GROUP BY ${cells}, bucket HAVING sum(n) <> 0`,
  );
  const counted = new Map<string, number>();
  for (const run of await store.all<Record<string, number | null>>(`SELECT ${cells}, duration_ms FROM runs`)) {
    const key = [
      run.workspace_id,
      run.environment,
      run.workflow_id,
      run.status,
      run.trigger_type,
      bucketOf(run.duration_ms === null ? null : Number(run.duration_ms)),
    ].join(" ");
    counted.set(key, (counted.get(key) ?? 0) + 1);
  }
  const keptCells = new Map(
    kept.map((row) => [[row.workspace_id, row.environment, row.workflow_id, row.status, row.trigger_type, Number(row.bucket)].join(" "), Number(row.n)]),
  );
  expect(keptCells).toEqual(counted);
}

/**
 * run_tag_hours and run_tag_durations (summed over their slots) are the runs counted per cell, distinct tag and hour of
 * their start, and per cell, distinct tag and duration bucket (migration 027).
 */
async function expectTagCounts(store: Store): Promise<void> {
  const cells = "workspace_id, environment, workflow_id, status, trigger_type";
  const runs = await store.all<Record<string, number | string | null>>(`SELECT ${cells}, started_at, duration_ms, tags FROM runs`);
  for (const [table, column, keyOf] of [
    ["run_tag_hours", "hour", (run: Record<string, number | string | null>) => Math.floor(Number(run.started_at) / 3_600_000)],
    ["run_tag_durations", "bucket", (run: Record<string, number | string | null>) => bucketOf(run.duration_ms === null ? null : Number(run.duration_ms))],
  ] as const) {
    const kept = await store.all<Record<string, number | string>>(
      `SELECT ${cells}, tag, ${column} AS k, CAST(sum(n) AS INTEGER) AS n FROM ${table} GROUP BY ${cells}, tag, ${column} HAVING sum(n) <> 0`,
    );
    const counted = new Map<string, number>();
    for (const run of runs) {
      for (const tag of new Set(JSON.parse(String(run.tags)) as string[])) {
        const key = [run.workspace_id, run.environment, run.workflow_id, run.status, run.trigger_type, tag, keyOf(run)].join(" ");
        counted.set(key, (counted.get(key) ?? 0) + 1);
      }
    }
    const keptCells = new Map(
      kept.map((row) => [[row.workspace_id, row.environment, row.workflow_id, row.status, row.trigger_type, row.tag, Number(row.k)].join(" "), Number(row.n)]),
    );
    expect(counted.size).toBeGreaterThan(0);
    expect({ table, cells: keptCells }).toEqual({ table, cells: counted });
  }
}

describe("every list page is the plain ORDER BY … LIMIT … OFFSET page", () => {
  test("a history with shared start instants, equal and missing durations and tags, before and after changes", async () => {
    const store = await openStore();
    const pick = random(2027);
    const shared = Array.from({ length: SHARED_STARTS }, () => START + Math.floor(pick() * HOURS * 3_600_000));
    const runs = Array.from({ length: 3_000 }, (_, i) => runRow(pick, i, shared));
    // One batch of the run writer: one transaction.
    await store.writes.write(runs.map((row) => ({ op: "insertRun", row })));
    // As autovacuum would have by then: without statistics PostgreSQL plans the plain query's join over a fresh table badly (20× slower).
    if (testStorage() === "postgres") await store.all("ANALYZE");
    const reads = storageOf(store.db).runReads;
    await expectDurationCounts(store);
    await expectTagCounts(store);
    expect(await comparePages(store, reads, pick)).toBeGreaterThan(1_200);

    // Runs finish or are retried into other statuses, get tagged or untagged; retention deletes some.
    await store.writes.write(
      runs
        .filter(() => pick() < 0.3)
        .map((run) => {
          const status = STATUSES[Math.floor(pick() * STATUSES.length)]!;
          const tags = TAG_SETS[Math.floor(pick() * TAG_SETS.length)]!;
          return { op: "patchRun", id: run.id, patch: { status, tags, duration_ms: DURATIONS[Math.floor(pick() * DURATIONS.length)] ?? null } };
        }),
    );
    // Runs tagged or untagged alone (a tag given twice counts once).
    const retagged = ["[]", '["vip"]', '["eu","vip"]', '["eu","eu"]'];
    await store.writes.write(
      runs.filter(() => pick() < 0.1).map((run) => ({ op: "patchRun", id: run.id, patch: { tags: retagged[Math.floor(pick() * retagged.length)]! } })),
    );
    // Runs given a duration alone (as a run's finish may set it apart from its status).
    await store.writes.write(
      runs
        .filter(() => pick() < 0.1)
        .map((run) => ({ op: "patchRun", id: run.id, patch: { duration_ms: DURATIONS[Math.floor(pick() * DURATIONS.length)] ?? null } })),
    );
    await store.writes.write([{ op: "deleteRuns", ids: runs.filter(() => pick() < 0.1).map((r) => r.id) }]);
    await expectDurationCounts(store);
    await expectTagCounts(store);
    expect(await comparePages(store, reads, pick)).toBeGreaterThan(1_200);
    await store.close();
  }, 600_000);
});
