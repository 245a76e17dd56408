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
  /** Every unfinished run (pending, running, paused), by id, without its record. */
  unfinished(): Promise<RunRow[]>;
}
