/** The second factor on SQLite (../second-factor.ts says what each answers). */
import type { Database } from "bun:sqlite";
import type { SecondFactorLoginRow, SecondFactorRepository, SecondFactorRow } from "../second-factor";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  factor: db.query<SecondFactorRow, [string]>("SELECT * FROM second_factors WHERE user_id = ?"),
  putPending: db.query<null, [string, string, string]>(
    `INSERT INTO second_factors (user_id, secret, confirmed_at, last_step, created_at) VALUES (?1, ?2, NULL, NULL, ?3)
     ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = NULL
     WHERE second_factors.confirmed_at IS NULL`,
  ),
  confirm: db.query<null, [string, number, string]>("UPDATE second_factors SET confirmed_at = ?, last_step = ? WHERE user_id = ? AND confirmed_at IS NULL"),
  useStep: db.query<null, [number, string, number]>("UPDATE second_factors SET last_step = ? WHERE user_id = ? AND (last_step IS NULL OR last_step < ?)"),
  removeFactor: db.query<null, [string]>("DELETE FROM second_factors WHERE user_id = ?"),
  removeCodes: db.query<null, [string]>("DELETE FROM recovery_codes WHERE user_id = ?"),
  insertCode: db.query<null, [string, string, string]>("INSERT INTO recovery_codes (user_id, code_hash, used_at, created_at) VALUES (?, ?, NULL, ?)"),
  useCode: db.query<null, [string, string, string]>("UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL"),
  codesLeft: db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = ? AND used_at IS NULL"),
  insertLogin: db.query<null, [string, string, string]>("INSERT INTO second_factor_logins (ticket_hash, user_id, failures, expires_at) VALUES (?, ?, 0, ?)"),
  login: db.query<SecondFactorLoginRow, [string]>("SELECT * FROM second_factor_logins WHERE ticket_hash = ?"),
  dropExpired: db.query<null, [string]>("DELETE FROM second_factor_logins WHERE expires_at <= ?"),
  takeLogin: db.query<null, [string]>("DELETE FROM second_factor_logins WHERE ticket_hash = ?"),
  failLogin: db.query<{ failures: number }, [string]>("UPDATE second_factor_logins SET failures = failures + 1 WHERE ticket_hash = ? RETURNING failures"),
  required: db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM second_factor_requirements WHERE workspace_id = ?"),
  require: db.query<null, [string, string | null, string]>(
    "INSERT INTO second_factor_requirements (workspace_id, required_by, created_at) VALUES (?, ?, ?) ON CONFLICT (workspace_id) DO NOTHING",
  ),
  unrequire: db.query<null, [string]>("DELETE FROM second_factor_requirements WHERE workspace_id = ?"),
  requiring: db.query<{ workspace_id: string }, [string]>(
    `SELECT r.workspace_id FROM second_factor_requirements r JOIN workspace_members m ON m.workspace_id = r.workspace_id
     WHERE m.user_id = ? AND m.deactivated_at IS NULL ORDER BY r.created_at`,
  ),
  mustEnrol: db.query<{ n: number }, [string, string, string]>(
    `SELECT COUNT(*) AS n FROM second_factor_requirements WHERE workspace_id = ?1
     AND NOT EXISTS (SELECT 1 FROM second_factors WHERE user_id = ?2 AND confirmed_at IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM sso_sessions WHERE session_hash = ?3)`,
  ),
});

export class SqliteSecondFactor extends Prepared(statements) implements SecondFactorRepository {
  factor(userId: string) {
    return this.c.do(() => this.q.factor.get(userId));
  }
  putPending(row: SecondFactorRow) {
    return this.c.do(() => this.q.putPending.run(row.user_id, row.secret, row.created_at).changes === 1);
  }
  confirm(userId: string, at: string, step: number) {
    return this.c.do(() => this.q.confirm.run(at, step, userId).changes === 1);
  }
  useStep(userId: string, step: number) {
    return this.c.do(() => this.q.useStep.run(step, userId, step).changes === 1);
  }
  remove(userId: string) {
    return this.c.do(() => {
      this.q.removeCodes.run(userId);
      this.q.removeFactor.run(userId);
    });
  }
  replaceRecoveryCodes(userId: string, hashes: string[], at: string) {
    return this.c.do(() => {
      this.q.removeCodes.run(userId);
      for (const hash of hashes) this.q.insertCode.run(userId, hash, at);
    });
  }
  useRecoveryCode(userId: string, hash: string, at: string) {
    return this.c.do(() => this.q.useCode.run(at, userId, hash).changes === 1);
  }
  recoveryCodesLeft(userId: string) {
    return this.c.do(() => this.q.codesLeft.get(userId)?.n ?? 0);
  }
  insertLogin(row: SecondFactorLoginRow) {
    return this.c.do(() => void this.q.insertLogin.run(row.ticket_hash, row.user_id, row.expires_at));
  }
  login(ticketHash: string, now: string) {
    return this.c.do(() => {
      this.q.dropExpired.run(now);
      return this.q.login.get(ticketHash);
    });
  }
  takeLogin(ticketHash: string) {
    return this.c.do(() => this.q.takeLogin.run(ticketHash).changes === 1);
  }
  failLogin(ticketHash: string) {
    return this.c.do(() => this.q.failLogin.get(ticketHash)?.failures ?? Number.POSITIVE_INFINITY);
  }
  required(workspaceId: string) {
    return this.c.do(() => (this.q.required.get(workspaceId)?.n ?? 0) > 0);
  }
  setRequired(workspaceId: string, required: boolean, by: string | null, at: string) {
    return this.c.do(() => void (required ? this.q.require.run(workspaceId, by, at) : this.q.unrequire.run(workspaceId)));
  }
  requiringWorkspaces(userId: string) {
    return this.c.do(() => this.q.requiring.all(userId).map((row) => row.workspace_id));
  }
  mustEnrol(workspaceId: string, userId: string, sessionHash: string) {
    return this.c.do(() => (this.q.mustEnrol.get(workspaceId, userId, sessionHash)?.n ?? 0) > 0);
  }
}
