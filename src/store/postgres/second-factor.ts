/** The second factor on PostgreSQL (../second-factor.ts says what each answers). */
import type { SecondFactorLoginRow, SecondFactorRepository, SecondFactorRow } from "../second-factor";
import type { PostgresConnection } from "./connection";

export class PostgresSecondFactor implements SecondFactorRepository {
  constructor(private readonly c: PostgresConnection) {}

  factor(userId: string) {
    return this.c.get<SecondFactorRow>("SELECT * FROM second_factors WHERE user_id = $1", [userId]);
  }
  async putPending(row: SecondFactorRow) {
    const changed = await this.c.run(
      `INSERT INTO second_factors (user_id, secret, confirmed_at, last_step, created_at) VALUES ($1, $2, NULL, NULL, $3)
       ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = NULL
       WHERE second_factors.confirmed_at IS NULL`,
      [row.user_id, row.secret, row.created_at],
    );
    return changed === 1;
  }
  async confirm(userId: string, at: string, step: number) {
    return (
      (await this.c.run("UPDATE second_factors SET confirmed_at = $1, last_step = $2 WHERE user_id = $3 AND confirmed_at IS NULL", [at, step, userId])) === 1
    );
  }
  async useStep(userId: string, step: number) {
    return (await this.c.run("UPDATE second_factors SET last_step = $1 WHERE user_id = $2 AND (last_step IS NULL OR last_step < $1)", [step, userId])) === 1;
  }
  async remove(userId: string) {
    await this.c.run("DELETE FROM recovery_codes WHERE user_id = $1", [userId]);
    await this.c.run("DELETE FROM second_factors WHERE user_id = $1", [userId]);
  }
  async replaceRecoveryCodes(userId: string, hashes: string[], at: string) {
    await this.c.run("DELETE FROM recovery_codes WHERE user_id = $1", [userId]);
    for (const hash of hashes)
      await this.c.run("INSERT INTO recovery_codes (user_id, code_hash, used_at, created_at) VALUES ($1, $2, NULL, $3)", [userId, hash, at]);
  }
  async useRecoveryCode(userId: string, hash: string, at: string) {
    return (await this.c.run("UPDATE recovery_codes SET used_at = $1 WHERE user_id = $2 AND code_hash = $3 AND used_at IS NULL", [at, userId, hash])) === 1;
  }
  async recoveryCodesLeft(userId: string) {
    return (await this.c.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL", [userId]))?.n ?? 0;
  }
  async insertLogin(row: SecondFactorLoginRow) {
    await this.c.run("INSERT INTO second_factor_logins (ticket_hash, user_id, failures, expires_at) VALUES ($1, $2, 0, $3)", [
      row.ticket_hash,
      row.user_id,
      row.expires_at,
    ]);
  }
  async login(ticketHash: string, now: string) {
    await this.c.run("DELETE FROM second_factor_logins WHERE expires_at <= $1", [now]);
    return this.c.get<SecondFactorLoginRow>("SELECT * FROM second_factor_logins WHERE ticket_hash = $1", [ticketHash]);
  }
  async takeLogin(ticketHash: string) {
    return (await this.c.run("DELETE FROM second_factor_logins WHERE ticket_hash = $1", [ticketHash])) === 1;
  }
  async failLogin(ticketHash: string) {
    const row = await this.c.get<{ failures: number }>("UPDATE second_factor_logins SET failures = failures + 1 WHERE ticket_hash = $1 RETURNING failures", [
      ticketHash,
    ]);
    return row ? Number(row.failures) : Number.POSITIVE_INFINITY;
  }
  async required(workspaceId: string) {
    return (await this.c.get("SELECT 1 FROM second_factor_requirements WHERE workspace_id = $1", [workspaceId])) !== null;
  }
  async setRequired(workspaceId: string, required: boolean, by: string | null, at: string) {
    if (required)
      await this.c.run(
        "INSERT INTO second_factor_requirements (workspace_id, required_by, created_at) VALUES ($1, $2, $3) ON CONFLICT (workspace_id) DO NOTHING",
        [workspaceId, by, at],
      );
    else await this.c.run("DELETE FROM second_factor_requirements WHERE workspace_id = $1", [workspaceId]);
  }
  async requiringWorkspaces(userId: string) {
    const rows = await this.c.all<{ workspace_id: string }>(
      `SELECT r.workspace_id FROM second_factor_requirements r JOIN workspace_members m ON m.workspace_id = r.workspace_id
       WHERE m.user_id = $1 AND m.deactivated_at IS NULL ORDER BY r.created_at`,
      [userId],
    );
    return rows.map((row) => row.workspace_id);
  }
  async mustEnrol(workspaceId: string, userId: string, sessionHash: string) {
    const row = await this.c.get(
      `SELECT 1 FROM second_factor_requirements WHERE workspace_id = $1
       AND NOT EXISTS (SELECT 1 FROM second_factors WHERE user_id = $2 AND confirmed_at IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM sso_sessions WHERE session_hash = $3)`,
      [workspaceId, userId, sessionHash],
    );
    return row !== null;
  }
}
