/** The audit log on PostgreSQL (../audit.ts says what each answers). */
import { AUDIT_COLUMNS as COLUMNS, type AuditEventRow, type AuditFilter, type AuditRepository, auditValues, auditWhere } from "../audit";
import type { PostgresConnection } from "./connection";

/** `?` placeholders as PostgreSQL's `$n`. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

export class PostgresAudit implements AuditRepository {
  constructor(private readonly c: PostgresConnection) {}

  async insert(r: AuditEventRow) {
    await this.c.run(numbered(`INSERT INTO audit_events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), auditValues(r));
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
