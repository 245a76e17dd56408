/** The audit log on PostgreSQL (../audit.ts says what each answers). */
import { type AuditEventRow, type AuditFilter, type AuditRepository, auditWhere } from "../audit";
import type { PostgresConnection } from "./connection";

const COLUMNS = "id, created_at, workspace_id, actor_type, actor_id, actor_name, action, target_type, target_id, target_name, details, ip, user_agent";

/** `?` placeholders as PostgreSQL's `$n`. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

export class PostgresAudit implements AuditRepository {
  constructor(private readonly c: PostgresConnection) {}

  async insert(r: AuditEventRow) {
    await this.c.run(numbered(`INSERT INTO audit_events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), [
      r.id,
      r.created_at,
      r.workspace_id,
      r.actor_type,
      r.actor_id,
      r.actor_name,
      r.action,
      r.target_type,
      r.target_id,
      r.target_name,
      r.details,
      r.ip,
      r.user_agent,
    ]);
  }
  list(filter: AuditFilter, limit: number, offset: number) {
    const { where, values } = auditWhere(filter);
    const sql = numbered(`SELECT ${COLUMNS} FROM audit_events WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`);
    return this.c.all<AuditEventRow>(sql, [...values, limit, offset]);
  }
  async count(filter: AuditFilter) {
    const { where, values } = auditWhere(filter);
    const row = await this.c.get<{ n: number }>(numbered(`SELECT COUNT(*) AS n FROM audit_events WHERE ${where}`), values);
    return Number(row?.n ?? 0);
  }
  deleteBefore(before: string) {
    return this.c.run("DELETE FROM audit_events WHERE created_at < $1", [before]);
  }
}
