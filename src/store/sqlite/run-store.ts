/**
 * SQLite's repository for runs, step rows and run definitions (RunStore): the statements the run writer applies
 * inside its group-commit transaction (./run-writers.ts, ./writer-thread.ts), the list pages and run details the
 * reader threads answer (../run-reads.ts), and retention's questions; the storage port's SQLite run areas
 * (./run-claims.ts, ./run-inserts.ts, ./run-reads.ts, ./run-retention.ts) call it. Prepared statements are created
 * once per store. The rows, their columns and conversions both databases share are ../run-rows.ts.
 *
 * One file: every statement reads or writes the same rows through one layout (./run-names.ts) and one set of
 * per-connection memories (definitions, dictionaries, names' keys: forgetWrites clears them all together), and a
 * change to how a run is stored (its record, its cold columns) changes its writes and its reads together.
 */
import type { SQLQueryBindings, Statement } from "bun:sqlite";
import type { Db } from "../db";
import type { UnsavedCell } from "../run-writes";
import { type RunLayout, type Stored, statusName } from "../run-layout";
import { type HourCount, mergeHourCounts, type RunCountFilter, unsavedConditions } from "../run-read-repository";
import {
  BLANK,
  COLD_COLUMNS,
  type Dictionary,
  firstDictionary,
  type GrowingDictionary,
  growDictionary,
  isCold,
  MAX_PACKED_STEPS,
  mayHoldColdColumns,
  mergeSteps,
  packRecord,
  readColdColumns,
  readRecord,
  type RowValues,
  recordText,
  type RunRecord,
  splitCold,
  STEP_COLUMNS,
  type StepRow,
  storedDictionary,
  withCold,
  spellFinish,
} from "../run-records";
import {
  DELETE_ORPHAN_DEFINITIONS,
  DICTIONARY_GRACE_MS,
  deleteOrphanDictionaries,
  FIRST_HOURS,
  type HourSpanEnds,
  hourWalk,
  LIST_COLUMNS,
  nearerEnd,
  qualified,
  ROW_COLUMNS,
  RUN_COLUMNS,
  RUN_INDEX,
  reversedOrder,
  type RunListFilter,
  type RunPatch,
  type RunPosition,
  type RunRow,
  runValues,
  STEP_UPDATE_COLUMNS,
  STORED_COLUMNS,
  spanBounds,
  spanInHours,
  spanThroughHours,
  stepValues,
  SUM_OF_N,
} from "../run-rows";
import { bindRow, countOf } from "./db";
import { runLayout } from "./run-names";
import { durationPage } from "./run-durations";
import { type BucketRow, bucketsThrough, type DurationWalk, durationPageTuning, durationWalks, taggedWalkRuns, walkRange } from "../run-duration-pages";

/** A run row as selected with its record. */
type StoredRow = RunRow & { packed_steps?: Uint8Array | null };

/** A run's place as selected (values as stored). */
interface PositionRow {
  id: string;
  started_at: Stored;
  tie: Stored;
}

const DEFINITION_HASH = RUN_INDEX.get("definition_hash")!;

/**
 * One page of the runs matching `where` in `order` ($limit, $offset): the page's keys first, from the list
 * index alone, then those rows: the runs an OFFSET skips are never read from the table (PostgreSQL reads every
 * skipped row from the table unless the scan returns index columns only: 1,000 skipped rows 9 ms → 3.5 ms at
 * 1,000,000 runs). `walk` is the order the keys are looked for in: `order` reversed when the page is counted
 * from the list's other end (RunStore.list).
 */
const pageOf = (tie: string, where: string, order: string, walk = order) =>
  `SELECT ${LIST_COLUMNS} FROM runs WHERE ${tie} IN (SELECT ${tie} FROM runs WHERE ${where} ORDER BY ${walk} LIMIT $limit OFFSET $offset) ORDER BY ${order}`;

/**
 * Runs after a position in start order ($startedAt, $startedAt, $tie): a range on the list index's started_at
 * (a row-value or OR comparison would not bound the scan on both databases), ties broken by `tie`.
 */
const afterPosition = (tie: string) => ` AND started_at >= ? AND NOT (started_at = ? AND ${tie} <= ?)`;

/** The list filter as conditions on the columns runs, run_counts and run_hours share. */
interface Cells {
  where: string[];
  params: Record<string, unknown>;
}

/**
 * `withWorkspace` false: the workspace condition left out (a workflow's runs are all in its workspace).
 * Undefined when a name of the filter was never stored with a run (nothing matches).
 */
function cellConditions(filter: RunCountFilter, layout: RunLayout, withWorkspace = true): Cells | undefined {
  const where: string[] = [];
  const params: Record<string, unknown> = {};
  const workspace = layout.find(filter.workspaceId);
  if (workspace === undefined) return undefined;
  if (withWorkspace) {
    where.push("workspace_id = $workspaceId");
    params.workspaceId = workspace;
  }
  if (filter.environments.length === 1) {
    where.push("environment = $environment");
    params.environment = layout.environment(filter.environments[0]!);
  }
  if (filter.status) {
    where.push("status = $status");
    params.status = layout.status(filter.status);
  }
  if (filter.triggerType) {
    const key = layout.find(filter.triggerType);
    if (key === undefined) return undefined;
    where.push("trigger_type = $triggerType");
    params.triggerType = key;
  }
  if (filter.workflowId) {
    const key = layout.find(filter.workflowId);
    if (key === undefined) return undefined;
    where.push("workflow_id = $workflowId");
    params.workflowId = key;
  }
  return { where, params };
}

/** The kept counts per hour a list page's hours are found in: every run's (run_hours), or a tag's runs' (run_tag_hours). */
interface HourCounts extends Cells {
  table: "run_hours" | "run_tag_hours";
}

const hourCounts = (cells: Cells, tag: string | undefined): HourCounts =>
  tag === undefined ? { table: "run_hours", ...cells } : { table: "run_tag_hours", where: [...cells.where, "tag = $tag"], params: { ...cells.params, tag } };

export class RunStore {
  private readonly insertRunStmt: Statement;
  private readonly insertPackedRunStmt: Statement;
  private readonly recordStmt: Statement<StoredRow>;
  private readonly setRecordStmt: Statement;
  private readonly setPackedOnlyStmt: Statement;
  private readonly dictionaryStmt: Statement<{ bytes: Uint8Array }>;
  private readonly definitionDictionaryStmt: Statement<{ id: string; bytes: Uint8Array }>;
  private readonly insertDictionaryStmt: Statement;
  private readonly insertStepStmt: Statement;
  private readonly updateStepStmt: Statement;
  private readonly getRunStmt: Statement<StoredRow>;
  private readonly hasStmt: Statement<{ found: number }>;
  private readonly recentTriggerStmt: Statement<{ id: string; trigger_data: string; packed_steps: Uint8Array | null }>;
  private readonly getStepsStmt: Statement<StepRow>;
  private readonly packedStepsStmt: Statement<{ packed_steps: Uint8Array | null }>;
  private readonly deleteStepRowsStmt: Statement;
  private readonly countUnsavedStmt: Statement;
  private readonly stepCountStmt: Statement<{ n: number }>;
  private readonly firstStepsStmt: Statement<StepRow>;
  private readonly lastStepsStmt: Statement<StepRow>;
  private readonly insertDefinitionStmt: Statement;
  private readonly getDefinitionStmt: Statement<{ definition: string }>;
  private readonly progressStmt: Statement;
  private readonly unfinishedStmt: Statement<RunRow>;
  private readonly lastRunStmt: Statement<{ status: string; started_at: string }>;
  private readonly listStatements = new Map<string, Statement>();
  private readonly patchStatements = new Map<string, Statement>();

  /** How this database stores the searched columns (run-layout.ts). */
  private readonly layout: RunLayout;

  /**
   * `remembersWrites`: every transaction of this store's that fails is followed by forgetWrites (the run
   * writer's batches: applyBatch), so what it stored inside one may be remembered as stored — definitions and
   * names' keys (run-layout.ts). Any other store remembers a key only when it learned it outside a transaction.
   */
  constructor(
    readonly db: Db,
    private readonly remembersWrites = false,
  ) {
    this.layout = runLayout(db);
    const { tie } = this.layout;
    // Positional parameters: binding 34 values by position costs less than by name, and the run writer's
    // thread receives rows as arrays in this column order (../run-writes.ts, WireOp).
    const marks = RUN_COLUMNS.map(() => "?").join(", ");
    this.insertRunStmt = db.prepare(`INSERT INTO runs (${ROW_COLUMNS}) VALUES (${marks})`);
    this.insertPackedRunStmt = db.prepare(`INSERT INTO runs (${ROW_COLUMNS}, packed_steps) VALUES (${marks}, ?)`);
    this.insertStepStmt = db.prepare(`INSERT INTO run_steps (${STEP_COLUMNS.join(", ")}) VALUES (${STEP_COLUMNS.map(() => "?").join(", ")})`);
    this.updateStepStmt = db.prepare(`UPDATE run_steps SET ${STEP_UPDATE_COLUMNS.map((c) => `${c} = $${c}`).join(", ")} WHERE run_id = $run_id AND id = $id`);
    this.getRunStmt = db.prepare(`SELECT ${STORED_COLUMNS} FROM runs WHERE id = ?`);
    this.hasStmt = db.prepare("SELECT 1 AS found FROM runs WHERE id = ?");
    this.recordStmt = db.prepare(`SELECT ${STORED_COLUMNS} FROM runs WHERE id = ? AND packed_steps IS NOT NULL`);
    this.setRecordStmt = db.prepare(
      `UPDATE runs SET packed_steps = ?, ${COLD_COLUMNS.map((c) => `${c} = ${BLANK[c] === null ? "NULL" : "''"}`).join(", ")} WHERE id = ?`,
    );
    this.setPackedOnlyStmt = db.prepare(`UPDATE runs SET packed_steps = ? WHERE id = ?`);
    this.dictionaryStmt = db.prepare(`SELECT bytes FROM run_dictionaries WHERE id = ?`);
    this.definitionDictionaryStmt = db.prepare(
      `SELECT id, bytes FROM run_dictionaries WHERE definition_hash = ? ORDER BY seen_at DESC, length(bytes) DESC, id LIMIT 1`,
    );
    this.insertDictionaryStmt = db.prepare(`INSERT OR IGNORE INTO run_dictionaries (id, definition_hash, bytes, seen_at) VALUES (?, ?, ?, ?)`);
    this.recentTriggerStmt = db.prepare(
      `SELECT id, trigger_data, packed_steps FROM runs WHERE workflow_id = ? AND trigger_type = ? ORDER BY started_at DESC, ${tie} DESC LIMIT ?`,
    );
    this.getStepsStmt = db.prepare(`SELECT * FROM run_steps WHERE run_id = ? ORDER BY seq, rowid`);
    this.packedStepsStmt = db.prepare(`SELECT packed_steps FROM runs WHERE id = ? AND packed_steps IS NOT NULL`);
    this.deleteStepRowsStmt = db.prepare(`DELETE FROM run_steps WHERE run_id = ?`);
    this.countUnsavedStmt = db.prepare(
      `INSERT INTO run_unsaved (workspace_id, workflow_id, hour, environment, trigger_type, status, n) VALUES (?, ?, ?, ?, ?, ?, 1)
        ON CONFLICT DO UPDATE SET n = n + 1`,
    );
    this.stepCountStmt = db.prepare(`SELECT count(*) AS n FROM run_steps WHERE run_id = ?`);
    this.firstStepsStmt = db.prepare(`SELECT * FROM run_steps WHERE run_id = ? ORDER BY seq, rowid LIMIT ?`);
    this.lastStepsStmt = db.prepare(
      `SELECT * FROM (SELECT rowid AS r, * FROM run_steps WHERE run_id = ? ORDER BY seq DESC, rowid DESC LIMIT ?) AS last ORDER BY seq, r`,
    );
    this.insertDefinitionStmt = db.prepare(`INSERT OR IGNORE INTO run_definitions (hash, definition, created_at) VALUES (?, ?, ?)`);
    this.getDefinitionStmt = db.prepare(`SELECT definition FROM run_definitions WHERE hash = ?`);
    this.progressStmt = db.prepare(`UPDATE runs SET step_total = ?, step_failed = ?, event_seq = ? WHERE id = ?`);
    // Start-up recovery: runs_unfinished holds only these rows, so the cost follows the unfinished runs, not the history.
    this.unfinishedStmt = db.prepare(`SELECT ${ROW_COLUMNS} FROM runs WHERE status IN (${this.layout.unfinished}) ORDER BY id`);
    this.lastRunStmt = db.prepare(`SELECT status, started_at FROM runs WHERE workflow_id = ? ORDER BY started_at DESC, ${tie} DESC LIMIT 1`);
  }

  insertRun(row: RunRow): void {
    this.insertRunValues(runValues(row));
  }

  /** A run row as its values in RUN_COLUMNS order. */
  insertRunValues(values: RowValues): void {
    this.insertRunStmt.run(...this.layout.encodeRow(values, RUN_INDEX, this.remembersWrites));
  }

  /**
   * A finished run (values in RUN_COLUMNS order) with its steps (values in STEP_COLUMNS order) and cold
   * columns in its record (run-records.ts), compressed against its definition's dictionary; no step rows.
   */
  insertFinishedRun(values: RowValues, steps: readonly RowValues[]): void {
    const { cold, row } = splitCold(values, RUN_INDEX);
    const text = recordText(cold, steps);
    this.insertPackedRunStmt.run(
      ...this.layout.encodeRow(row, RUN_INDEX, this.remembersWrites),
      packRecord(text, this.writerDictionary(String(values[DEFINITION_HASH]), text)),
    );
  }

  insertStep(row: StepRow): void {
    this.insertStepValues(stepValues(row));
  }

  /** A step row as its values in STEP_COLUMNS order. */
  insertStepValues(values: RowValues): void {
    this.insertStepStmt.run(...values);
  }

  /**
   * Completes a step written earlier (a paused step that resumed); a step whose run finished meanwhile (a step
   * that ended after its run was cancelled) is updated where packStoredSteps put it.
   */
  updateStep(row: StepRow): void {
    const params: Record<string, unknown> = { id: row.id, run_id: row.run_id };
    for (const c of STEP_UPDATE_COLUMNS) params[c] = row[c];
    if (this.updateStepStmt.run(params as SQLQueryBindings).changes > 0) return;
    const stored = this.recordStmt.get(row.run_id);
    if (!stored?.packed_steps) return;
    const record = this.record(stored.id, stored.packed_steps);
    const step = record.steps.find((s) => s.id === row.id);
    if (!step) return;
    for (const c of STEP_UPDATE_COLUMNS) (step as unknown as Record<string, unknown>)[c] = row[c];
    this.writeRecord(stored, record);
  }

  patchRun(id: string, patch: RunPatch): void {
    let keys = Object.keys(patch)
      .filter((k) => (patch as Record<string, unknown>)[k] !== undefined)
      .sort();
    if (keys.length === 0) return;
    // A cold column of a run whose record holds them is changed in the record. (A run finishing has no record
    // yet: its patch comes before the packing; one look at the record column tells.) A record holding
    // finished_at as start plus duration gets its text before either of those changes.
    const movesFinish = keys.includes("started_at") || keys.includes("duration_ms");
    if ((keys.some(isCold) || movesFinish) && mayHoldColdColumns(this.packedStepsStmt.get(id)?.packed_steps)) {
      const stored = this.recordStmt.get(id);
      const record = stored?.packed_steps ? this.record(id, stored.packed_steps) : undefined;
      if (stored && record?.cold) {
        if (movesFinish) spellFinish(record.cold, stored);
        for (const k of keys) if (isCold(k)) record.cold[COLD_COLUMNS.indexOf(k)] = (patch as Record<string, unknown>)[k];
        this.writeRecord(stored, record);
        keys = keys.filter((k) => !isCold(k));
        if (keys.length === 0) return;
      }
    }
    const sig = keys.join(",");
    let stmt = this.patchStatements.get(sig);
    if (!stmt) {
      stmt = this.db.prepare(`UPDATE runs SET ${keys.map((k) => `${k} = $${k}`).join(", ")} WHERE id = $id`);
      this.patchStatements.set(sig, stmt);
    }
    const params: Record<string, unknown> = { id };
    for (const k of keys) params[k] = (patch as Record<string, unknown>)[k];
    if (patch.status !== undefined) params.status = this.layout.status(patch.status);
    stmt.run(bindRow(params));
  }

  progress(id: string, stepTotal: number, stepFailed: number, eventSeq: number): void {
    this.progressStmt.run(stepTotal, stepFailed, eventSeq, id);
  }

  /** The trigger output of a workflow's newest `limit` runs of one trigger type, newest first (a subscription telling a redelivery from a new event). */
  recentTriggerData(workflowId: string, triggerType: string, limit: number): unknown[] {
    const workflow = this.layout.find(workflowId);
    const trigger = this.layout.find(triggerType);
    if (workflow === undefined || trigger === undefined) return [];
    return this.recentTriggerStmt.all(workflow, trigger, limit).map((row) => JSON.parse(this.hydrate(row).trigger_data));
  }

  /** Whether run `id` is stored (committed, or written by this connection's open transaction). */
  has(id: string): boolean {
    return this.hasStmt.get(id) !== null;
  }

  getRow(id: string): RunRow | null {
    const row = this.getRunStmt.get(id);
    return row ? this.hydrate(row) : null;
  }

  /** One run of a workspace (another workspace's id reads as absent). */
  get(workspaceId: string, id: string): RunRow | null {
    const row = this.getRunStmt.get(id);
    if (!row) return null;
    const run = this.hydrate(row);
    return run.workspace_id === workspaceId ? run : null;
  }

  /** A run's steps, whichever way they were stored (rows, packed, or both), in order. */
  steps(runId: string): StepRow[] {
    const packed = this.packedSteps(runId);
    const rows = this.getStepsStmt.all(runId);
    return packed ? mergeSteps(packed, rows) : rows;
  }

  /**
   * Moves the step rows and the cold columns of a finished run into its record, with any steps packed there
   * already (the run writer, when the run finishes; inside its transaction). A run of more than
   * MAX_PACKED_STEPS keeps its rows.
   */
  packStoredSteps(runId: string): void {
    const rows = this.getStepsStmt.all(runId);
    if (rows.length === 0) return;
    const stored = this.getRunStmt.get(runId);
    if (!stored) return;
    const old = stored.packed_steps ? this.record(runId, stored.packed_steps) : undefined;
    const steps = mergeSteps(old?.steps ?? [], rows);
    if (steps.length > MAX_PACKED_STEPS) return;
    // The cold values: the old record's when it holds them (read once, above), else the row's.
    const row = withCold(stored, old?.cold ?? null);
    const cold = COLD_COLUMNS.map((c) => row[c]);
    this.writeRecord(stored, { cold, steps });
    this.deleteStepRowsStmt.run(runId);
  }

  /** A record written again (a step or a cold column changed), against the dictionary of its definition. */
  private writeRecord(stored: StoredRow, record: RunRecord): void {
    this.layout.decode(stored);
    const text = recordText(record.cold, record.steps.map(stepValues));
    const packed = packRecord(text, this.writerDictionary(stored.definition_hash, text));
    if (record.cold) this.setRecordStmt.run(packed, stored.id);
    else this.setPackedOnlyStmt.run(packed, stored.id);
  }

  private packedSteps(runId: string): StepRow[] | undefined {
    const packed = this.packedStepsStmt.get(runId)?.packed_steps;
    return packed ? this.record(runId, packed).steps : undefined;
  }

  /** A dictionary's bytes by id, as the record readers take it (one function, not one per row read). */
  private readonly dictionaryOf = (id: string) => this.dictionary(id);

  private record(runId: string, bytes: Uint8Array): RunRecord {
    return readRecord(runId, bytes, this.dictionaryOf);
  }

  /** `row` (selected with its record) with its cold columns from the record, and without the record. */
  private hydrate<Row extends { id: string; packed_steps?: Uint8Array | null }>(row: Row): Omit<Row, "packed_steps"> {
    const bytes = row.packed_steps;
    delete row.packed_steps;
    this.layout.decode(row);
    if (bytes && mayHoldColdColumns(bytes)) withCold(row, readColdColumns(row.id, bytes, this.dictionaryOf));
    return row;
  }

  private hydrateAll(rows: StoredRow[]): RunRow[] {
    for (const row of rows) this.hydrate(row);
    return rows;
  }

  /** A dictionary's bytes by id (immutable: cached for good, up to a bound). */
  private dictionary(id: string): Uint8Array | null {
    const cache = dictionaryCache(this.db);
    let bytes = cache.get(id);
    if (bytes) return bytes;
    bytes = this.dictionaryStmt.get(id)?.bytes;
    if (!bytes) return null;
    if (cache.size >= 1_000) cache.clear();
    cache.set(id, bytes);
    return bytes;
  }

  /**
   * The dictionary a writer compresses the records of definition `hash` against: the newest stored, else
   * `text` (a record of that definition) made one and stored, inside the caller's transaction; one made of a
   * single record is made again from the first DICTIONARY_RECORDS (run-records.ts). Remembered per connection
   * like definitions (forgotten with them). A record too large to be a dictionary, while none exists, is
   * compressed on its own.
   */
  writerDictionary(hash: string, text: Uint8Array): Dictionary | undefined {
    const known = knownDictionaries(this.db);
    let grown = known.get(hash);
    if (!grown) {
      const stored = this.definitionDictionaryStmt.get(hash);
      grown = stored ? storedDictionary({ id: stored.id, bytes: stored.bytes }) : firstDictionary(text);
      if (!grown.dictionary) return undefined;
      if (known.size >= 10_000) known.clear();
      known.set(hash, grown);
      if (!stored) {
        this.storeDictionary(hash, grown.dictionary);
        return grown.dictionary;
      }
    }
    const made = growDictionary(grown, text);
    if (made) this.storeDictionary(hash, made);
    return grown.dictionary;
  }

  private storeDictionary(hash: string, dictionary: Dictionary): void {
    this.insertDictionaryStmt.run(dictionary.id, hash, dictionary.bytes, new Date().toISOString());
  }

  /**
   * A run's steps for its detail, bounded: all of them up to `max`, else the first and the last `max / 2`
   * (a long loop's iterations are elided in the middle) with the number left out.
   */
  stepsBounded(runId: string, max: number): { steps: StepRow[]; omitted: number } {
    const packed = this.packedSteps(runId);
    if (packed) {
      const all = mergeSteps(packed, this.getStepsStmt.all(runId));
      if (all.length <= max) return { steps: all, omitted: 0 };
      const half = Math.floor(max / 2);
      return { steps: [...all.slice(0, half), ...all.slice(all.length - (max - half))], omitted: all.length - max };
    }
    const total = this.stepCountStmt.get(runId)?.n ?? 0;
    if (total <= max) return { steps: this.getStepsStmt.all(runId), omitted: 0 };
    const half = Math.floor(max / 2);
    const head = this.firstStepsStmt.all(runId, half);
    const tail = (this.lastStepsStmt.all(runId, max - half) as Array<StepRow & { r?: number }>).map(({ r: _r, ...row }) => row as StepRow);
    return { steps: [...head, ...tail], omitted: total - head.length - tail.length };
  }

  /**
   * Stores a run's definition unless this connection already stored it. Every run insert carries one, and
   * binding the definition's text each time costs more than the run row; the memory of what is stored is
   * per connection and forgotten whenever orphaned definitions are deleted (deleteOrphanDefinitions), so
   * only a store whose every failed transaction is forgotten (`remembersWrites`: the run writer) may remember.
   */
  putDefinition(hash: string, definition: string): void {
    if (!this.remembersWrites) {
      this.insertDefinitionStmt.run(hash, definition, new Date().toISOString());
      return;
    }
    const known = knownDefinitions(this.db);
    if (known.has(hash)) return;
    this.insertDefinitionStmt.run(hash, definition, new Date().toISOString());
    if (known.size >= 10_000) known.clear();
    known.add(hash);
  }

  definition(hash: string): string | null {
    return this.getDefinitionStmt.get(hash)?.definition ?? null;
  }

  unfinished(): RunRow[] {
    return this.unfinishedStmt.all().map((row) => this.layout.decode(row));
  }

  /** `{status, startedAt}` of a workflow's newest run, or null (the workflow record's `lastRun`). */
  lastRun(workflowId: string): { status: string; startedAt: string } | null {
    const workflow = this.layout.find(workflowId);
    const row = workflow === undefined ? null : this.lastRunStmt.get(workflow);
    if (!row) return null;
    this.layout.decode(row);
    return { status: row.status, startedAt: row.started_at };
  }

  /** `lastRun` of several workflows at once (workflow list pages). */
  lastRuns(workflowIds: string[]): Map<string, { status: string; startedAt: string }> {
    const out = new Map<string, { status: string; startedAt: string }>();
    for (const id of workflowIds) {
      const last = this.lastRun(id);
      if (last) out.set(id, last);
    }
    return out;
  }

  /**
   * One page of a workspace's runs and the exact number that match (docs/api.md "4. Run", GET /api/runs). The total is a sum over the
   * counted cells (run_counts, migration 008), whatever the history's size. The page is found by walking an
   * index in the list's own order, so it is the page a plain `ORDER BY … LIMIT … OFFSET` gives, run for run;
   * what a walk costs is what it skips, and each kind of page skips as little as the schema allows:
   * - Time-sorted, no tag: runs are added up per hour (run_hours) from the nearer end of the history, and the
   *   page is read from the list index within those hours only (hourSpan): any page costs about the same.
   * - sort=duration, no tag: the duration index is walked from the list's nearer end (the last page read
   *   backwards, `nearerEnd`), keys only, and the page's rows read by key (pageOf). On SQLite the filter's
   *   columns are written so that no index may serve them (`+column`): the planner otherwise sorts each run of
   *   equal durations by seq again (a temporary b-tree per duration: 3× the walk at 1,000,000 runs).
   * - The tag filter, time-sorted: the tag's runs are added up per hour (run_tag_hours, migration 027) from the
   *   nearer end, and run_tags is walked within those hours only; a run's filter columns are read from the list
   *   index at its start (taggedPage), the row only when its start is shared.
   * - The tag filter with sort=duration: the tag's runs are added up per duration bucket (run_tag_durations,
   *   migration 027) from the nearer end, and the duration index is walked from the bucket holding the page, each
   *   run looked up in run_tags; a page inside one large bucket costs what that bucket holds before it.
   * bench/history.ts measures every kind; docs/operations.md has the figures.
   */
  list(filter: RunListFilter): { rows: RunRow[]; total: number } {
    const { tie } = this.layout;
    const cells = cellConditions(filter, this.layout);
    if (!cells) return { rows: [], total: 0 };
    const total = countOf(
      this.listStatement(`SELECT ${SUM_OF_N} FROM run_counts WHERE ${cells.where.join(" AND ")} AND tag = $tag`).get(
        bindRow({ ...cells.params, tag: filter.tag ?? "" }),
      ) as { n: number } | null,
    );
    const end = Math.min(filter.offset + filter.limit, total);
    if (filter.offset >= end) return { rows: [], total };
    if (filter.tag !== undefined) return { rows: this.taggedPage(filter, filter.tag, cells, total, end), total };
    if (filter.sort === "duration") {
      const order = this.layout.durationOrder;
      const page = nearerEnd(filter.offset, end, total);
      const { sql, params } = durationPage({
        prepare: (text) => this.listStatement(text),
        columns: LIST_COLUMNS,
        order,
        reversed: reversedOrder(order),
        cells,
        page,
      });
      return { rows: this.hydrateAll(this.listStatement(sql).all(params) as StoredRow[]), total };
    }
    const newest = filter.sort !== "oldest";
    const span = this.hourSpan(cells, newest, filter.offset, end, total);
    const direction = newest ? "DESC" : "ASC";
    const rowCells = this.rowCells(filter, cells);
    const sql = pageOf(tie, [...rowCells.where, "started_at >= $from", "started_at < $to"].join(" AND "), this.layout.startOrder(direction));
    const rows = this.listStatement(sql).all(
      bindRow({ ...rowCells.params, from: span.from, to: span.to, limit: filter.limit, offset: filter.offset - span.before }),
    ) as StoredRow[];
    return { rows: this.hydrateAll(rows), total };
  }

  /**
   * The conditions a list index answers alone: with a workflow, the workflow index's (it does not hold the
   * workspace; a workflow's runs all belong to its workspace, and the count in `list` proved this one is the caller's).
   */
  private rowCells(filter: RunListFilter, cells: Cells): Cells {
    return filter.workflowId ? cellConditions(filter, this.layout, false)! : cells;
  }

  /**
   * The filter's conditions for a walk of the duration index (`alias` qualifies them). Those the index does not
   * lead with are written `+column` so that SQLite's planner may not serve them from the index: it then sorts
   * every run of one duration by seq again (a temporary b-tree per duration, 3× the walk at 1,000,000 runs).
   * (PostgreSQL's list is its own: postgres/run-list.ts.)
   */
  private durationWalkConditions(cells: Cells, alias = ""): string {
    const of = alias ? `${alias}.` : "";
    return cells.where.map((c) => (c.startsWith("workspace_id ") ? `${of}${c}` : `+${of}${c}`)).join(" AND ");
  }

  /**
   * Positions [filter.offset, end) of the `total` runs carrying `tag`.
   *
   * In start order the hours holding the page are found in run_tag_hours (hourSpan, from the nearer end), and
   * run_tags is walked alone within them, in the list's order (start, then run id); whether a tagged run
   * matches the filter is read from a list index at its start (`o`, `m`: keys and codes only) when no other run
   * of the workspace started in the same millisecond, else from its row (`r`): run_tags holds each run's
   * workspace and start, which never change (migration 008), so the only run at that start is the tagged run.
   * Reading the row of every skipped run cost 5 µs a run on SQLite and 26 µs on PostgreSQL at 1,000,000 runs.
   *
   * sort=duration needs each run's duration, which only its row and the duration index hold: either the duration
   * index is walked and each run looked up in run_tags (a row read per run walked), from the bucket holding the
   * page's first run as the tag's buckets tell (run_tag_durations, migration 027; from the nearer end for the first
   * and last pages), or every tagged run's row is read and sorted (a row read per tagged run, whatever the page).
   * The walk is taken while it reads fewer than half as many rows, as the kept counts tell: it reads
   * (offset + limit) × listed / total, its offset counted from the bucket's start.
   */
  private taggedPage(filter: RunListFilter, tag: string, cells: Cells, total: number, end: number): RunRow[] {
    const { tie } = this.layout;
    if (filter.sort === "duration") {
      const page = nearerEnd(filter.offset, end, total);
      const order = this.layout.durationOrder;
      const reversed = reversedOrder(order);
      // The runs the filter lists, tagged or not: a walk of the duration index reads listed / total of them per tagged run.
      const listed = countOf(
        this.listStatement(`SELECT ${SUM_OF_N} FROM run_counts WHERE ${cells.where.join(" AND ")} AND tag = ''`).get(bindRow(cells.params)) as {
          n: number;
        } | null,
      );
      const walks = this.taggedDurationWalks(cells, tag, page, listed / total);
      if (2 * taggedWalkRuns(walks) * listed < total * total) {
        const params: Record<string, unknown> = { ...cells.params, tag };
        const keys = walks.map((walk, i) => {
          const range = walkRange(walk, `$value${i}`, "r.");
          if (walk.value !== undefined) params[`value${i}`] = walk.value;
          params[`limit${i}`] = walk.limit;
          params[`offset${i}`] = walk.offset;
          return `SELECT ${tie} FROM (SELECT r.${tie} FROM runs AS r WHERE ${this.durationWalkConditions(cells, "r")}${range ? ` AND ${range}` : ""}
              AND (SELECT count(*) FROM run_tags AS t WHERE t.workspace_id = r.workspace_id AND t.tag = $tag AND t.started_at = r.started_at AND t.run_id = r.id) = 1
            ORDER BY ${qualified("r", walk.backwards ? reversed : order)} LIMIT $limit${i} OFFSET $offset${i})`;
        });
        const sql = `SELECT ${LIST_COLUMNS} FROM runs WHERE ${tie} IN (${keys.join(" UNION ALL ")}) ORDER BY ${order}`;
        return this.hydrateAll(this.listStatement(sql).all(bindRow(params)) as StoredRow[]);
      }
      const sql = `SELECT ${LIST_COLUMNS} FROM runs WHERE ${tie} IN (SELECT r.${tie} FROM run_tags AS t JOIN runs AS r ON r.id = t.run_id
          WHERE t.workspace_id = $workspaceId AND t.tag = $tag AND ${qualified("r", cells.where.join(" AND "), " AND ")}
          ORDER BY ${qualified("r", page.backwards ? reversed : order)} LIMIT $limit OFFSET $offset) ORDER BY ${order}`;
      return this.hydrateAll(this.listStatement(sql).all(bindRow({ ...cells.params, tag, limit: page.limit, offset: page.offset })) as StoredRow[]);
    }
    const newest = filter.sort !== "oldest";
    const direction = newest ? "DESC" : "ASC";
    const span = this.hourSpan(cells, newest, filter.offset, end, total, tag);
    // Only the workspace to match (every environment, no other filter): run_tags holds it.
    let matches = "";
    if (cells.where.length > 1) {
      const on = (alias: string, conditions: Cells) => qualified(alias, conditions.where.join(" AND "), " AND ");
      const atStart = "FROM runs AS o WHERE o.workspace_id = t.workspace_id AND o.started_at = t.started_at";
      const byRow = `(SELECT count(*) FROM runs AS r WHERE r.id = t.run_id AND ${on("r", cells)})`;
      // The workspace's list index holds every filter column but the workflow: one look at the start decides. With a
      // workflow, a second look finds the run in the workflow's list index.
      matches = filter.workflowId
        ? ` AND CASE WHEN (SELECT count(*) ${atStart}) = 1
            THEN (SELECT count(*) FROM runs AS m WHERE ${on("m", this.rowCells(filter, cells))} AND m.started_at = t.started_at) ELSE ${byRow} END = 1`
        : ` AND COALESCE((SELECT CASE WHEN count(*) = 1 THEN max(CASE WHEN ${on("o", cells)} THEN 1 ELSE 0 END) END ${atStart}), ${byRow}) = 1`;
    }
    const sql = `SELECT ${LIST_COLUMNS} FROM runs WHERE id IN (SELECT t.run_id FROM run_tags AS t
      WHERE t.workspace_id = $workspaceId AND t.tag = $tag AND t.started_at >= $from AND t.started_at < $to${matches}
      ORDER BY t.started_at ${direction}, t.run_id ${direction} LIMIT $limit OFFSET $offset) ORDER BY started_at ${direction}, id ${direction}`;
    const params = bindRow({ ...cells.params, tag, from: span.from, to: span.to, limit: filter.limit, offset: filter.offset - span.before });
    return this.hydrateAll(this.listStatement(sql).all(params) as StoredRow[]);
  }

  /**
   * The walks of the duration index that read `page` (counted from the nearer end) of the runs carrying `tag`: from
   * the bucket holding its first run, the tag's buckets (run_tag_durations) summed from that end; one walk from the
   * nearer end when it passes few listed runs (`spread`: listed runs per tagged one; ../run-duration-pages.ts).
   */
  private taggedDurationWalks(cells: Cells, tag: string, page: { limit: number; offset: number; backwards: boolean }, spread: number): DurationWalk[] {
    const a = page.offset;
    const b = page.offset + page.limit - 1;
    let walks: DurationWalk[] | undefined;
    if (b * spread >= durationPageTuning.plainWalkRuns) {
      const sql = bucketsThrough([...cells.where, "tag = $tag"].join(" AND "), "$a", "$b", !page.backwards, "run_tag_durations");
      walks = durationWalks(this.listStatement(sql).all(bindRow({ ...cells.params, tag, a, b })) as BucketRow[], a, b, page.backwards);
    }
    return walks ?? [{ range: "all", ...page }];
  }

  /**
   * The hours (of `started_at`) holding positions [offset, end) of the list in its order, as bounds on
   * `started_at`, and how many listed runs come before the first of them. Counted from whichever end of the
   * history is nearer, so the last page costs what the first does: the nearest FIRST_HOURS hours first (an
   * index range, enough for the first pages), else every hour's running total in one statement (one round
   * trip to PostgreSQL, not one per chunk of hours). With `tag`, the hours of the runs carrying it (run_tag_hours).
   */
  private hourSpan(cells: Cells, newest: boolean, offset: number, end: number, total: number, tag?: string): { from: Stored; to: Stored; before: number } {
    const { forward, newestFirst, a, b } = hourWalk(newest, offset, end, total);
    const counts = hourCounts(cells, tag);
    const found = this.spanInFirstHours(counts, newestFirst, a, b) ?? spanThroughHours(this.hoursThrough(counts, newestFirst, a, b), b);
    return spanBounds(this.layout, found, { forward, newest, total });
  }

  /** The hours of positions a..b (counted from the walk's end) when all of them lie in the nearest FIRST_HOURS hours. */
  private spanInFirstHours(counts: HourCounts, newestFirst: boolean, a: number, b: number): HourSpanEnds | undefined {
    const sql = `SELECT hour, ${SUM_OF_N} FROM ${counts.table} WHERE ${counts.where.join(" AND ")} GROUP BY hour HAVING SUM(n) > 0
      ORDER BY hour ${newestFirst ? "DESC" : "ASC"} LIMIT $limit`;
    const hours = this.listStatement(sql).all(bindRow({ ...counts.params, limit: FIRST_HOURS })) as Array<{ hour: Stored; n: number }>;
    return spanInHours(hours, a, b);
  }

  /**
   * The hours that hold positions a..b (counted from the walk's end), each with its runs and the running total
   * through it, in walking order: one statement sums every hour's cells and keeps the few hours that overlap.
   */
  private hoursThrough(counts: HourCounts, newestFirst: boolean, a: number, b: number): Array<{ hour: Stored; n: number; through: number }> {
    const direction = newestFirst ? "DESC" : "ASC";
    const sql = `SELECT hour, n, through FROM (
        SELECT hour, ${SUM_OF_N}, CAST(SUM(SUM(n)) OVER (ORDER BY hour ${direction}) AS BIGINT) AS through
        FROM ${counts.table} WHERE ${counts.where.join(" AND ")} GROUP BY hour HAVING SUM(n) > 0
      ) AS hours WHERE through > $a AND through - n <= $b ORDER BY hour ${direction}`;
    return this.listStatement(sql).all(bindRow({ ...counts.params, a, b })) as Array<{ hour: Stored; n: number; through: number }>;
  }

  private listStatement(sql: string): Statement {
    let stmt = this.listStatements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.listStatements.set(sql, stmt);
    }
    return stmt;
  }

  // ------------------------------------------------------------ retention

  /** How many runs each workflow has (every environment, status and trigger type), from the kept counts. */
  private countsByWorkflowStmt?: Statement<{ workspace_id: string; workflow_id: string; n: number }>;
  runCountsByWorkflow(): Array<{ workspaceId: string; workflowId: string; runs: number }> {
    this.countsByWorkflowStmt ??= this.db.prepare(
      `SELECT workspace_id, workflow_id, ${SUM_OF_N} FROM run_counts WHERE tag = '' GROUP BY workspace_id, workflow_id`,
    );
    return this.countsByWorkflowStmt
      .all()
      .map((r) => this.layout.decode(r))
      .map((r) => ({ workspaceId: r.workspace_id, workflowId: r.workflow_id, runs: Number(r.n) }))
      .filter((r) => r.runs > 0);
  }

  /**
   * A workflow's oldest finished runs, started before `beforeIso` when given, oldest first, after `after` when
   * given. Reads the workflow's list index only (the status is one of its columns).
   */
  oldestFinishedOf(workflowId: string, limit: number, beforeIso?: string, after?: RunPosition): RunPosition[] {
    const { tie, unfinished } = this.layout;
    const workflow = this.layout.find(workflowId);
    if (workflow === undefined) return [];
    const before = beforeIso === undefined ? "" : " AND started_at < ?";
    const sql = `SELECT id, started_at, ${tie} AS tie FROM runs WHERE workflow_id = ?${before}${after ? afterPosition(tie) : ""} AND status NOT IN (${unfinished}) ORDER BY started_at, ${tie} LIMIT ?`;
    const params: Stored[] = [workflow];
    if (beforeIso !== undefined) params.push(this.layout.time(beforeIso));
    if (after) params.push(...this.afterValues(after));
    params.push(limit);
    return this.positions((this.listStatement(sql) as Statement<PositionRow>).all(...params));
  }

  /** A workspace's oldest finished runs, leaving out the runs of `exceptWorkflows`, oldest first, after `after` when given. */
  oldestFinishedIn(workspaceId: string, exceptWorkflows: string[], limit: number, after?: RunPosition): RunPosition[] {
    const { tie, unfinished } = this.layout;
    const workspace = this.layout.find(workspaceId);
    if (workspace === undefined) return [];
    // A workflow without a stored name has no runs to leave out.
    const exempt = exceptWorkflows.map((id) => this.layout.find(id)).filter((key) => key !== undefined);
    const except = exempt.length > 0 ? ` AND workflow_id NOT IN (${exempt.map(() => "?").join(",")})` : "";
    const sql = `SELECT id, started_at, ${tie} AS tie FROM runs WHERE workspace_id = ?${after ? afterPosition(tie) : ""} AND status NOT IN (${unfinished})${except} ORDER BY started_at, ${tie} LIMIT ?`;
    const params: Stored[] = [workspace];
    if (after) params.push(...this.afterValues(after));
    params.push(...exempt, limit);
    return this.positions((this.listStatement(sql) as Statement<PositionRow>).all(...params));
  }

  /** The values afterPosition binds for `after`. */
  private afterValues(after: RunPosition): Stored[] {
    const started = this.layout.time(after.startedAt);
    return [started, started, this.layout.tieValue(after.tie)];
  }

  private positions(rows: PositionRow[]): RunPosition[] {
    return rows.map((row) => this.position(row));
  }

  /** A selected position with its values as the API has them. */
  private position(row: PositionRow): RunPosition {
    const tie = this.layout.tieText(row.tie);
    this.layout.decode(row);
    return { id: row.id, startedAt: row.started_at as string, tie };
  }

  /**
   * Where each unfinished run stands (retention keeps its place in the history after them). Read through
   * runs_unfinished, which holds only unfinished runs: the cost follows them, not the history.
   */
  unfinishedPositions(): Array<RunPosition & { workflowId: string; workspaceId: string }> {
    const { tie, unfinished } = this.layout;
    return this.db
      .query<PositionRow & { workflow_id: string; workspace_id: string }, []>(
        `SELECT id, started_at, ${tie} AS tie, workflow_id, workspace_id FROM runs WHERE status IN (${unfinished})`,
      )
      .all()
      .map((r) => ({ ...this.position(r), workflowId: r.workflow_id, workspaceId: r.workspace_id }));
  }

  /** RunReadRepository.hourCounts: run_hours' sums (codes decoded) and run_unsaved's (text), merged. */
  hourCounts(filter: RunCountFilter, fromHour: number): HourCount[] {
    const cells = cellConditions(filter, this.layout);
    const stored = cells
      ? (
          this.db
            .query(`SELECT hour, status, ${SUM_OF_N} FROM run_hours WHERE ${[...cells.where, "hour >= $fromHour"].join(" AND ")} GROUP BY hour, status`)
            .all(bindRow({ ...cells.params, fromHour })) as Array<{ hour: number; status: number; n: number }>
        ).map((row) => ({ ...row, status: statusName(row.status) }))
      : [];
    const { where, params } = unsavedConditions(filter, "?");
    const unsaved = this.db
      .query(`SELECT hour, status, ${SUM_OF_N} FROM run_unsaved WHERE ${where.join(" AND ")} AND hour >= ? GROUP BY hour, status`)
      .all(...(params as string[]), fromHour) as Array<{ hour: number; status: string; n: number }>;
    return mergeHourCounts(stored, unsaved);
  }

  /** Counts a run whose row is not kept (settings.saveRuns "none"; migration 026). */
  countUnsaved(cell: UnsavedCell): void {
    this.countUnsavedStmt.run(...cell);
  }

  /** Deletes a run's step rows (a successful run of a workflow that keeps failed runs only): its row stays. */
  dropSteps(runId: string): void {
    this.deleteStepRowsStmt.run(runId);
  }

  /** Deletes runs and their steps in one transaction. */
  deleteRuns(ids: string[]): void {
    if (ids.length === 0) return;
    this.db.transaction(() => this.deleteRunRows(ids)).immediate();
  }

  /** Deletes runs and their steps inside the caller's transaction (the run writer's batch). */
  deleteRunRows(ids: string[]): void {
    if (ids.length === 0) return;
    // Prepared and finalised here, not cached: batch sizes vary.
    const marks = ids.map(() => "?").join(",");
    for (const sql of [`DELETE FROM run_steps WHERE run_id IN (${marks})`, `DELETE FROM runs WHERE id IN (${marks})`]) {
      const stmt = this.db.prepare(sql);
      try {
        stmt.run(...ids);
      } finally {
        stmt.finalize();
      }
    }
  }

  /**
   * Drops definitions no run uses any more (called by the retention sweep): their run counts, kept by
   * triggers (migrations 009 and 015), are 0, so only the definitions tables are read.
   */
  deleteOrphanDefinitions(): number {
    forgetWrites(this.db);
    const deleted = this.db.query(DELETE_ORPHAN_DEFINITIONS).run().changes;
    this.db.query(deleteOrphanDictionaries(new Date(Date.now() - DICTIONARY_GRACE_MS).toISOString())).run();
    return deleted;
  }
}

/** What a connection remembers, one value per connection, made on first use. */
function perConnection<T>(make: () => T): (db: Db) => T {
  const byDb = new WeakMap<Db, T>();
  return (db) => {
    let value = byDb.get(db);
    if (value === undefined) {
      value = make();
      byDb.set(db, value);
    }
    return value;
  };
}

/** The dictionary a connection's writer uses per definition hash (RunStore.writerDictionary). */
const knownDictionaries = perConnection(() => new Map<string, GrowingDictionary>());

/** Dictionary bytes by id, for reading records. */
const dictionaryCache = perConnection(() => new Map<string, Uint8Array>());

/**
 * Forgets what a connection remembers having written (definitions, dictionaries, names' keys): after a failed transaction,
 * which may have rolled them back, and when orphans are deleted.
 */
export function forgetWrites(db: Db): void {
  knownDefinitions(db).clear();
  knownDictionaries(db).clear();
  runLayout(db).forgetWrites();
}

/**
 * Definition hashes inserted through a connection (its transactions are serial, so a hash seen here is in the
 * table unless this connection deleted it). A rolled-back batch may leave a hash here that is not stored:
 * applyBatch forgets them all when a transaction fails.
 */
export const knownDefinitions: (db: Db) => Set<string> = perConnection(() => new Set<string>());
