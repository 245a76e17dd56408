/** The audit log on SQLite (../audit.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { AUDIT_COLUMNS as COLUMNS, type AuditEventRow, type AuditFilter, type AuditRepository, auditValues, auditWhere } from "../audit";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  insert: db.query<null, (string | null)[]>(`INSERT INTO audit_events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
  deleteBefore: db.query<null, [string]>("DELETE FROM audit_events WHERE created_at < ?"),
});

export class SqliteAudit extends Prepared(statements) implements AuditRepository {
  insert(r: AuditEventRow) {
    return this.c.do(() => void this.q.insert.run(...auditValues(r)));
  }
  list(filter: AuditFilter, limit: number, offset: number) {
    const { where, values } = auditWhere(filter);
    // The filters combine freely, so the statement is prepared per call (bun:sqlite caches recent ones).
    const sql = `SELECT ${COLUMNS} FROM audit_events WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`;
    return this.c.do(() => this.c.db.query<AuditEventRow, (string | number)[]>(sql).all(...values, limit, offset));
  }
  count(filter: AuditFilter) {
    const { where, values } = auditWhere(filter);
    return this.c.do(() => this.c.db.query<{ n: number }, string[]>(`SELECT COUNT(*) AS n FROM audit_events WHERE ${where}`).get(...values)?.n ?? 0);
  }
  deleteBefore(before: string) {
    return this.c.do(() => this.q.deleteBefore.run(before).changes);
  }
}
