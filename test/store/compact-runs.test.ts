/**
 * Compact run rows (SQLite's migration 018, PostgreSQL's 19; src/store/run-layout.ts): a database of runs
 * stored before it reads back exactly as written after it, with the same lists, counts, hours, tags and definition uses; names learned
 * in a transaction that rolled back are not reused; a start that is not a canonical ISO time is refused.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import { migrations } from "../../src/store/sqlite/migrations";
import { forgetWrites, RunStore } from "../../src/store/sqlite/run-store";
import { RUN_COLUMNS, type RunListFilter, type RunPatch, type RunRow, type StepRow } from "../../src/store/run-rows";
import type { UnfinishedPosition } from "../../src/store/run-retention";
import { inlineRunWriter } from "../support/inline-run-writer";
import type { RunWrites } from "../../src/store/run-writes";
import { storageOf } from "../../src/store/storage";
import type { Environment, RunStatus } from "../../src/schema/run";
import { runRow, stepRow } from "../support/run-rows";
import { openPostgres, migratePostgres } from "../../src/store/postgres/db";
import { postgresMigrations } from "../../src/store/postgres/migrations";
import { connectPostgresDatabase, emptyPostgresDatabase, postgresClient, testStorage } from "../support/postgres-storage";

const dir = mkdtempSync(join(tmpdir(), "weft-compact-runs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STATUSES: RunStatus[] = ["completed", "failed", "cancelled", "pending", "running", "paused"];
const TRIGGERS = ["webhook", "cron", "api", "manual", "subflow"];
const ENVIRONMENTS: Environment[] = ["production", "test"];

/** 240 runs over 30 hours of two workspaces and three workflows, every status, trigger type and environment; some tagged. */
function history(): RunRow[] {
  const rows: RunRow[] = [];
  for (let i = 0; i < 240; i++) {
    const workspace = i % 5 === 0 ? "ws-b" : "ws-a";
    const status = STATUSES[i % STATUSES.length]!;
    const unfinished = status === "pending" || status === "running" || status === "paused";
    rows.push(
      runRow(`0191${String(i).padStart(4, "0")}-0000-7000-8000-000000000000`, {
        workspace_id: workspace,
        workflow_id: workspace === "ws-b" ? "wf-b" : i % 2 ? "wf-a1" : "wf-a2",
        status,
        trigger_type: TRIGGERS[i % TRIGGERS.length]!,
        environment: ENVIRONMENTS[Math.floor(i / 7) % 2]!,
        definition_hash: i % 3 ? "h1" : "h2",
        // Several runs share each start (the tie), and the starts cover 30 hours.
        started_at: new Date(Date.UTC(2026, 10, 20, 0, 0, 0) + Math.floor(i / 8) * 3_600_000 + (i % 3) * 1_234).toISOString(),
        finished_at: unfinished ? null : new Date(Date.UTC(2026, 10, 20, 5) + i).toISOString(),
        duration_ms: unfinished ? null : (i * 37) % 101,
        tags: i % 4 === 0 ? '["vip"]' : i % 4 === 1 ? '["vip","eu"]' : "[]",
        trigger_data: JSON.stringify({ i, body: "é \u2028" }),
        error_message: status === "failed" ? `step ${i} failed` : null,
        resume_token_hash: status === "paused" ? `token-${i}` : null,
        state: unfinished ? `{"at":${i}}` : null,
      }),
    );
  }
  return rows;
}

/** Every filter of the list that a workspace's runs can be asked by, in each sort. */
function filters(): RunListFilter[] {
  const out: RunListFilter[] = [];
  for (const workspaceId of ["ws-a", "ws-b"])
    for (const environments of [["production"], ["test"], ["production", "test"]] as Environment[][])
      for (const sort of ["newest", "oldest", "duration"] as const)
        for (const extra of [{}, { status: "failed" as RunStatus }, { triggerType: "cron" }, { workflowId: "wf-a1" }, { tag: "vip" }, { triggerType: "never" }])
          out.push({ workspaceId, environments, sort, limit: 500, offset: 0, ...extra });
  return out;
}

/** Where a run stands in a list's order, but for the order of runs of one start, or one duration (the store's own). */
const place = (filter: RunListFilter, r: RunRow) => (filter.sort === "duration" ? `${r.duration_ms ?? "none"}` : r.started_at);

/** A page as its places in order and the ids at each place. */
function shape(filter: RunListFilter, rows: RunRow[], total: number) {
  const at = new Map<string, string[]>();
  for (const r of rows) at.set(place(filter, r), [...(at.get(place(filter, r)) ?? []), r.id].sort());
  return { filter, total, places: [...at.keys()], at: Object.fromEntries(at) };
}

/** Whether a run is one `filter` lists. */
const matches = (filter: RunListFilter) => (r: RunRow) =>
  r.workspace_id === filter.workspaceId &&
  filter.environments.includes(r.environment) &&
  (!filter.status || r.status === filter.status) &&
  (!filter.triggerType || r.trigger_type === filter.triggerType) &&
  (!filter.workflowId || r.workflow_id === filter.workflowId) &&
  (filter.tag === undefined || (JSON.parse(r.tags) as string[]).includes(filter.tag));

/** What every list must answer, read the slow way from `rows`. */
function expectedLists(rows: RunRow[]) {
  return filters().map((filter) => {
    const matching = rows.filter(matches(filter));
    const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
    matching.sort((x, y) => {
      if (filter.sort === "oldest") return cmp(x.started_at, y.started_at);
      if (filter.sort === "duration" && (x.duration_ms === null) !== (y.duration_ms === null)) return x.duration_ms === null ? 1 : -1;
      if (filter.sort === "duration") return x.duration_ms === y.duration_ms ? 0 : cmp(y.duration_ms!, x.duration_ms!);
      return cmp(y.started_at, x.started_at);
    });
    return shape(filter, matching, matching.length);
  });
}

/** Each definition's runs: the kept number and the changes not folded into it yet (PostgreSQL's migration 15). */
const DEFINITION_USES =
  "SELECT hash, runs + COALESCE((SELECT SUM(n) FROM run_definition_uses u WHERE u.hash = d.hash), 0) AS runs FROM run_definitions d ORDER BY hash";

/** What expectUpgraded reads and writes a store with, awaited. */
interface UpgradedStore {
  getRow(id: string): Promise<RunRow | null>;
  steps(runId: string): Promise<StepRow[]>;
  list(filter: RunListFilter): Promise<{ rows: RunRow[]; total: number }>;
  runCountsByWorkflow(): Promise<Array<{ workspaceId: string; workflowId: string; runs: number }>>;
  unfinishedPositions(): Promise<UnfinishedPosition[]>;
  unfinished(): Promise<RunRow[]>;
  lastRun(workflowId: string): Promise<{ status: string; startedAt: string } | null>;
  insertRun(row: RunRow): Promise<void>;
  patchRun(id: string, patch: RunPatch): Promise<void>;
  deleteRuns(ids: string[]): Promise<void>;
  /** Each definition's runs (DEFINITION_USES), as numbers. */
  definitionUses(): Promise<Array<{ hash: string; runs: number }>>;
  /** Deletes the definitions no run refers to; answers how many. */
  deleteOrphanDefinitions(): Promise<number>;
}

const numbered = (uses: Array<{ hash: string; runs: number | string }>) => uses.map((u) => ({ hash: u.hash, runs: Number(u.runs) }));

/** SQLite's: the run store on the database. */
function runStoreOf(db: Db): UpgradedStore {
  const store = new RunStore(db);
  return {
    getRow: async (id) => store.getRow(id),
    steps: async (runId) => store.steps(runId),
    list: async (filter) => store.list(filter),
    runCountsByWorkflow: async () => store.runCountsByWorkflow(),
    unfinishedPositions: async () => store.unfinishedPositions(),
    unfinished: async () => store.unfinished(),
    lastRun: async (workflowId) => store.lastRun(workflowId),
    insertRun: async (row) => store.insertRun(row),
    patchRun: async (id, patch) => store.patchRun(id, patch),
    deleteRuns: async (ids) => store.deleteRuns(ids),
    definitionUses: async () => numbered(db.query(DEFINITION_USES).all() as Array<{ hash: string; runs: number }>),
    deleteOrphanDefinitions: async () => store.deleteOrphanDefinitions(),
  };
}

/**
 * PostgreSQL's, whose store answers no SQL of its own (src/store/postgres/handle.ts): reads through the storage
 * port, writes through the engine's run writer, the definitions' counts with the test's own client.
 */
function portStoreOf(db: Db, url: string, writer: RunWrites): UpgradedStore {
  const { runReads, runRetention } = storageOf(db);
  const client = postgresClient(url);
  const definitions = async () => (await client.get<{ n: number }>("SELECT count(*) AS n FROM run_definitions"))!.n;
  return {
    getRow: (id) => runReads.getRow(id),
    steps: (runId) => runReads.steps(runId),
    list: (filter) => runReads.list(filter),
    runCountsByWorkflow: () => runRetention.runCountsByWorkflow(),
    unfinishedPositions: () => runRetention.unfinishedPositions(),
    unfinished: () => runReads.unfinished(),
    lastRun: async (workflowId) => (await runReads.lastRuns([workflowId])).get(workflowId) ?? null,
    insertRun: (row) => writer.write([{ op: "insertRun", row }]),
    patchRun: (id, patch) => writer.write([{ op: "patchRun", id, patch }]),
    deleteRuns: (ids) => writer.write([{ op: "deleteRuns", ids }]),
    definitionUses: async () => numbered(await client.all<{ hash: string; runs: number | string }>(DEFINITION_USES)),
    deleteOrphanDefinitions: async () => {
      const before = await definitions();
      await writer.write([{ op: "pruneDefinitions" }]);
      return before - (await definitions());
    },
  };
}

const lists = (store: UpgradedStore) =>
  Promise.all(
    filters().map(async (filter) => {
      const { rows, total } = await store.list(filter);
      return shape(filter, rows, total);
    }),
  );

/**
 * What a user of an upgraded database sees (`rows` stored before the upgrade, `unfinished` those not finished):
 * every run read back as written, every list, the counts per workflow, the unfinished runs; then new runs, a
 * status change and deletions, after which the lists and definitions' uses still match a full count.
 */
async function expectUpgraded(store: UpgradedStore, rows: RunRow[], unfinished: RunRow[]) {
  for (const row of rows) expect(await store.getRow(row.id)).toEqual(row);
  expect((await store.steps(rows[3]!.id)).map((s) => s.status)).toEqual(["running"]);
  const want = expectedLists(rows);
  expect(want.filter((l) => l.total > 0).length).toBeGreaterThan(60);
  expect(await lists(store)).toEqual(want);
  const perWorkflow = Map.groupBy(rows, (r) => `${r.workspace_id} ${r.workflow_id}`);
  expect(new Set(await store.runCountsByWorkflow())).toEqual(
    new Set([...perWorkflow].map(([key, of]) => ({ workspaceId: key.split(" ")[0]!, workflowId: key.split(" ")[1]!, runs: of.length }))),
  );
  // In no particular order (the engine files each under its workflow).
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
  expect(
    (await store.unfinishedPositions()).map(({ id, startedAt, workflowId, workspaceId }) => ({ id, startedAt, workflowId, workspaceId })).sort(byId),
  ).toEqual(unfinished.map((r) => ({ id: r.id, startedAt: r.started_at, workflowId: r.workflow_id, workspaceId: r.workspace_id })).sort(byId));
  expect((await store.unfinished()).map((r) => r.id)).toEqual(unfinished.map((r) => r.id));
  expect(await store.lastRun("wf-b")).toEqual({
    status: rows.findLast((r) => r.workflow_id === "wf-b")!.status,
    startedAt: rows.findLast((r) => r.workflow_id === "wf-b")!.started_at,
  });

  // The kept counts go on from the migrated ones: new runs, a status change, deletions; then they match a full count.
  await store.insertRun(
    runRow("new-1", { workspace_id: "ws-a", workflow_id: "wf-new", trigger_type: "poll", started_at: "2026-11-21T10:00:00.000Z", tags: '["vip"]' }),
  );
  await store.patchRun(rows[0]!.id, { status: "failed" });
  await store.deleteRuns(rows.slice(100, 140).map((r) => r.id));
  const remaining = [...rows.filter((_, i) => i < 100 || i >= 140).map((r) => (r.id === rows[0]!.id ? { ...r, status: "failed" as RunStatus } : r))];
  remaining.push((await store.getRow("new-1"))!);
  for (const filter of filters()) {
    const matching = remaining.filter(matches(filter));
    const { rows: listed, total } = await store.list(filter);
    expect({ filter, total, ids: listed.map((r) => r.id).sort() }).toEqual({ filter, total: matching.length, ids: matching.map((r) => r.id).sort() });
  }
  // Each definition's runs: the kept number and the changes not folded into it yet (PostgreSQL's migration 15).
  expect(await store.definitionUses()).toEqual([
    { hash: "h1", runs: remaining.filter((r) => r.definition_hash === "h1").length },
    { hash: "h2", runs: remaining.filter((r) => r.definition_hash === "h2").length },
    { hash: "unused", runs: 0 },
  ]);
  expect(await store.deleteOrphanDefinitions()).toBe(1);
}

test.skipIf(testStorage() === "postgres")(
  "runs stored before migration 018 read back exactly as written, listed and counted as before; later writes keep the counts",
  async () => {
    const db = openDatabase(join(dir, "upgrade.db"), { migrate: false });
    for (const m of migrations.filter((m) => m.version < 18)) db.transaction(() => db.run(m.sql))();
    db.run("PRAGMA user_version = 17");
    db.run(`INSERT INTO run_definitions (hash, definition, created_at) VALUES ('h1', '{}', 'then'), ('h2', '{}', 'then'), ('unused', '{}', 'then')`);
    const rows = history();
    const insert = db.prepare(`INSERT INTO runs (${RUN_COLUMNS.join(", ")}) VALUES (${RUN_COLUMNS.map(() => "?").join(", ")})`);
    for (const row of rows) insert.run(...RUN_COLUMNS.map((c) => row[c]));
    const step = stepRow(rows[3]!.id, { status: "running", finished_at: null });
    db.prepare(
      `INSERT INTO run_steps (${Object.keys(step).join(", ")}) VALUES (${Object.keys(step)
        .map(() => "?")
        .join(", ")})`,
    ).run(...(Object.values(step) as string[]));
    const unfinished = rows.filter((r) => ["pending", "running", "paused"].includes(r.status));

    const upgrades: unknown[] = [];
    expect(migrate(db, (upgrade) => upgrades.push(upgrade))).toEqual(migrations.filter((m) => m.version >= 18).map((m) => m.version));
    // Announced before (nothing answers meanwhile) and after, with the migrations' notes (19, 20 and 21 change nothing on SQLite).
    const announced = {
      from: 17,
      to: migrations.at(-1)!.version,
      migrations: migrations.filter((m) => m.version >= 18).map((m) => `${m.version} ${m.name}`),
      notes: [
        "18 compact-runs: rewrites every stored run once: ~11 s per million runs on 2 cores",
        "19 compact-runs-postgres: changes nothing on SQLite (PostgreSQL's runs are rewritten as SQLite's already are)",
        "20 run-id-hash: changes nothing on SQLite (PostgreSQL's unique index of run ids becomes a smaller hash index)",
        "21 run-sizes: changes nothing on SQLite (PostgreSQL rewrites its runs once, with fuller index pages and narrower columns)",
        "22 duration-index: builds the index of sort=duration again: ~1 s per million runs on 2 cores",
        "24 run-durations: counts the runs per duration and builds the index of sort=duration again: ~11 s per million runs on 2 cores",
      ],
      // The copy written before the upgrade (docs/operations.md, "Upgrade").
      backup: expect.stringContaining(join(dir, "backups", `weft-schema-17-before-${migrations.at(-1)!.version}-`)),
    };
    expect(upgrades).toEqual([announced, { ...announced, ms: expect.any(Number) }]);
    // Migrations sort through temporary files; the connection keeps its temporary tables in memory again after.
    expect(db.query("PRAGMA temp_store").get()).toEqual({ temp_store: 2 });
    // Every stored value is compact: no text left in a searched column.
    expect(
      db
        .query("SELECT count(*) AS n FROM runs WHERE typeof(workspace_id) <> 'integer' OR typeof(started_at) <> 'integer' OR typeof(status) <> 'integer'")
        .get(),
    ).toEqual({ n: 0 });
    await expectUpgraded(runStoreOf(db), rows, unfinished);
    db.close();
  },
);

test.skipIf(testStorage() !== "postgres")(
  "runs stored on PostgreSQL before its migration 19 read back exactly as written, listed and counted as before; later writes keep the counts",
  async () => {
    const url = await emptyPostgresDatabase();
    const sql = await openPostgres(url, { migrate: false });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TABLE weft_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`;
        for (const m of postgresMigrations.filter((m) => m.version < 19)) {
          await tx.unsafe(m.sql);
          await tx`INSERT INTO weft_schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, 'then')`;
        }
      });
      await sql`INSERT INTO run_definitions (hash, definition, created_at) VALUES ('h1', '{}', 'then'), ('h2', '{}', 'then'), ('unused', '{}', 'then')`;
      const rows = history();
      // As the text layout stored them: every searched column its text.
      for (const row of rows) {
        await sql.unsafe(
          `INSERT INTO runs (${RUN_COLUMNS.join(", ")}) VALUES (${RUN_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`,
          RUN_COLUMNS.map((c) => row[c]),
        );
      }
      const step = stepRow(rows[3]!.id, { status: "running", finished_at: null });
      await sql.unsafe(
        `INSERT INTO run_steps (${Object.keys(step).join(", ")}) VALUES (${Object.keys(step)
          .map((_, i) => `$${i + 1}`)
          .join(", ")})`,
        Object.values(step),
      );
      expect(await migratePostgres(sql)).toEqual(postgresMigrations.filter((m) => m.version >= 19).map((m) => m.version));
      const [types] =
        await sql`SELECT pg_typeof(workspace_id)::text AS workspace, pg_typeof(started_at)::text AS started, pg_typeof(status)::text AS status FROM runs LIMIT 1`;
      expect(types).toEqual({ workspace: "integer", started: "bigint", status: "smallint" });
    } finally {
      await sql.close();
    }
    const rows = history();
    const db = connectPostgresDatabase(url);
    const writer = inlineRunWriter(db, 1);
    try {
      await expectUpgraded(
        portStoreOf(db, url, writer),
        rows,
        rows.filter((r) => ["pending", "running", "paused"].includes(r.status)),
      );
    } finally {
      await writer.close();
    }
  },
);

test.skipIf(testStorage() === "postgres")("a new database is created, not upgraded: nothing is announced", () => {
  const upgrades: unknown[] = [];
  const db = openDatabase(join(dir, "new.db"), { onUpgrade: (upgrade) => upgrades.push(upgrade) });
  expect(upgrades).toEqual([]);
  db.close();
});

test.skipIf(testStorage() === "postgres")("a name first stored in a transaction that rolled back is not read as another's once forgotten", () => {
  const db: Db = openDatabase(join(dir, "rollback.db"));
  const writer = new RunStore(db, true);
  expect(() =>
    db.transaction(() => {
      writer.insertRun(runRow("r1", { workflow_id: "wf-gone" }));
      throw new Error("the batch failed");
    })(),
  ).toThrow("the batch failed");
  forgetWrites(db);
  writer.insertRun(runRow("r2", { workflow_id: "wf-kept" }));
  writer.insertRun(runRow("r3", { workflow_id: "wf-gone" }));
  const reader = new RunStore(openDatabase(join(dir, "rollback.db")));
  expect([reader.getRow("r2")!.workflow_id, reader.getRow("r3")!.workflow_id]).toEqual(["wf-kept", "wf-gone"]);
  expect(writer.getRow("r2")!.workflow_id).toBe("wf-kept");
  db.close();
  reader.db.close();
});

test.skipIf(testStorage() === "postgres")(
  "a name a store without forgetting stored in a transaction that rolled back is not remembered (the engine's enqueue inside a trigger's transaction)",
  () => {
    const path = join(dir, "untrusted.db");
    const main = new RunStore(openDatabase(path));
    const writer = new RunStore(openDatabase(path), true);
    expect(() =>
      main.db.transaction(() => {
        main.insertRun(runRow("r1", { workflow_id: "wf-gone" }));
        throw new Error("the trigger's bookkeeping failed");
      })(),
    ).toThrow("the trigger's bookkeeping failed");
    // Another connection now stores another name, which takes the key the rolled-back one had.
    writer.insertRun(runRow("r2", { workflow_id: "wf-other" }));
    main.db.transaction(() => main.insertRun(runRow("r3", { workflow_id: "wf-gone" })))();
    expect([main.getRow("r2")!.workflow_id, main.getRow("r3")!.workflow_id, writer.getRow("r3")!.workflow_id]).toEqual(["wf-other", "wf-gone", "wf-gone"]);
    main.db.close();
    writer.db.close();
  },
);

test.skipIf(testStorage() === "postgres")("a run whose start, status or environment cannot be stored is refused, naming what is allowed", () => {
  const store = new RunStore(openDatabase(join(dir, "refused.db")));
  expect(() => store.insertRun(runRow("r1", { started_at: "2026-11-22T00:00:00Z" }))).toThrow(
    'a run\'s start must be a canonical ISO time (as Date.toISOString writes it); got "2026-11-22T00:00:00Z"',
  );
  expect(() => store.insertRun(runRow("r2", { status: "done" as RunStatus }))).toThrow(
    'a run\'s status must be one of completed, failed, cancelled, pending, running, paused; got "done"',
  );
  expect(() => store.insertRun(runRow("r3", { environment: "staging" as Environment }))).toThrow(
    'a run\'s environment must be production or test; got "staging"',
  );
  expect(store.list({ workspaceId: "ws", environments: ["production"], sort: "newest", limit: 20, offset: 0 })).toEqual({ rows: [], total: 0 });
  store.db.close();
});
