/** Schedules, polls, registrations and webhook targets on SQLite (../triggers.ts says what each answers). */
import type { Database, Statement } from "bun:sqlite";
import { bindRow } from "./db";
import * as triggers from "../triggers";
import { Prepared, type SqliteConnection } from "./connection";

/** The statements of one due-rows table (../triggers.ts DueRows). */
interface DueRowStatements<Row> {
  get: Statement<Row, [string]>;
  upsert: Statement;
  delete: Statement<null, [string]>;
  due: Statement<Row, [number, number]>;
  next: Statement<{ at: number | null }, []>;
}

/** A due-rows table on SQLite: the schedules' and the polls' alike, each with its own statements. */
class SqliteDueRows<Row extends object> implements triggers.DueRows<Row> {
  constructor(
    private readonly c: SqliteConnection,
    private readonly q: DueRowStatements<Row>,
  ) {}

  get(workflowId: string) {
    return this.c.do(() => this.q.get.get(workflowId));
  }
  put(row: Row) {
    return this.c.do(() => void this.q.upsert.run(bindRow(row)));
  }
  delete(workflowId: string) {
    return this.c.do(() => this.q.delete.run(workflowId).changes > 0);
  }
  due(now: number, limit: number) {
    return this.c.do(() => this.q.due.all(now, limit));
  }
  nextAt() {
    return this.c.do(() => this.q.next.get()?.at ?? null);
  }
}

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  schedules: {
    get: db.query<triggers.ScheduleRow, [string]>("SELECT * FROM trigger_schedules WHERE workflow_id = ?"),
    upsert: db.query(`INSERT INTO trigger_schedules (workflow_id, workspace_id, version_id, spec, next_fire_at, last_fired_at, last_run_id, updated_at)
      VALUES ($workflow_id, $workspace_id, $version_id, $spec, $next_fire_at, $last_fired_at, $last_run_id, $updated_at)
      ON CONFLICT (workflow_id) DO UPDATE SET workspace_id = excluded.workspace_id, version_id = excluded.version_id, spec = excluded.spec,
        next_fire_at = excluded.next_fire_at, last_fired_at = excluded.last_fired_at, last_run_id = excluded.last_run_id, updated_at = excluded.updated_at`),
    delete: db.query<null, [string]>("DELETE FROM trigger_schedules WHERE workflow_id = ?"),
    due: db.query<triggers.ScheduleRow, [number, number]>("SELECT * FROM trigger_schedules WHERE next_fire_at <= ? ORDER BY next_fire_at LIMIT ?"),
    next: db.query<{ at: number | null }, []>("SELECT MIN(next_fire_at) AS at FROM trigger_schedules"),
  },
  // Compare-and-set on the instant: whoever moves it first owns that scheduled instant.
  advanceSchedule: db.query<null, [number, number, string | null, number, string, number]>(
    "UPDATE trigger_schedules SET next_fire_at = ?, last_fired_at = ?, last_run_id = ?, updated_at = ? WHERE workflow_id = ? AND next_fire_at = ?",
  ),
  setScheduleRun: db.query<null, [string, string]>("UPDATE trigger_schedules SET last_run_id = ? WHERE workflow_id = ?"),

  polls: {
    get: db.query<triggers.PollRow, [string]>("SELECT * FROM trigger_polls WHERE workflow_id = ?"),
    upsert: db.query(`INSERT INTO trigger_polls (workflow_id, workspace_id, version_id, piece_id, trigger_id, interval_seconds, next_poll_at, baseline,
        last_poll_at, last_success_at, failures, last_error, updated_at)
      VALUES ($workflow_id, $workspace_id, $version_id, $piece_id, $trigger_id, $interval_seconds, $next_poll_at, $baseline,
        $last_poll_at, $last_success_at, $failures, $last_error, $updated_at)
      ON CONFLICT (workflow_id) DO UPDATE SET workspace_id = excluded.workspace_id, version_id = excluded.version_id, piece_id = excluded.piece_id,
        trigger_id = excluded.trigger_id, interval_seconds = excluded.interval_seconds, next_poll_at = excluded.next_poll_at, baseline = excluded.baseline,
        last_poll_at = excluded.last_poll_at, last_success_at = excluded.last_success_at, failures = excluded.failures,
        last_error = excluded.last_error, updated_at = excluded.updated_at`),
    delete: db.query<null, [string]>("DELETE FROM trigger_polls WHERE workflow_id = ?"),
    due: db.query<triggers.PollRow, [number, number]>("SELECT * FROM trigger_polls WHERE next_poll_at <= ? ORDER BY next_poll_at LIMIT ?"),
    next: db.query<{ at: number | null }, []>("SELECT MIN(next_poll_at) AS at FROM trigger_polls"),
  },

  webhookTarget: db.query<triggers.WebhookTargetRow, [string]>(
    "SELECT id, workspace_id, status, latest_version_id, webhook_token FROM workflows WHERE webhook_token_hash = ?",
  ),
  liveWorkflow: db.query<triggers.LiveWorkflowRow, [string]>(
    "SELECT id, workspace_id, latest_version_id, webhook_token FROM workflows WHERE id = ? AND status = 'active' AND latest_version_id IS NOT NULL",
  ),

  registration: db.query<triggers.RegistrationRow, [string]>("SELECT * FROM trigger_registrations WHERE workflow_id = ?"),
  upsertRegistration:
    db.query(`INSERT INTO trigger_registrations (workflow_id, workspace_id, piece_id, trigger_id, version_id, trigger, config_hash, state, enabled, last_error, updated_at)
    VALUES ($workflow_id, $workspace_id, $piece_id, $trigger_id, $version_id, $trigger, $config_hash, $state, $enabled, $last_error, $updated_at)
    ON CONFLICT (workflow_id) DO UPDATE SET workspace_id = excluded.workspace_id, piece_id = excluded.piece_id, trigger_id = excluded.trigger_id,
      version_id = excluded.version_id, trigger = excluded.trigger, config_hash = excluded.config_hash, state = excluded.state,
      enabled = excluded.enabled, last_error = excluded.last_error, updated_at = excluded.updated_at`),
  registrationIds: db.query<{ workflow_id: string }, []>("SELECT workflow_id FROM trigger_registrations"),
  scheduleIds: db.query<{ workflow_id: string }, []>("SELECT workflow_id FROM trigger_schedules"),
  pollIds: db.query<{ workflow_id: string }, []>("SELECT workflow_id FROM trigger_polls"),
  setRegistrationState: db.query<null, [string | null, number, string]>("UPDATE trigger_registrations SET state = ?, updated_at = ? WHERE workflow_id = ?"),
  deleteRegistration: db.query<null, [string]>("DELETE FROM trigger_registrations WHERE workflow_id = ?"),
});

export class SqliteTriggers extends Prepared(statements) implements triggers.TriggerRepository {
  readonly schedules = new SqliteDueRows(this.c, this.q.schedules);
  readonly polls = new SqliteDueRows(this.c, this.q.polls);

  advanceSchedule(workflowId: string, heldInstant: number, nextFireAt: number, firedAt: number, runId: string | null) {
    return this.c.do(() => this.q.advanceSchedule.run(nextFireAt, firedAt, runId, firedAt, workflowId, heldInstant).changes > 0);
  }
  setScheduleRun(workflowId: string, runId: string) {
    return this.c.do(() => void this.q.setScheduleRun.run(runId, workflowId));
  }

  webhookTarget(tokenHash: string) {
    return this.c.do(() => this.q.webhookTarget.get(tokenHash));
  }
  liveWorkflow(workflowId: string) {
    return this.c.do(() => this.q.liveWorkflow.get(workflowId));
  }

  registration(workflowId: string) {
    return this.c.do(() => this.q.registration.get(workflowId));
  }
  putRegistration(row: triggers.RegistrationRow) {
    return this.c.do(() => void this.q.upsertRegistration.run(bindRow(row)));
  }
  patchRegistration(workflowId: string, patch: triggers.RegistrationPatch) {
    const { columns, values } = triggers.patchedColumns(patch);
    if (columns.length === 0) return Promise.resolve();
    return this.c.do(() => {
      // Cached by bun:sqlite per text: a handful of column sets are ever used.
      const sql = `UPDATE trigger_registrations SET ${columns.map((column) => `${column} = ?`).join(", ")} WHERE workflow_id = ?`;
      this.c.db.query(sql).run(...(values as never[]), workflowId);
    });
  }
  triggerRowIds() {
    return this.c.do(
      (): triggers.TriggerRowIds => ({
        schedules: new Set(this.q.scheduleIds.all().map((r) => r.workflow_id)),
        polls: new Set(this.q.pollIds.all().map((r) => r.workflow_id)),
      }),
    );
  }
  async deleteTriggerRowsExcept(live: Set<string>, rows?: triggers.TriggerRowIds) {
    const known = rows ?? (await this.triggerRowIds());
    return this.c.do(() => {
      let deleted = 0;
      for (const workflowId of known.schedules) if (!live.has(workflowId)) deleted += this.q.schedules.delete.run(workflowId).changes;
      for (const workflowId of known.polls) if (!live.has(workflowId)) deleted += this.q.polls.delete.run(workflowId).changes;
      return deleted;
    });
  }
  registrationWorkflowIds() {
    return this.c.do(() => this.q.registrationIds.all().map((r) => r.workflow_id));
  }
  setRegistrationState(workflowId: string, state: string | null, at: number) {
    return this.c.do(() => void this.q.setRegistrationState.run(state, at, workflowId));
  }
  deleteRegistration(workflowId: string) {
    return this.c.do(() => this.q.deleteRegistration.run(workflowId).changes > 0);
  }
}
