/** Schedules, polls, registrations and webhook targets on PostgreSQL (../triggers.ts says what each answers). */
import * as triggers from "../triggers";
import type { PostgresConnection } from "./connection";

/** A due-rows table on PostgreSQL: `time` is its column saying when a row is due, `columns` its columns, the key first. */
class PostgresDueRows<Row> implements triggers.DueRows<Row> {
  constructor(
    private readonly c: PostgresConnection,
    private readonly table: string,
    private readonly time: string,
    private readonly columns: readonly (keyof Row & string)[],
  ) {}

  get(workflowId: string) {
    return this.c.get<Row>(`SELECT * FROM ${this.table} WHERE workflow_id = $1`, [workflowId]);
  }
  put(row: Row) {
    return this.c.upsert(this.table, this.columns, row);
  }
  async delete(workflowId: string) {
    return (await this.c.run(`DELETE FROM ${this.table} WHERE workflow_id = $1`, [workflowId])) > 0;
  }
  due(now: number, limit: number) {
    return this.c.all<Row>(`SELECT * FROM ${this.table} WHERE ${this.time} <= $1 ORDER BY ${this.time} LIMIT $2`, [now, limit]);
  }
  async nextAt() {
    return (await this.c.get<{ at: number | null }>(`SELECT min(${this.time}) AS at FROM ${this.table}`))?.at ?? null;
  }
}

export class PostgresTriggers implements triggers.TriggerRepository {
  readonly schedules: PostgresDueRows<triggers.ScheduleRow>;
  readonly polls: PostgresDueRows<triggers.PollRow>;

  constructor(private readonly c: PostgresConnection) {
    this.schedules = new PostgresDueRows(c, "trigger_schedules", "next_fire_at", [
      "workflow_id",
      "workspace_id",
      "version_id",
      "spec",
      "next_fire_at",
      "last_fired_at",
      "last_run_id",
      "updated_at",
    ]);
    this.polls = new PostgresDueRows(c, "trigger_polls", "next_poll_at", [
      "workflow_id",
      "workspace_id",
      "version_id",
      "piece_id",
      "trigger_id",
      "interval_seconds",
      "next_poll_at",
      "baseline",
      "last_poll_at",
      "last_success_at",
      "failures",
      "last_error",
      "updated_at",
    ]);
  }

  async advanceSchedule(workflowId: string, heldInstant: number, nextFireAt: number, firedAt: number, runId: string | null) {
    // Compare-and-set on the instant: a second writer's UPDATE waits for the first one's commit, then finds the instant gone.
    const changed = await this.c.run(
      "UPDATE trigger_schedules SET next_fire_at = $1, last_fired_at = $2, last_run_id = $3, updated_at = $2 WHERE workflow_id = $4 AND next_fire_at = $5",
      [nextFireAt, firedAt, runId, workflowId, heldInstant],
    );
    return changed > 0;
  }
  async setScheduleRun(workflowId: string, runId: string) {
    await this.c.run("UPDATE trigger_schedules SET last_run_id = $1 WHERE workflow_id = $2", [runId, workflowId]);
  }

  webhookTarget(tokenHash: string) {
    return this.c.get<triggers.WebhookTargetRow>(
      "SELECT id, workspace_id, status, latest_version_id, webhook_token FROM workflows WHERE webhook_token_hash = $1",
      [tokenHash],
    );
  }
  liveWorkflow(workflowId: string) {
    return this.c.get<triggers.LiveWorkflowRow>(
      "SELECT id, workspace_id, latest_version_id, webhook_token FROM workflows WHERE id = $1 AND status = 'active' AND latest_version_id IS NOT NULL",
      [workflowId],
    );
  }

  registration(workflowId: string) {
    return this.c.get<triggers.RegistrationRow>("SELECT * FROM trigger_registrations WHERE workflow_id = $1", [workflowId]);
  }
  async putRegistration(row: triggers.RegistrationRow) {
    await this.c.upsert(
      "trigger_registrations",
      ["workflow_id", "workspace_id", "piece_id", "trigger_id", "version_id", "trigger", "config_hash", "state", "enabled", "last_error", "updated_at"],
      row,
    );
  }
  async patchRegistration(workflowId: string, patch: triggers.RegistrationPatch) {
    const { columns, values } = triggers.patchedColumns(patch);
    if (columns.length === 0) return;
    const sets = columns.map((column, i) => `${column} = $${i + 1}`).join(", ");
    await this.c.run(`UPDATE trigger_registrations SET ${sets} WHERE workflow_id = $${columns.length + 1}`, [...values, workflowId]);
  }
  async triggerRowIds(): Promise<triggers.TriggerRowIds> {
    const schedules = await this.c.all<{ workflow_id: string }>("SELECT workflow_id FROM trigger_schedules");
    const polls = await this.c.all<{ workflow_id: string }>("SELECT workflow_id FROM trigger_polls");
    return { schedules: new Set(schedules.map((r) => r.workflow_id)), polls: new Set(polls.map((r) => r.workflow_id)) };
  }
  async deleteTriggerRowsExcept(live: Set<string>, rows?: triggers.TriggerRowIds) {
    const known = rows ?? (await this.triggerRowIds());
    const stale = (ids: Set<string>) => JSON.stringify([...ids].filter((id) => !live.has(id)));
    // One statement per table, the stale ids as a JSON array.
    const schedules = await this.c.run("DELETE FROM trigger_schedules WHERE workflow_id IN (SELECT json_array_elements_text($1::text::json))", [
      stale(known.schedules),
    ]);
    const polls = await this.c.run("DELETE FROM trigger_polls WHERE workflow_id IN (SELECT json_array_elements_text($1::text::json))", [stale(known.polls)]);
    return schedules + polls;
  }
  async registrationWorkflowIds() {
    return (await this.c.all<{ workflow_id: string }>("SELECT workflow_id FROM trigger_registrations")).map((r) => r.workflow_id);
  }
  async setRegistrationState(workflowId: string, state: string | null, at: number) {
    await this.c.run("UPDATE trigger_registrations SET state = $1, updated_at = $2 WHERE workflow_id = $3", [state, at, workflowId]);
  }
  async deleteRegistration(workflowId: string) {
    return (await this.c.run("DELETE FROM trigger_registrations WHERE workflow_id = $1", [workflowId])) > 0;
  }
}
