/**
 * Durable trigger state: the next fire time of each live schedule, the baseline and failure record
 * of each live poll, and the provider-side state of self-registered webhooks. Times are epoch ms.
 * Rows exist only for live workflows (publish writes them, unpublish deletes them) and go with the
 * workflow when it is deleted (foreign keys cascade).
 * The rows and what the storage port (./port.ts) answers about them.
 */

/** Which workflows have trigger rows (TriggerRepository.triggerRowIds). */
export interface TriggerRowIds {
  schedules: Set<string>;
  polls: Set<string>;
}

export interface ScheduleRow {
  workflow_id: string;
  workspace_id: string;
  version_id: string;
  /** Canonical description of what fires: `cron:<pattern>@<timezone>` or `every:<seconds>`. */
  spec: string;
  next_fire_at: number;
  last_fired_at: number | null;
  last_run_id: string | null;
  updated_at: number;
}

export interface PollRow {
  workflow_id: string;
  workspace_id: string;
  version_id: string;
  piece_id: string;
  trigger_id: string;
  interval_seconds: number;
  next_poll_at: number;
  /** JSON; null until the first successful poll took the baseline. */
  baseline: string | null;
  last_poll_at: number | null;
  last_success_at: number | null;
  failures: number;
  last_error: string | null;
  updated_at: number;
}

export interface RegistrationRow {
  workflow_id: string;
  workspace_id: string;
  piece_id: string;
  trigger_id: string;
  version_id: string;
  /** JSON of the registered trigger node (piece, config, connection): what onDisable is called with. */
  trigger: string;
  config_hash: string;
  state: string | null;
  enabled: number;
  last_error: string | null;
  updated_at: number;
}

/** The columns of a workflow the public webhook URL needs (read narrowly: this is the hot path). */
export interface WebhookTargetRow {
  id: string;
  workspace_id: string;
  status: string;
  latest_version_id: string | null;
  webhook_token: string | null;
}

/** A live workflow as the triggers read it. */
export interface LiveWorkflowRow {
  id: string;
  workspace_id: string;
  latest_version_id: string;
  webhook_token: string | null;
}

/** The columns of a registration `patchRegistration` may change. */
export type RegistrationPatch = Partial<Omit<RegistrationRow, "workflow_id">>;

/** The columns a registration patch may name, in the order a statement lists them. */
export const REGISTRATION_COLUMNS = [
  "workspace_id",
  "piece_id",
  "trigger_id",
  "version_id",
  "trigger",
  "config_hash",
  "state",
  "enabled",
  "last_error",
  "updated_at",
] as const satisfies ReadonlyArray<keyof RegistrationPatch>;

/**
 * A table of rows due at a time each holds, one row per live workflow: the schedules (due at `next_fire_at`) and the
 * polls (due at `next_poll_at`), each exposed on the repository as one of these.
 */
export interface DueRows<Row> {
  get(workflowId: string): Promise<Row | null>;
  /** Inserts the row or replaces every column of the stored one. */
  put(row: Row): Promise<void>;
  /** False when there was no row. */
  delete(workflowId: string): Promise<boolean>;
  /** The rows due at `now`, soonest first. */
  due(now: number, limit: number): Promise<Row[]>;
  /** When the soonest row is due; null when there is none. */
  nextAt(): Promise<number | null>;
}

/** The trigger tables as the storage port (./port.ts) answers them; every method answers a promise. */
export interface TriggerRepository {
  readonly schedules: DueRows<ScheduleRow>;
  /** Moves a schedule past the instant it held (compare-and-set on that instant); false when another writer moved it first. */
  advanceSchedule(workflowId: string, heldInstant: number, nextFireAt: number, firedAt: number, runId: string | null): Promise<boolean>;
  setScheduleRun(workflowId: string, runId: string): Promise<void>;

  readonly polls: DueRows<PollRow>;

  /** The workflow holding a webhook token, found by the token's SHA-256 (the caller confirms the token in constant time). Reads `workflows`. */
  webhookTarget(tokenHash: string): Promise<WebhookTargetRow | null>;
  /** The workflow when it is live (active with a published version). Reads `workflows`. */
  liveWorkflow(workflowId: string): Promise<LiveWorkflowRow | null>;

  registration(workflowId: string): Promise<RegistrationRow | null>;
  putRegistration(row: RegistrationRow): Promise<void>;
  /**
   * Changes some columns of a registration in one statement, keeping the others as stored (its provider state,
   * which the trigger's own store writes, maybe on another instance); nothing when the row is gone.
   */
  patchRegistration(workflowId: string, patch: RegistrationPatch): Promise<void>;
  /** The workflows that have a schedule row and those that have a poll row. */
  triggerRowIds(): Promise<TriggerRowIds>;
  /**
   * Deletes the schedule and poll rows of workflows not in `live` (left behind when an unpublish did not
   * finish), among `rows` (triggerRowIds); answers how many.
   */
  deleteTriggerRowsExcept(live: Set<string>, rows?: TriggerRowIds): Promise<number>;
  registrationWorkflowIds(): Promise<string[]>;
  setRegistrationState(workflowId: string, state: string | null, at: number): Promise<void>;
  deleteRegistration(workflowId: string): Promise<boolean>;
}

/** The columns of `patch` a statement sets, with their values: only known column names, never one from the caller. */
export function patchedColumns(patch: RegistrationPatch): { columns: string[]; values: unknown[] } {
  const columns: string[] = [];
  const values: unknown[] = [];
  for (const column of REGISTRATION_COLUMNS) {
    if (column in patch && patch[column] !== undefined) {
      columns.push(column);
      values.push(patch[column]);
    }
  }
  return { columns, values };
}
