/**
 * The run writer's batches on PostgreSQL (src/store/postgres/run-batches.ts) against a real server (Debian
 * `postgresql`): a batch compiled into multi-row statements leaves exactly the rows and counts that applying
 * its ops one by one leaves — runs patched in the batch that inserted them, steps completed there, patches
 * merged, a run deleted and inserted again, definitions pruned, a run inserted finished with its steps
 * packed — and one bad group fails alone; runs counted without their row (settings.saveRuns none) add up
 * exactly across writers and folds.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresRunBatches, type RunColumnTypes, runColumnTypes } from "../../src/store/postgres/run-batches";
import { RecordDictionaries } from "../../src/store/postgres/record-dictionaries";
import { commitStatements } from "../../src/store/postgres/transaction";
import { postgresPoolOf, storageOf } from "../../src/store/storage";
import { PostgresWriterLanes } from "../../src/store/postgres/writer-lanes";
import { encodeOp, packFinishedRuns, type WireOp, type WriteOp } from "../../src/store/run-writes";
import { RUN_INDEX, type RowValues, type RunRow, type StepRow } from "../../src/store/run-rows";
import { namesOf, STATUS_CODES } from "../../src/store/run-layout";
import { type Failure, failureOf } from "../../src/store/storage-errors";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { runRow, stepRow } from "../support/run-rows";
import { freshPostgresDatabase } from "../support/postgres-storage";

announceMissingPostgres();

const run = (id: string, overrides: Partial<RunRow> = {}): RunRow =>
  runRow(id, {
    workspace_id: "ws1",
    org_id: "org1",
    workflow_id: "wf1",
    workflow_name: "Orders",
    status: "pending",
    trigger_data: `{"order":"${id}"}`,
    version_id: "v1",
    executed_version_id: "v1",
    definition_hash: "def1",
    started_at: "2026-11-25T10:00:00.000Z",
    finished_at: null,
    duration_ms: null,
    step_total: 0,
    event_seq: 0,
    owner: "instance-a",
    ...overrides,
  });

const step = (runId: string, id: string, seq: number, overrides: Partial<StepRow> = {}): StepRow =>
  stepRow(runId, {
    id,
    seq,
    node_id: id,
    display_name: "Set fields",
    status: "running",
    input_data: '{"a":1}',
    output_data: null,
    started_at: "2026-11-25T10:00:00.010Z",
    finished_at: null,
    duration_ms: null,
    ...overrides,
  });

const done = { status: "completed" as const, finished_at: "2026-11-25T10:00:00.050Z", duration_ms: 50 };

/** Batches as the engine sends them: each a list of groups (one per writer waiting), each a list of ops. */
const batches: WriteOp[][][] = [
  [
    [
      { op: "putDefinition", hash: "def1", text: '{"steps":1}' },
      { op: "insertRun", row: run("r1", { tags: '["vip","eu"]' }) },
      { op: "insertStep", row: step("r1", "s1", 1) },
      { op: "updateStep", row: step("r1", "s1", 1, { ...done, output_data: '{"b":2}' }) },
      { op: "patchRun", id: "r1", patch: { status: "running" } },
      { op: "patchRun", id: "r1", patch: { ...done, step_total: 1, event_seq: 3 } },
    ],
    [
      { op: "putDefinition", hash: "def1", text: '{"steps":1}' },
      { op: "insertRun", row: run("r2", { status: "running" }) },
      { op: "insertStep", row: step("r2", "s1", 1) },
      { op: "insertStep", row: step("r2", "s1b", 1, { node_id: "s1b" }) },
    ],
    [
      { op: "putDefinition", hash: "def2", text: '{"steps":2}' },
      { op: "insertRun", row: run("r5", { definition_hash: "def2", workflow_id: "wf2", started_at: "2026-11-25T11:59:59.999Z" }) },
    ],
  ],
  [
    [
      { op: "patchRun", id: "r2", patch: { status: "paused", wait_step: "s1", resume_mode: "webhook", state: '{"x":1}', owner: undefined } },
      { op: "updateStep", row: step("r2", "s1", 1, { status: "paused" }) },
      { op: "insertRun", row: run("r3", { tags: '["eu"]' }) },
      { op: "patchRun", id: "r3", patch: { status: "failed", error_message: "boom", finished_at: done.finished_at, duration_ms: 5 } },
      { op: "patchRun", id: "r2", patch: { tags: '["eu","eu","late"]' } },
      { op: "patchRun", id: "r5", patch: { owner: null } },
    ],
  ],
  [
    [
      { op: "deleteRuns", ids: ["r1", "r5"] },
      { op: "pruneDefinitions" },
      { op: "insertRun", row: run("r1", { status: "running", started_at: "2026-11-25T12:00:00.000Z" }) },
      { op: "patchRun", id: "r2", patch: { status: "completed", wait_step: null, resume_mode: null, state: null } },
      { op: "updateStep", row: step("r2", "s1", 1, { ...done }) },
      { op: "insertStep", row: step("r2", "s2", 2) },
      { op: "patchRun", id: "r1", patch: { step_total: 1 } },
      { op: "insertStep", row: step("r1", "s1", 1) },
      { op: "returnFreePages", pages: 10 },
    ],
  ],
  [
    [
      { op: "insertRun", row: run("r4") },
      // Inserted finished with its steps: stored with them packed into its row, no step rows.
      { op: "insertRun", row: run("r8", { ...done, step_total: 2 }) },
      { op: "insertStep", row: step("r8", "s1", 1, { ...done, output_data: '{"n":1}' }) },
      { op: "insertStep", row: step("r8", "s2", 2) },
      { op: "updateStep", row: step("r8", "s2", 2, { ...done, output_data: '{"n":2}' }) },
    ],
    // PostgreSQL text cannot hold U+0000: this group fails, alone.
    [{ op: "insertRun", row: run("r6", { workflow_name: "bad\u0000name" }) }],
    [
      { op: "patchRun", id: "r3", patch: { retried_by_run_id: "r4" } },
      { op: "insertStep", row: step("r4", "s1", 1) },
      { op: "updateStep", row: step("r4", "s1", 1, { ...done, output_data: '{"ok":true}' }) },
      // A patch of a run not stored yet changes nothing; the insert after it stands as given.
      { op: "patchRun", id: "r7", patch: { status: "running" } },
      { op: "insertRun", row: run("r7") },
    ],
  ],
];

/** As a store applies them: runs inserted finished come with their steps (op 8), packed by the store. */
const opsFor = (batch: WriteOp[][]): WireOp[][] => batch.map((group) => packFinishedRuns(group.map(encodeOp), false));
/** As PostgreSQL's writer sends them: runs inserted finished carry their record (op 10). */
/** A run's or count's stored status code (run-layout.ts) as its name, in SQL and in JavaScript. */
const STATUS_NAME = `CASE status ${Object.entries(STATUS_CODES)
  .map(([name, code]) => `WHEN ${code} THEN '${name}'`)
  .join(" ")} END`;
const STATUS_NAMES = Object.fromEntries(Object.entries(STATUS_CODES).map(([name, code]) => [code, name]));

const book = new RecordDictionaries();
const wire = (batch: WriteOp[][], dictionaries = book): WireOp[][] => opsFor(batch).map((group) => dictionaries.compress(group));

/**
 * A batch's ops applied one by one on PostgreSQL: each op compiled alone into its own statements (nothing merged
 * with the ops around it), the batch's statements in one transaction and, when that fails, each group's alone,
 * as applyBatch does on SQLite. Answers the failures, as `PostgresRunBatches.apply` does.
 */
async function applyOneByOne(sql: SQL, types: RunColumnTypes, groups: WireOp[][]): Promise<Array<Failure | null>> {
  const alone = new PostgresRunBatches((statements) => commitStatements(sql, statements), types);
  const commit = async (some: WireOp[][]) => {
    const inserted = some.flat().flatMap((op): RowValues[] => (op[0] === 0 || op[0] === 10 ? [op[1]] : []));
    await types.names.load(namesOf(inserted, RUN_INDEX));
    await commitStatements(
      sql,
      some.flat().flatMap((op) => alone.compile([op])),
    );
  };
  try {
    await commit(groups);
    return groups.map(() => null);
  } catch (error) {
    if (groups.length === 1) return [failureOf(error)];
    const failures: Array<Failure | null> = [];
    for (const group of groups) failures.push(await commit([group]).then(() => null, failureOf));
    return failures;
  }
}

/** What a user could see of the stored runs: every row of the tables the writer and its triggers touch. */
async function contents(url: string) {
  const sql = new SQL(url, { adapter: "postgres", max: 1 });
  try {
    return {
      // Not seq: a sequence numbers it, which an insert that failed has also advanced (ties only need it unique).
      runs: (await sql`SELECT * FROM runs ORDER BY id`).map(({ seq: _, ...row }: Record<string, unknown>) => row),
      steps: await sql`SELECT run_id, seq, id, node_id, status, input_data, output_data, finished_at, duration_ms FROM run_steps ORDER BY run_id, seq, rowid`,
      // A count is the sum over its slots (migration 15): the total and the changes not folded yet.
      counts: await sql`SELECT workspace_id, environment, workflow_id, status, trigger_type, tag, sum(n)::int AS n FROM run_counts
        GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6`,
      hours: await sql`SELECT workspace_id, hour, environment, workflow_id, status, trigger_type, sum(n)::int AS n FROM run_hours
        GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6`,
      durations: await sql`SELECT workspace_id, bucket, environment, workflow_id, status, trigger_type, sum(n)::int AS n FROM run_durations
        GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6`,
      tags: await sql`SELECT * FROM run_tags ORDER BY workspace_id, tag, started_at, run_id`,
      tagHours: await sql`SELECT workspace_id, tag, hour, environment, workflow_id, status, trigger_type, sum(n)::int AS n FROM run_tag_hours
        GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7`,
      tagDurations: await sql`SELECT workspace_id, tag, bucket, environment, workflow_id, status, trigger_type, sum(n)::int AS n FROM run_tag_durations
        GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7`,
      definitions: await sql`SELECT hash, definition, (runs + COALESCE((SELECT sum(n) FROM run_definition_uses u WHERE u.hash = d.hash), 0))::int AS runs
        FROM run_definitions AS d ORDER BY hash`,
    };
  } finally {
    await sql.close();
  }
}

describe.skipIf(!postgresBinaries())("run batches on PostgreSQL", () => {
  const closing: Array<() => Promise<void>> = [];

  /**
   * `n` new runs in one batch (with their definition), and a batch that ends the first and adds a step to the
   * second: it must be committed after the first batch (expectEnded checks it).
   */
  function manyThenEnding(prefix: string, n: number) {
    const ids = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, "0")}`);
    const big = wire([[{ op: "putDefinition", hash: "def1", text: "{}" }, ...ids.map((id): WriteOp => ({ op: "insertRun", row: run(id) }))]]);
    const ending = wire([
      [
        { op: "patchRun", id: ids[0]!, patch: { ...done, step_total: 1 } },
        { op: "insertStep", row: step(ids[1]!, "s1", 1) },
      ],
    ]);
    return { ids, big, ending };
  }

  /** The first run ended and the second has its step (manyThenEnding); a connection for more checks. */
  async function expectEnded(url: string, ids: string[]) {
    const sql = new SQL(url, { adapter: "postgres", max: 1 });
    closing.push(() => sql.close());
    const [first] = await sql.unsafe(`SELECT ${STATUS_NAME} AS status, step_total FROM runs WHERE id = $1`, [ids[0]]);
    expect(first).toEqual({ status: "completed", step_total: 1 });
    const [steps] = await sql`SELECT count(*)::int AS n FROM run_steps WHERE run_id = ${ids[1]}`;
    expect(steps.n).toBe(1);
    return sql;
  }
  afterAll(async () => {
    for (const close of closing) await close();
  });

  test("batches compiled into multi-row statements store what the ops applied one by one store, and a bad group fails alone", async () => {
    const oneByOne = await freshPostgresDatabase();
    const oneByOneSql = new SQL(oneByOne.url, { adapter: "postgres", max: 1 });
    closing.push(() => oneByOneSql.close());
    const oneByOneTypes = runColumnTypes(postgresPoolOf(oneByOne.db));
    // Its own dictionaries, as a second writer has: each announces the dictionaries its records need.
    const oneByOneBook = new RecordDictionaries();
    const expectedFailures: Array<Array<Failure | null>> = [];
    for (const batch of batches) expectedFailures.push(await applyOneByOne(oneByOneSql, oneByOneTypes, wire(batch, oneByOneBook)));

    const batched = await freshPostgresDatabase();
    const sql = new SQL(batched.url, { adapter: "postgres", max: 1 });
    closing.push(() => sql.close());
    const writer = PostgresRunBatches.on(sql, runColumnTypes(postgresPoolOf(batched.db)));
    const failures: Array<Array<Failure | null>> = [];
    for (const batch of batches) failures.push(await writer.apply(wire(batch)));

    expect(failures.map((f) => f.map((x) => x !== null))).toEqual(expectedFailures.map((f) => f.map((x) => x !== null)));
    // The failure keeps its kind, whichever path wrote it: the engine's caller is answered 400, not 500.
    expect(failures.at(-1)).toEqual([null, { kind: "not_storable", message: expect.stringContaining("Unicode") }, null]);
    expect(expectedFailures.at(-1)?.[1]?.kind).toBe("not_storable");

    const expected = await contents(oneByOne.url);
    const actual = await contents(batched.url);
    expect(actual.runs.map((r: RunRow) => r.id)).toEqual(["r1", "r2", "r3", "r4", "r7", "r8"]);
    // Tagged runs are counted per tag and hour too (migration 027): summed over the hours, run_counts' tag rows.
    type Counted = { workspace_id: number; environment: number; workflow_id: number; status: number; trigger_type: number; tag: string; n: number };
    const cell = (c: Counted) => [c.workspace_id, c.environment, c.workflow_id, c.status, c.trigger_type, c.tag].join(" ");
    const tagCounts = (actual.counts as Counted[]).filter((c) => c.tag !== "");
    expect(tagCounts.length).toBeGreaterThan(0);
    // And per tag and duration bucket (run_tag_durations): summed over the buckets, the same.
    for (const perKey of [actual.tagHours, actual.tagDurations] as Counted[][]) {
      const summed = new Map<string, number>();
      for (const h of perKey) summed.set(cell(h), (summed.get(cell(h)) ?? 0) + h.n);
      expect(summed).toEqual(new Map(tagCounts.map((c) => [cell(c), c.n])));
    }
    expect(actual).toEqual(expected);
    expect(actual.steps.filter((s: StepRow) => s.run_id === "r8")).toEqual([]);
    expect(await storageOf(batched.db).runReads.steps("r8")).toEqual([
      step("r8", "s1", 1, { ...done, output_data: '{"n":1}' }),
      step("r8", "s2", 2, { ...done, output_data: '{"n":2}' }),
    ]);
    // r8's cold columns are in its record, compressed against a dictionary stored with it, and read back as given.
    expect(actual.runs.find((r: RunRow) => r.id === "r8")).toMatchObject({ trigger_data: "", org_id: "", workflow_name: "", finished_at: null });
    expect(await storageOf(batched.db).runReads.getRow("r8")).toEqual(run("r8", { ...done, step_total: 2 }));
    expect((await sql`SELECT definition_hash FROM run_dictionaries`).map((d: { definition_hash: string }) => d.definition_hash)).toEqual(["def1"]);
    // The counts a user reads as list totals: r1 (again), r2, r3, r4, r7, by status.
    expect(actual.counts.filter((c: { tag: string }) => c.tag === "").map((c: { status: number; n: number }) => [STATUS_NAMES[c.status], c.n])).toEqual([
      ["completed", 2],
      ["failed", 1],
      ["pending", 2],
      ["running", 1],
    ]);

    // Folding moves every change into slot 0 (and into run_definitions.runs): the counts read the same.
    await writer.fold();
    expect(await contents(batched.url)).toEqual(actual);
    const [left] = await sql`SELECT (SELECT count(*) FROM run_counts WHERE slot <> 0) + (SELECT count(*) FROM run_hours WHERE slot <> 0)
      + (SELECT count(*) FROM run_durations WHERE slot <> 0) + (SELECT count(*) FROM run_tag_hours WHERE slot <> 0)
      + (SELECT count(*) FROM run_tag_durations WHERE slot <> 0)
      + (SELECT count(*) FROM run_definition_uses) AS n`;
    expect(Number(left.n)).toBe(0);
  });

  test("counts stay exact while two writers add and fold at the same time; a fold leaves only slot 0", async () => {
    const { url, db } = await freshPostgresDatabase();
    const types = runColumnTypes(postgresPoolOf(db));
    const [a, b] = [await PostgresWriterLanes.open(url, types), await PostgresWriterLanes.open(url, types)];
    closing.push(
      () => a.close(),
      () => b.close(),
    );
    const sql = new SQL(url, { adapter: "postgres", max: 1 });
    closing.push(() => sql.close());
    const total = async () =>
      Number((await sql`SELECT sum(n) AS n FROM run_counts WHERE tag = '' AND workflow_id = (SELECT key FROM run_names WHERE name = 'wf1')`)[0].n ?? 0);
    // Two instances' writers: each inserts 20 batches of 50 runs (half of them ended in a later batch), folding
    // as it goes; a reader samples the total meanwhile, which only grows.
    const seen: number[] = [];
    const writer = async (lanes: PostgresWriterLanes, name: string) => {
      for (let k = 0; k < 20; k++) {
        const ids = Array.from({ length: 50 }, (_, i) => `${name}-${k}-${i}`);
        const batch = wire([[{ op: "putDefinition", hash: "def1", text: "{}" }, ...ids.map((id): WriteOp => ({ op: "insertRun", row: run(id) }))]]);
        const ending = wire([ids.filter((_, i) => i % 2 === 0).map((id): WriteOp => ({ op: "patchRun", id, patch: { ...done } }))]);
        expect(await Promise.all([lanes.apply(batch), lanes.apply(ending)])).toEqual([[null], [null]]);
        await lanes.foldIfDue(Date.now() + 60_000 * (k + 1));
        seen.push(await total());
      }
    };
    await Promise.all([writer(a, "a"), writer(b, "b")]);
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
    expect(await total()).toBe(2_000);
    const byStatus = await sql.unsafe(`SELECT ${STATUS_NAME} AS status, sum(n)::int AS n FROM run_counts WHERE tag = '' GROUP BY status ORDER BY status`);
    expect(byStatus.map((r: { status: string; n: number }) => [r.status, r.n])).toEqual([
      ["completed", 1_000],
      ["pending", 1_000],
    ]);
    await a.foldIfDue(Date.now() + 10 * 3_600_000);
    const [left] = await sql`SELECT count(*)::int AS n FROM run_counts WHERE slot <> 0`;
    expect(left.n).toBe(0);
    expect(await total()).toBe(2_000);
  });

  test("runs counted without their row (saveRuns none) add up exactly across two writers, and read the same once folded; dropSteps leaves the run", async () => {
    const { url, db } = await freshPostgresDatabase();
    const types = runColumnTypes(postgresPoolOf(db));
    const [a, b] = [await PostgresWriterLanes.open(url, types), await PostgresWriterLanes.open(url, types)];
    closing.push(
      () => a.close(),
      () => b.close(),
    );
    const ended = (id: string, status: "completed" | "failed", hour: number) =>
      run(id, { ...done, status, started_at: `2026-11-25T${String(hour).padStart(2, "0")}:00:00.000Z` });
    // Each writer: 10 batches of 30 runs not kept (completed, two hours), plus one failed kept whole.
    const writer = async (lanes: PostgresWriterLanes, name: string) => {
      for (let k = 0; k < 10; k++) {
        const counted = Array.from({ length: 30 }, (_, i): WriteOp => ({ op: "countRun", row: ended(`${name}-${k}-${i}`, "completed", 10 + (i % 2)) }));
        expect(await lanes.apply(wire([counted]))).toEqual([null]);
      }
      const kept = `${name}-kept`;
      expect(
        await lanes.apply(
          wire([
            [
              { op: "putDefinition", hash: "def1", text: "{}" },
              { op: "insertRun", row: run(kept, { status: "running" }) },
              { op: "insertStep", row: step(kept, "s1", 1, done) },
            ],
          ]),
        ),
      ).toEqual([null]);
      expect(
        await lanes.apply(
          wire([
            [
              { op: "dropSteps", runId: kept },
              { op: "patchRun", id: kept, patch: { ...done, step_total: 1 } },
            ],
          ]),
        ),
      ).toEqual([null]);
    };
    await Promise.all([writer(a, "a"), writer(b, "b")]);
    const reads = storageOf(db).runReads;
    const filter = { workspaceId: "ws1", environments: ["production" as const] };
    const hour10 = Math.floor(Date.parse("2026-11-25T10:00:00.000Z") / 3_600_000);
    const eleven = { hour: hour10 + 1, status: "completed", stored: 0, unsaved: 300 };
    const counts = await reads.hourCounts(filter, hour10);
    // The two kept runs started at 10:00 (run()'s start) and are completed, their rows stored without steps.
    expect(counts).toEqual([{ hour: hour10, status: "completed", stored: 2, unsaved: 300 }, eleven]);
    for (const id of ["a-kept", "b-kept"]) {
      expect((await reads.getRow(id))?.status).toBe("completed");
      expect(await reads.steps(id)).toEqual([]);
    }
    await a.foldIfDue(Date.now() + 10 * 3_600_000);
    const sql = new SQL(url, { adapter: "postgres", max: 1 });
    closing.push(() => sql.close());
    const [left] = await sql`SELECT count(*)::int AS n FROM run_unsaved WHERE slot <> 0`;
    expect(left.n).toBe(0);
    expect(await reads.hourCounts(filter, hour10)).toEqual(counts);
    expect(await reads.hourCounts({ ...filter, status: "completed", workflowId: "wf1" }, hour10 + 1)).toEqual([eleven]);
    expect(await reads.hourCounts({ ...filter, environments: ["test"] }, hour10)).toEqual([]);
  });

  test("on two connections, a batch that ends runs of a batch still committing waits for it; other batches go beside it", async () => {
    const { url, db } = await freshPostgresDatabase();
    const lanes = await PostgresWriterLanes.open(url, runColumnTypes(postgresPoolOf(db)));
    closing.push(() => lanes.close());
    // A large batch of new runs, then, before it committed, batches ending some of them and one of other runs.
    const { ids, big, ending } = manyThenEnding("big", 3_000);
    const other = wire([[{ op: "insertRun", row: run("other", { ...done, definition_hash: "def1" }) }]]);
    const results = await Promise.all([lanes.apply(big), lanes.apply(ending), lanes.apply(other)]);
    expect(results).toEqual([[null], [null], [null]]);

    const sql = await expectEnded(url, ids);
    const counts = await sql.unsafe(`SELECT ${STATUS_NAME} AS status, sum(n)::int AS n FROM run_counts WHERE tag = '' GROUP BY status ORDER BY status`);
    expect(counts.map((c: { status: string; n: number }) => [c.status, c.n])).toEqual([
      ["completed", 2],
      ["pending", ids.length - 1],
    ]);
  });

  test("on two connections, a batch that changes runs a batch still committing inserted finished (their steps in their records) waits for it", async () => {
    const { url, db } = await freshPostgresDatabase();
    const lanes = await PostgresWriterLanes.open(url, runColumnTypes(postgresPoolOf(db)));
    closing.push(() => lanes.close());
    const ids = Array.from({ length: 3_000 }, (_, i) => `fin-${String(i).padStart(4, "0")}`);
    const big = wire([
      [
        { op: "putDefinition", hash: "def1", text: "{}" },
        ...ids.flatMap((id): WriteOp[] => [
          { op: "insertRun", row: run(id, { ...done, step_total: 1 }) },
          { op: "insertStep", row: step(id, "s1", 1, { ...done }) },
        ]),
      ],
    ]);
    expect(big[0]!.filter((op) => op[0] === 10)).toHaveLength(ids.length);
    const tagged = wire([[{ op: "patchRun", id: ids[0]!, patch: { tags: '["late"]' } }]]);
    expect(await Promise.all([lanes.apply(big), lanes.apply(tagged)])).toEqual([[null], [null]]);
    const sql = new SQL(url, { adapter: "postgres", max: 1 });
    closing.push(() => sql.close());
    const [first] = await sql`SELECT tags FROM runs WHERE id = ${ids[0]}`;
    expect(first).toEqual({ tags: '["late"]' });
  });

  test("until a connection of its own opens, the writer commits on the storage port's pool, in order, one bad group failing alone", async () => {
    const { url, db } = await freshPostgresDatabase();
    // A password the server refuses: the writer's own connections never open.
    const refused = new URL(url);
    refused.password = "not-the-password";
    const noLane: unknown[] = [];
    const lanes = await PostgresWriterLanes.open(refused.toString(), runColumnTypes(postgresPoolOf(db)), {
      commit: async (statements) => {
        const connection = await postgresPoolOf(db).reserve();
        try {
          await commitStatements(connection, statements);
        } finally {
          connection.release();
        }
      },
      noLane: (error) => noLane.push(error),
    });
    closing.push(() => lanes.close());
    const { ids, big, ending } = manyThenEnding("early", 500);
    const groups = wire([
      [{ op: "insertRun", row: run("good-1", { definition_hash: "def1" }) }],
      [{ op: "insertRun", row: run("bad", { definition_hash: "def1", workflow_name: "a\u0000b" }) }],
      [{ op: "insertRun", row: run("good-2", { definition_hash: "def1" }) }],
    ]);
    const results = await Promise.all([lanes.apply(big), lanes.apply(ending), lanes.apply(groups)]);
    expect(results.slice(0, 2)).toEqual([[null], [null]]);
    expect(results[2]).toEqual([null, { kind: "not_storable", message: expect.stringContaining("Unicode") }, null]);

    const sql = await expectEnded(url, ids);
    const stored = await sql`SELECT id FROM runs WHERE id IN ('good-1', 'bad', 'good-2') ORDER BY id`;
    expect(stored.map((r: { id: string }) => r.id)).toEqual(["good-1", "good-2"]);
    // The reason the writer's own connections did not open is told once.
    expect(noLane).toHaveLength(1);
    expect(String((noLane[0] as Error).message)).toContain("password authentication failed");
    const counts = await sql.unsafe(`SELECT ${STATUS_NAME} AS status, sum(n)::int AS n FROM run_counts WHERE tag = '' GROUP BY status ORDER BY status`);
    expect(counts.map((c: { status: string; n: number }) => [c.status, c.n])).toEqual([
      ["completed", 1],
      ["pending", ids.length + 1],
    ]);
  });
});
