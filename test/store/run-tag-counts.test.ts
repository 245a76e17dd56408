/**
 * The upgrade to run_tag_hours and run_tag_durations (migration 025, docs/operations.md "run_tag_hours (migration
 * 25)"): a database one migration behind, holding tagged runs that were since retagged, changed status or duration,
 * or deleted, is upgraded; the tables then hold exactly the runs counted per tag and hour and per tag and duration
 * bucket, the triggers keep them so through later changes, and the tag filter's deep pages read through them are the
 * plain query's, in every sort. On SQLite, and on PostgreSQL under `WEFT_TEST_STORAGE=postgres`.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/store/db";
import { migrate, openDatabase } from "../../src/store/sqlite/db";
import { migrations } from "../../src/store/sqlite/migrations";
import { migratePostgres, openPostgres } from "../../src/store/postgres/db";
import { postgresMigrations } from "../../src/store/postgres/migrations";
import { durationPageTuning, UNTIMED_BUCKET } from "../../src/store/run-duration-pages";
import { storageOf } from "../../src/store/storage";
import type { RunListFilter } from "../../src/store/run-rows";
import { connectPostgresDatabase, emptyPostgresDatabase, freshPostgresDatabase, postgresClient, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-run-tag-hours-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The migration that adds the tag counts, found by name (its number may change when branches are merged). */
const TAG_COUNTS = migrations.find((m) => m.name === "run-tag-counts")!.version;

/** A database before TAG_COUNTS: its SQL (`?` placeholders), then the upgrade, then the store on it. */
interface Before {
  all<T>(sql: string, params?: Array<string | number>): Promise<T[]>;
  /** Applies the pending migrations; the versions applied. */
  upgrade(): Promise<number[]>;
  /** The storage port on the upgraded database. */
  store(): Db;
  close(): Promise<void>;
}

async function databaseBefore(): Promise<Before> {
  if (testStorage() === "postgres") {
    const url = await emptyPostgresDatabase();
    const sql = await openPostgres(url, { migrate: false });
    await sql.begin(async (tx) => {
      await tx`CREATE TABLE weft_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`;
      for (const m of postgresMigrations.filter((m) => m.version < TAG_COUNTS)) {
        await tx.unsafe(m.sql);
        await tx`INSERT INTO weft_schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, 'then')`;
      }
    });
    const client = postgresClient(url);
    return {
      all: (text, params = []) => {
        let n = 0;
        return client.all(
          text.replace(/\?/g, () => `$${++n}`),
          params,
        );
      },
      upgrade: () => migratePostgres(sql),
      store: () => connectPostgresDatabase(url),
      close: () => sql.close(),
    };
  }
  const db = openDatabase(join(dir, "before.db"), { migrate: false });
  const earlier = migrations.filter((m) => m.version < TAG_COUNTS);
  for (const m of earlier) db.transaction(() => db.run(m.sql))();
  db.run(`PRAGMA user_version = ${earlier.at(-1)!.version}`);
  return {
    all: async <T>(text: string, params: Array<string | number> = []) => db.query(text).all(...params) as T[],
    upgrade: async () => migrate(db),
    store: () => db,
    close: async () => db.close(),
  };
}

const START = Date.UTC(2026, 10, 1);
const DEFAULT_PLAIN_WALK = durationPageTuning.plainWalkRuns;
const HOURS = 60;
const TAG_SETS = ["[]", "[]", '["vip"]', '["vip","eu"]', '["eu"]', '["eu","eu"]'];
/** Durations in a few buckets of run_durations (migration 024), several in one (1200–1299), and none. */
const DURATIONS = [null, 5, 40, 99, 100, 1200, 1250, 1299, 30_000];

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

/** Runs as the compact layout stores them (run-layout.ts): names by their run_names key, status and environment as codes. */
async function insertRuns(db: Before, pick: () => number, from: number, count: number): Promise<string[]> {
  const names = ["ws-a", "wf-1", "wf-2", "webhook", "cron", "h"];
  const insertName =
    testStorage() === "postgres" ? "INSERT INTO run_names (name) VALUES (?) ON CONFLICT DO NOTHING" : "INSERT OR IGNORE INTO run_names (name) VALUES (?)";
  for (const name of names) await db.all(insertName, [name]);
  const key = new Map((await db.all<{ key: number; name: string }>("SELECT key, name FROM run_names")).map((r) => [r.name, Number(r.key)]));
  const one = <T>(list: readonly T[]) => list[Math.floor(pick() * list.length)]!;
  const ids: string[] = [];
  for (let i = from; i < from + count; i++) {
    const id = `run-${String(i).padStart(5, "0")}`;
    ids.push(id);
    const duration = one(DURATIONS);
    await db.all(
      `INSERT INTO runs (id, workspace_id, org_id, workflow_id, workflow_name, status, trigger_type, trigger_data, environment, definition_hash, started_at, duration_ms, tags)
        VALUES (?, ?, 'org', ?, 'w', ?, ?, '{}', ?, ?, ?, ${duration === null ? "NULL" : "?"}, ?)`,
      [
        id,
        key.get("ws-a")!,
        key.get(one(["wf-1", "wf-2"]))!,
        Math.floor(pick() * 6),
        key.get(one(["webhook", "cron"]))!,
        pick() < 0.8 ? 0 : 1,
        key.get("h")!,
        START + Math.floor(pick() * HOURS * 3_600_000),
        ...(duration === null ? [] : [duration]),
        one(TAG_SETS),
      ],
    );
  }
  return ids;
}

/** Some runs change status, tags, both, or their duration alone; some are deleted (as retention does). */
async function changeRuns(db: Before, pick: () => number, ids: string[]): Promise<string[]> {
  const tags = () => TAG_SETS[Math.floor(pick() * TAG_SETS.length)]!;
  for (const id of ids) {
    const r = pick();
    if (r < 0.15) await db.all("UPDATE runs SET status = ? WHERE id = ?", [Math.floor(pick() * 6), id]);
    else if (r < 0.3) await db.all("UPDATE runs SET tags = ? WHERE id = ?", [tags(), id]);
    else if (r < 0.4) await db.all("UPDATE runs SET status = ?, tags = ? WHERE id = ?", [Math.floor(pick() * 6), tags(), id]);
    else if (r < 0.5) {
      const duration = DURATIONS[Math.floor(pick() * DURATIONS.length)]!;
      await db.all(`UPDATE runs SET duration_ms = ${duration === null ? "NULL" : "?"} WHERE id = ?`, duration === null ? [id] : [duration, id]);
    }
  }
  const gone = ids.filter(() => pick() < 0.1);
  for (const id of gone) await db.all("DELETE FROM runs WHERE id = ?", [id]);
  return ids.filter((id) => !gone.includes(id));
}

/** A duration's bucket in run_durations (migration 024): two significant digits; none and negative ones their own. */
function bucketOf(duration: number | null): number {
  if (duration === null) return UNTIMED_BUCKET;
  if (duration < 0) return UNTIMED_BUCKET + 1;
  if (duration < 100) return duration;
  const step = 10 ** (String(Math.trunc(duration)).length - 2);
  return Math.trunc(duration / step) * step;
}

type Run = Record<string, number | string | null>;

/** run_tag_hours and run_tag_durations (summed over their slots) against the runs counted per cell, distinct tag and hour or bucket. */
async function expectTagCounts(db: Before): Promise<void> {
  const cells = "workspace_id, environment, workflow_id, status, trigger_type";
  const runs = await db.all<Run>(`SELECT ${cells}, started_at, duration_ms, tags FROM runs`);
  for (const [table, column, keyOf] of [
    ["run_tag_hours", "hour", (run: Run) => Math.floor(Number(run.started_at) / 3_600_000)],
    ["run_tag_durations", "bucket", (run: Run) => bucketOf(run.duration_ms === null ? null : Number(run.duration_ms))],
  ] as const) {
    const kept = await db.all<Record<string, number | string>>(
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
    expect(counted.size).toBeGreaterThan(20);
    expect({ table, cells: keptCells }).toEqual({ table, cells: counted });
  }
}

test("a database one migration behind, with tagged runs changed and deleted, upgrades with the tag counts exact and kept after", async () => {
  const db = await databaseBefore();
  const pick = random(52);
  let ids = await insertRuns(db, pick, 0, 600);
  ids = await changeRuns(db, pick, ids);

  expect(await db.upgrade()).toEqual(migrations.filter((m) => m.version >= TAG_COUNTS).map((m) => m.version));
  await expectTagCounts(db);

  // Kept by the triggers after the upgrade: more tagged runs, changes and deletions.
  ids = [...ids, ...(await insertRuns(db, pick, 600, 200))];
  await changeRuns(db, pick, ids);
  await expectTagCounts(db);

  // The tag filter's pages read through them: the first, a middle one and the last, in every sort; sort=duration
  // also with the buckets summed for every page.
  const reads = storageOf(db.store()).runReads;
  const workspace = Number((await db.all<{ key: number }>("SELECT key FROM run_names WHERE name = 'ws-a'"))[0]!.key);
  const orders = {
    newest: "t.started_at DESC, t.run_id DESC",
    oldest: "t.started_at ASC, t.run_id ASC",
    // RunLayout.durationOrder
    duration: "r.duration_ms DESC NULLS LAST, r.environment DESC, r.seq DESC",
  };
  for (const sort of ["newest", "oldest", "duration"] as const) {
    const all = (
      await db.all<{ id: string }>(
        `SELECT t.run_id AS id FROM run_tags AS t JOIN runs AS r ON r.id = t.run_id WHERE t.workspace_id = ? AND t.tag = 'vip' ORDER BY ${orders[sort]}`,
        [workspace],
      )
    ).map((r) => r.id);
    expect(all.length).toBeGreaterThan(100);
    for (const summed of sort === "duration" ? [false, true] : [false]) {
      if (summed) durationPageTuning.plainWalkRuns = 0;
      for (const offset of [0, 10 * Math.floor(all.length / 20), all.length - 10]) {
        const filter: RunListFilter = { workspaceId: "ws-a", environments: ["production", "test"], tag: "vip", sort, limit: 10, offset };
        const page = await reads.list(filter);
        expect({ offset, sort, summed, total: page.total, ids: page.rows.map((r) => r.id) }).toEqual({
          offset,
          sort,
          summed,
          total: all.length,
          ids: all.slice(offset, offset + 10),
        });
      }
      durationPageTuning.plainWalkRuns = DEFAULT_PLAIN_WALK;
    }
  }
  await db.close();
}, 120_000);

test.skipIf(testStorage() !== "postgres")(
  "the storage port's PostgreSQL connections plan without JIT compilation (half of a deep tag page's time; docs/operations.md)",
  async () => {
    const { url } = await freshPostgresDatabase();
    // postgresClient opens its pool as the storage port does (openPool).
    const [setting] = await postgresClient(url).all<{ jit: string }>("SELECT current_setting('jit') AS jit");
    expect(setting).toEqual({ jit: "off" });
  },
);
