/**
 * The reads of runs through the storage port (./port.ts): a list page with its exact total, a run's row and
 * steps, definitions, the last run of workflows, and the unfinished runs. Implemented by ./sqlite/run-reads.ts
 * (RunStore's own reads, through the connection's turns) and ./postgres/run-reads.ts (the same algorithms
 * written for PostgreSQL, every query awaited). Answers are RunStore's for the methods of the same names.
 */
import type { RunListFilter, RunRow, StepRow } from "./run-rows";

/** A workflow's newest run as the workflow record shows it (`lastRun`). */
export interface LastRun {
  status: string;
  startedAt: string;
}

/** The filter of the run counts (GET /api/runs/counts): the list's, without tag, sort and page. */
export type RunCountFilter = Pick<RunListFilter, "workspaceId" | "environments" | "status" | "triggerType" | "workflowId">;

/** Runs started in one hour (hours since the epoch) with one status: `stored` kept (run_hours), `unsaved` counted without their row (run_unsaved). */
export interface HourCount {
  hour: number;
  status: string;
  stored: number;
  unsaved: number;
}

/** The two tables' sums per hour and status as one list, by hour then status. */
export function mergeHourCounts(
  stored: Array<{ hour: number; status: string; n: number }>,
  unsaved: Array<{ hour: number; status: string; n: number }>,
): HourCount[] {
  const cells = new Map<string, HourCount>();
  const cell = (hour: number, status: string) => {
    const key = `${hour} ${status}`;
    let found = cells.get(key);
    if (!found) {
      found = { hour, status, stored: 0, unsaved: 0 };
      cells.set(key, found);
    }
    return found;
  };
  for (const row of stored) cell(Number(row.hour), row.status).stored += Number(row.n);
  for (const row of unsaved) cell(Number(row.hour), row.status).unsaved += Number(row.n);
  return [...cells.values()]
    .filter((c) => c.stored + c.unsaved !== 0)
    .sort((a, b) => a.hour - b.hour || (a.status < b.status ? -1 : a.status > b.status ? 1 : 0));
}

/**
 * The filter as conditions on run_unsaved's text columns (the same SQL on both databases): `mark` makes the n-th
 * placeholder ("?" on SQLite, "$" for $1… on PostgreSQL).
 */
export function unsavedConditions(filter: RunCountFilter, mark: "?" | "$", first = 1): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const bind = (column: string, value: unknown) => {
    params.push(value);
    where.push(`${column} = ${mark === "?" ? "?" : `$${first + params.length - 1}`}`);
  };
  bind("workspace_id", filter.workspaceId);
  if (filter.environments.length === 1) bind("environment", filter.environments[0]);
  if (filter.status) bind("status", filter.status);
  if (filter.triggerType) bind("trigger_type", filter.triggerType);
  if (filter.workflowId) bind("workflow_id", filter.workflowId);
  return { where, params };
}

export interface RunReadRepository {
  /** One page of a workspace's runs and the exact number that match (the run list, GET /api/runs; RunStore.list). */
  list(filter: RunListFilter): Promise<{ rows: RunRow[]; total: number }>;
  /** A run's steps for its detail: all up to `max`, else the first and last `max / 2` and how many were left out. */
  stepsBounded(runId: string, max: number): Promise<{ steps: StepRow[]; omitted: number }>;
  /** A run's full row, its cold columns read from its record; null when no such run is stored. */
  getRow(id: string): Promise<RunRow | null>;
  /** A run's steps, whichever way they were stored (rows, packed, or both), in order. */
  steps(runId: string): Promise<StepRow[]>;
  /** The definition stored under `hash`, or null. */
  definition(hash: string): Promise<string | null>;
  /** Whether run `id` is stored. */
  has(id: string): Promise<boolean>;
  /** The newest run of each workflow that has one (workflow records and lists). */
  lastRuns(workflowIds: string[]): Promise<Map<string, LastRun>>;
  /** The trigger output of a workflow's newest `limit` runs of one trigger type, newest first. */
  recentTriggerData(workflowId: string, triggerType: string, limit: number): Promise<unknown[]>;
  /**
   * Runs per hour of start and status from hour `fromHour` on (hours since the epoch), those kept and those
   * counted without their row (settings.saveRuns "none"): the run chart and the totals of GET /api/runs/counts.
   */
  hourCounts(filter: RunCountFilter, fromHour: number): Promise<HourCount[]>;
  /** Every unfinished run (pending, running, paused), by id, without its record. */
  unfinished(): Promise<RunRow[]>;
}
