/**
 * Durable trigger state: the next fire time of each live schedule, the baseline and failure record
 * of each live poll, and the provider-side state of self-registered webhooks. Times are epoch ms.
 * Rows exist only for live workflows (publish writes them, unpublish deletes them) and go with the
 * workflow when it is deleted (foreign keys cascade).
 */
import { atomically, bindRow, type Db } from "./db";

/** Which workflows have trigger rows (TriggerStore.triggerRowIds). */
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

export class TriggerStore {
  private readonly q;

  constructor(readonly db: Db) {
    this.q = {
      schedule: db.query<ScheduleRow, [string]>("SELECT * FROM trigger_schedules WHERE workflow_id = ?"),
      upsertSchedule:
        db.query(`INSERT INTO trigger_schedules (workflow_id, workspace_id, version_id, spec, next_fire_at, last_fired_at, last_run_id, updated_at)
        VALUES ($workflow_id, $workspace_id, $version_id, $spec, $next_fire_at, $last_fired_at, $last_run_id, $updated_at)
        ON CONFLICT (workflow_id) DO UPDATE SET workspace_id = excluded.workspace_id, version_id = excluded.version_id, spec = excluded.spec,
          next_fire_at = excluded.next_fire_at, last_fired_at = excluded.last_fired_at, last_run_id = excluded.last_run_id, updated_at = excluded.updated_at`),
      deleteSchedule: db.query("DELETE FROM trigger_schedules WHERE workflow_id = ?"),
      dueSchedules: db.query<ScheduleRow, [number, number]>("SELECT * FROM trigger_schedules WHERE next_fire_at <= ? ORDER BY next_fire_at LIMIT ?"),
      nextSchedule: db.query<{ at: number | null }, []>("SELECT MIN(next_fire_at) AS at FROM trigger_schedules"),
      // Compare-and-set on the instant: whoever moves it first owns that scheduled instant.
      advanceSchedule: db.query(
        "UPDATE trigger_schedules SET next_fire_at = ?, last_fired_at = ?, last_run_id = ?, updated_at = ? WHERE workflow_id = ? AND next_fire_at = ?",
      ),
      setScheduleRun: db.query("UPDATE trigger_schedules SET last_run_id = ? WHERE workflow_id = ?"),

      poll: db.query<PollRow, [string]>("SELECT * FROM trigger_polls WHERE workflow_id = ?"),
      upsertPoll: db.query(`INSERT INTO trigger_polls (workflow_id, workspace_id, version_id, piece_id, trigger_id, interval_seconds, next_poll_at, baseline,
          last_poll_at, last_success_at, failures, last_error, updated_at)
        VALUES ($workflow_id, $workspace_id, $version_id, $piece_id, $trigger_id, $interval_seconds, $next_poll_at, $baseline,
          $last_poll_at, $last_success_at, $failures, $last_error, $updated_at)
        ON CONFLICT (workflow_id) DO UPDATE SET workspace_id = excluded.workspace_id, version_id = excluded.version_id, piece_id = excluded.piece_id,
          trigger_id = excluded.trigger_id, interval_seconds = excluded.interval_seconds, next_poll_at = excluded.next_poll_at, baseline = excluded.baseline,
          last_poll_at = excluded.last_poll_at, last_success_at = excluded.last_success_at, failures = excluded.failures,
          last_error = excluded.last_error, updated_at = excluded.updated_at`),
      deletePoll: db.query("DELETE FROM trigger_polls WHERE workflow_id = ?"),
      duePolls: db.query<PollRow, [number, number]>("SELECT * FROM trigger_polls WHERE next_poll_at <= ? ORDER BY next_poll_at LIMIT ?"),
      nextPoll: db.query<{ at: number | null }, []>("SELECT MIN(next_poll_at) AS at FROM trigger_polls"),

      webhookTarget: db.query<WebhookTargetRow, [string]>(
        "SELECT id, workspace_id, status, latest_version_id, webhook_token FROM workflows WHERE webhook_token_hash = ?",
      ),
      liveWorkflow: db.query<{ id: string; workspace_id: string; latest_version_id: string; webhook_token: string | null }, [string]>(
        "SELECT id, workspace_id, latest_version_id, webhook_token FROM workflows WHERE id = ? AND status = 'active' AND latest_version_id IS NOT NULL",
      ),

      registration: db.query<RegistrationRow, [string]>("SELECT * FROM trigger_registrations WHERE workflow_id = ?"),
      upsertRegistration:
        db.query(`INSERT INTO trigger_registrations (workflow_id, workspace_id, piece_id, trigger_id, version_id, trigger, config_hash, state, enabled, last_error, updated_at)
        VALUES ($workflow_id, $workspace_id, $piece_id, $trigger_id, $version_id, $trigger, $config_hash, $state, $enabled, $last_error, $updated_at)
        ON CONFLICT (workflow_id) DO UPDATE SET workspace_id = excluded.workspace_id, piece_id = excluded.piece_id, trigger_id = excluded.trigger_id,
          version_id = excluded.version_id, trigger = excluded.trigger, config_hash = excluded.config_hash, state = excluded.state,
          enabled = excluded.enabled, last_error = excluded.last_error, updated_at = excluded.updated_at`),
      registrationIds: db.query<{ workflow_id: string }, []>("SELECT workflow_id FROM trigger_registrations"),
      scheduleIds: db.query<{ workflow_id: string }, []>("SELECT workflow_id FROM trigger_schedules"),
      pollIds: db.query<{ workflow_id: string }, []>("SELECT workflow_id FROM trigger_polls"),
      setRegistrationState: db.query("UPDATE trigger_registrations SET state = ?, updated_at = ? WHERE workflow_id = ?"),
      deleteRegistration: db.query("DELETE FROM trigger_registrations WHERE workflow_id = ?"),
    };
  }

  schedule(workflowId: string): ScheduleRow | null {
    return this.q.schedule.get(workflowId);
  }
  putSchedule(row: ScheduleRow): void {
    this.q.upsertSchedule.run(bindRow(row));
  }
  deleteSchedule(workflowId: string): boolean {
    return this.q.deleteSchedule.run(workflowId).changes > 0;
  }
  dueSchedules(now: number, limit: number): ScheduleRow[] {
    return this.q.dueSchedules.all(now, limit);
  }
  nextScheduleAt(): number | null {
    return this.q.nextSchedule.get()?.at ?? null;
  }
  /** Moves a schedule past the instant it held; false when another writer moved it first. */
  advanceSchedule(workflowId: string, heldInstant: number, nextFireAt: number, firedAt: number, runId: string | null): boolean {
    return this.q.advanceSchedule.run(nextFireAt, firedAt, runId, firedAt, workflowId, heldInstant).changes > 0;
  }

  setScheduleRun(workflowId: string, runId: string): void {
    this.q.setScheduleRun.run(runId, workflowId);
  }

  poll(workflowId: string): PollRow | null {
    return this.q.poll.get(workflowId);
  }
  putPoll(row: PollRow): void {
    this.q.upsertPoll.run(bindRow(row));
  }
  deletePoll(workflowId: string): boolean {
    return this.q.deletePoll.run(workflowId).changes > 0;
  }
  duePolls(now: number, limit: number): PollRow[] {
    return this.q.duePolls.all(now, limit);
  }
  nextPollAt(): number | null {
    return this.q.nextPoll.get()?.at ?? null;
  }

  /** The workflow holding a webhook token, found by the token's SHA-256 (the caller confirms the token in constant time). */
  webhookTarget(tokenHash: string): WebhookTargetRow | null {
    return this.q.webhookTarget.get(tokenHash);
  }

  liveWorkflow(workflowId: string): { id: string; workspace_id: string; latest_version_id: string; webhook_token: string | null } | null {
    return this.q.liveWorkflow.get(workflowId);
  }

  registration(workflowId: string): RegistrationRow | null {
    return this.q.registration.get(workflowId);
  }
  putRegistration(row: RegistrationRow): void {
    this.q.upsertRegistration.run(bindRow(row));
  }
  /**
   * Changes some columns of a registration, keeping the others as stored (its provider state, which the
   * trigger's own store writes, maybe on another instance); nothing when the row is gone.
   */
  patchRegistration(workflowId: string, patch: Partial<Omit<RegistrationRow, "workflow_id">>): void {
    atomically(this.db, () => {
      const row = this.q.registration.get(workflowId);
      if (row) this.q.upsertRegistration.run(bindRow({ ...row, ...patch }));
    });
  }
  /** The workflows that have a schedule row and those that have a poll row. */
  triggerRowIds(): TriggerRowIds {
    return {
      schedules: new Set(this.q.scheduleIds.all().map((r) => r.workflow_id)),
      polls: new Set(this.q.pollIds.all().map((r) => r.workflow_id)),
    };
  }
  /**
   * Deletes the schedule and poll rows of workflows not in `live` (left behind when an unpublish did not
   * finish), among `rows` (triggerRowIds); answers how many.
   */
  deleteTriggerRowsExcept(live: Set<string>, rows: TriggerRowIds = this.triggerRowIds()): number {
    let deleted = 0;
    for (const workflowId of rows.schedules) if (!live.has(workflowId)) deleted += this.q.deleteSchedule.run(workflowId).changes;
    for (const workflowId of rows.polls) if (!live.has(workflowId)) deleted += this.q.deletePoll.run(workflowId).changes;
    return deleted;
  }
  registrationWorkflowIds(): string[] {
    return this.q.registrationIds.all().map((r) => r.workflow_id);
  }
  setRegistrationState(workflowId: string, state: string | null, at: number): void {
    this.q.setRegistrationState.run(state, at, workflowId);
  }
  deleteRegistration(workflowId: string): boolean {
    return this.q.deleteRegistration.run(workflowId).changes > 0;
  }
}
