/**
 * Run rows as both databases store them: the row types (RunRow here; StepRow in ./run-records.ts), their
 * columns in insert order and each column's place, the rows' values as bound (runValues, stepValues), the
 * conversions to the API's runs and steps, the engine's patches, and the pieces of the run list's and
 * retention's SQL that SQLite (sqlite/run-store.ts, RunStore) and PostgreSQL (postgres/run-*.ts) write alike.
 * The statements themselves are each database's own.
 */
import type { RunLayout, Stored } from "./run-layout";
import { type RowValues, STEP_COLUMNS, type StepRow } from "./run-records";
import type { Environment, RunStatus, RunT, StepT } from "../schema/run";

export { MAX_PACKED_STEPS, type RowValues, STEP_COLUMNS, type StepRow } from "./run-records";

export interface RunRow {
  id: string;
  workspace_id: string;
  org_id: string;
  workflow_id: string;
  workflow_name: string;
  workflow_trigger_type: string | null;
  status: RunStatus;
  trigger_type: string;
  trigger_data: string;
  environment: Environment;
  version_id: string | null;
  version_number: number | null;
  executed_version_id: string | null;
  executed_version_number: number | null;
  definition_hash: string;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  error_message: string | null;
  tags: string;
  started_from_step: string | null;
  retry_of_run_id: string | null;
  retried_by_run_id: string | null;
  step_total: number;
  step_failed: number;
  wait_step: string | null;
  resume_mode: string | null;
  resume_at: string | null;
  resume_token_hash: string | null;
  parent_run_id: string | null;
  depth: number;
  state: string | null;
  response: string | null;
  event_seq: number;
  /** The instance holding the run while it is unfinished (a cluster on PostgreSQL); null on SQLite and when unclaimed. */
  owner: string | null;
}

/** The columns of runs, in the order of the insert statement's values (RowValues). */
export const RUN_COLUMNS = [
  "id",
  "workspace_id",
  "org_id",
  "workflow_id",
  "workflow_name",
  "workflow_trigger_type",
  "status",
  "trigger_type",
  "trigger_data",
  "environment",
  "version_id",
  "version_number",
  "executed_version_id",
  "executed_version_number",
  "definition_hash",
  "started_at",
  "finished_at",
  "duration_ms",
  "error_message",
  "tags",
  "started_from_step",
  "retry_of_run_id",
  "retried_by_run_id",
  "step_total",
  "step_failed",
  "wait_step",
  "resume_mode",
  "resume_at",
  "resume_token_hash",
  "parent_run_id",
  "depth",
  "state",
  "response",
  "event_seq",
  "owner",
] as const;

/**
 * Deletes the definitions no run uses: `runs` (kept by triggers, migration 009) plus the changes not yet folded
 * into it (run_definition_uses, migration 015; always empty on SQLite) is 0.
 */
export const DELETE_ORPHAN_DEFINITIONS = `DELETE FROM run_definitions
  WHERE runs + COALESCE((SELECT SUM(n) FROM run_definition_uses WHERE run_definition_uses.hash = run_definitions.hash), 0) <= 0`;

/**
 * Deletes the dictionaries (run-records.ts) of definitions that are gone, unless a writer announced them
 * since `before` (ISO): a writer that confirmed a dictionary stored uses it for an hour without announcing
 * it again, so a day's margin means no record being written can need one deleted here.
 */
export const deleteOrphanDictionaries = (before: string) => {
  if (!/^[0-9T:.Z-]+$/.test(before)) throw new Error(`not an ISO time: ${before}`);
  return `DELETE FROM run_dictionaries WHERE seen_at < '${before}'
  AND NOT EXISTS (SELECT 1 FROM run_definitions WHERE run_definitions.hash = run_dictionaries.definition_hash)`;
};

/** Dictionaries announced within this long ago are not deleted even when their definition is gone. */
export const DICTIONARY_GRACE_MS = 24 * 3_600_000;

/** The columns of run_steps that completing a step (updateStep) writes; run_id and id find the row. */
export const STEP_UPDATE_COLUMNS = STEP_COLUMNS.filter(
  (c) => !["id", "run_id", "node_id", "node_type", "piece_id", "action_id", "display_name", "started_at"].includes(c),
);

/** Every column of a run row (RunRow), without its record (the unfinished runs these read have none). */
export const ROW_COLUMNS = RUN_COLUMNS.join(", ");

/** Every column of a run row and its record, which holds the cold columns of a finished run (RunStore.hydrate). */
export const STORED_COLUMNS = `${ROW_COLUMNS}, packed_steps`;

/** Columns of the list view: everything but the large, internal ones, and the record. */
export const LIST_COLUMNS = `${RUN_COLUMNS.filter((c) => c !== "state" && c !== "response" && c !== "resume_token_hash" && c !== "owner").join(", ")}, packed_steps`;

/** Each column's place in RUN_COLUMNS (and in a row's RowValues). */
export const RUN_INDEX: ReadonlyMap<string, number> = new Map(RUN_COLUMNS.map((c, i) => [c, i]));

/** An ORDER BY list read backwards: each term's direction and place of NULLs turned round. */
export function reversedOrder(order: string): string {
  return order
    .split(", ")
    .map((term) => {
      const [column, direction = "ASC", ...nulls] = term.split(" ");
      const backwards = direction === "DESC" ? "ASC" : "DESC";
      if (nulls.length === 0) return `${column} ${backwards}`;
      return `${column} ${backwards} NULLS ${nulls[1] === "LAST" ? "FIRST" : "LAST"}`;
    })
    .join(", ");
}

/**
 * Where a list page lies counted from the end of the list nearer to it: positions [offset, end) of a list of
 * `total` runs, or positions [total - end, total - offset) of the same list read backwards. A walk through an
 * index costs what it skips, so the last page costs what the first does and the middle one is the dearest.
 */
export function nearerEnd(offset: number, end: number, total: number): { limit: number; offset: number; backwards: boolean } {
  const backwards = offset > total - end;
  return { limit: end - offset, offset: backwards ? total - end : offset, backwards };
}

/** A run's place in start order (oldest first: started_at, then the layout's tie: run-layout.ts). */
export interface RunPosition {
  id: string;
  startedAt: string;
  /** Orders runs of the same start as the store does, as text ("" comes before every run). */
  tie: string;
}

/** A comma-separated list of columns (or sort terms, or conditions joined by AND) of runs, qualified by `alias` for a join. */
export const qualified = (alias: string, terms: string, separator = ", ") =>
  terms
    .split(separator)
    .map((term) => `${alias}.${term}`)
    .join(separator);

const parse = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

function valuesOf<Row>(row: Row, columns: readonly (keyof Row)[]): RowValues {
  const values: RowValues = new Array(columns.length);
  for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]] as RowValues[number];
  return values;
}

export const runValues = (row: RunRow): RowValues => valuesOf(row, RUN_COLUMNS);
export const stepValues = (row: StepRow): RowValues => valuesOf(row, STEP_COLUMNS);

export function runFromRow(row: RunRow): RunT {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workspaceId: row.workspace_id,
    orgId: row.org_id,
    status: row.status,
    triggerType: row.trigger_type,
    triggerData: parse(row.trigger_data),
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    errorMessage: row.error_message,
    tags: JSON.parse(row.tags),
    environment: row.environment,
    versionId: row.version_id,
    executedVersionId: row.executed_version_id,
    versionNumber: row.version_number,
    executedVersionNumber: row.executed_version_number,
    startedFromStep: row.started_from_step,
    retryOfRunId: row.retry_of_run_id,
    retriedByRunId: row.retried_by_run_id,
    parentRunId: row.parent_run_id,
    workflowName: row.workflow_name,
    workflowTriggerType: row.workflow_trigger_type,
    stepTotal: row.step_total,
    stepFailed: row.step_failed,
    waitStep: row.wait_step,
    resumeMode: row.resume_mode,
    resumeAt: row.resume_at,
  };
}

/**
 * One page of the run list as GET /api/runs sends it: `runs` is the page's runs as the API shows them
 * (runFromRow), already JSON, so the thread that serves HTTP sends the text on without parsing or
 * serialising it (a reader thread makes it: ./run-reads.ts); `total` counts every run that matches.
 */
export interface RunPage {
  runs: string;
  total: number;
}

export const pageOfRuns = ({ rows, total }: { rows: RunRow[]; total: number }): RunPage => ({ runs: JSON.stringify(rows.map(runFromRow)), total });

export function stepFromRow(row: StepRow): StepT {
  return {
    id: row.id,
    runId: row.run_id,
    nodeId: row.node_id,
    pieceId: row.piece_id,
    actionId: row.action_id,
    displayName: row.display_name,
    status: row.status,
    inputData: parse(row.input_data) ?? {},
    outputData: parse(row.output_data),
    errorMessage: row.error_message,
    retryCount: row.retry_count,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
  };
}

/** The number of runs in the kept counts a query sums (run_counts, run_hours); BIGINT so both databases answer an integer. */
export const SUM_OF_N = "CAST(COALESCE(SUM(n), 0) AS BIGINT) AS n";
/** Hours a list page's walk reads first, from the nearer end of the history: the first pages lie in them. */
export const FIRST_HOURS = 16;

/** Where a list page starts and ends in the hour counts, as the walk from one end of the history finds them. */
export interface HourSpanEnds {
  hourA: Stored;
  beforeA: number;
  hourB: Stored;
  throughB: number;
}

/**
 * How a list page's hours are walked: from the end of the history nearer to positions [offset, end) of a list
 * of `total` runs (`forward`: from the list's start), `newestFirst` when that end is the newest hour, and the
 * page's first and last positions as counted from there: `a` is reached first, `b` (>= a) later.
 */
export function hourWalk(newest: boolean, offset: number, end: number, total: number): { forward: boolean; newestFirst: boolean; a: number; b: number } {
  const forward = offset < total - end;
  const [a, b] = forward ? [offset, end - 1] : [total - end, total - 1 - offset];
  return { forward, newestFirst: forward === newest, a, b };
}

/**
 * Where positions a..b (counted from the walk's end) lie in `hours`, the nearest hours' counts in walking order;
 * undefined when they reach beyond those hours.
 */
export function spanInHours(hours: Iterable<{ hour: Stored; n: number }>, a: number, b: number): HourSpanEnds | undefined {
  let hourA: Stored | undefined;
  let beforeA = 0;
  let seen = 0;
  for (const { hour, n } of hours) {
    if (hourA === undefined && seen + Number(n) > a) {
      hourA = hour;
      beforeA = seen;
    }
    seen += Number(n);
    if (hourA !== undefined && seen > b) return { hourA, beforeA, hourB: hour, throughB: seen };
  }
  return undefined;
}

/**
 * Where the page lies in the hours that hold positions a..b, each with its runs and the running total through it
 * in walking order; undefined when the hours end before `b` (the counts disagree).
 */
export function spanThroughHours(hours: ReadonlyArray<{ hour: Stored; n: number; through: number }>, b: number): HourSpanEnds | undefined {
  const [first, last] = [hours[0], hours[hours.length - 1]];
  if (!first || !last || Number(last.through) <= b) return undefined;
  return { hourA: first.hour, beforeA: Number(first.through) - Number(first.n), hourB: last.hour, throughB: Number(last.through) };
}

/**
 * The page's hours (`found` by the walk `hourWalk` described) as bounds on `started_at`, and how many listed runs
 * come before the first of them; every run when the counts disagree (nothing found).
 */
export function spanBounds(
  layout: RunLayout,
  found: HourSpanEnds | undefined,
  walk: { forward: boolean; newest: boolean; total: number },
): { from: Stored; to: Stored; before: number } {
  if (!found) return { ...layout.allTime, before: 0 };
  const { hourA, hourB, beforeA, throughB } = found;
  const [startHour, endHour, before] = walk.forward ? [hourA, hourB, beforeA] : [hourB, hourA, walk.total - throughB];
  const [firstHour, lastHour] = walk.newest ? [endHour, startHour] : [startHour, endHour];
  return { from: layout.hourBounds(firstHour).from, to: layout.hourBounds(lastHour).to, before };
}

export interface RunListFilter {
  workspaceId: string;
  environments: Environment[];
  status?: RunStatus;
  triggerType?: string;
  workflowId?: string;
  tag?: string;
  sort: "newest" | "oldest" | "duration";
  limit: number;
  offset: number;
}

/** Fields the engine changes as a run progresses (all optional; absent = unchanged). */
export interface RunPatch {
  status?: RunStatus;
  finished_at?: string | null;
  duration_ms?: number | null;
  error_message?: string | null;
  tags?: string;
  step_total?: number;
  step_failed?: number;
  wait_step?: string | null;
  resume_mode?: string | null;
  resume_at?: string | null;
  resume_token_hash?: string | null;
  state?: string | null;
  response?: string | null;
  event_seq?: number;
  retried_by_run_id?: string | null;
  executed_version_id?: string | null;
  executed_version_number?: number | null;
  owner?: string | null;
}
