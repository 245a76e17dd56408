/**
 * The audit log's rows (docs/teams.md, "Audit log") and what the storage port (./port.ts) answers about them:
 * a workspace's events newest first, filtered and paged, and the pruning of those past retention.
 */
export interface AuditEventRow {
  id: string;
  created_at: string;
  workspace_id: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_name: string | null;
  /** JSON object. */
  details: string;
  ip: string | null;
  user_agent: string | null;
}

/** An event's columns, in the order `auditValues` gives their values (both databases' audit_events). */
export const AUDIT_COLUMNS =
  "id, created_at, workspace_id, actor_type, actor_id, actor_name, action, target_type, target_id, target_name, details, ip, user_agent";

/** An event's values in the order of AUDIT_COLUMNS, for an INSERT in either dialect. */
export const auditValues = (r: AuditEventRow) => [
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
];

/** Filters of a workspace's events; each one absent is not applied. `actor` matches the actor's id or name. */
export interface AuditFilter {
  workspaceId: string;
  action?: string;
  actor?: string;
  targetType?: string;
  /** Inclusive, ISO 8601. */
  from?: string;
  /** Exclusive, ISO 8601. */
  to?: string;
}

export interface AuditRepository {
  insert(row: AuditEventRow): Promise<void>;
  /** Newest first (created_at, then id). */
  list(filter: AuditFilter, limit: number, offset: number): Promise<AuditEventRow[]>;
  count(filter: AuditFilter): Promise<number>;
  /** Deletes events older than `before` (ISO 8601); answers how many. */
  deleteBefore(before: string): Promise<number>;
}

/** The filter's WHERE clause with `?` placeholders and its values, in order (both dialects number them as they need). */
export function auditWhere(filter: AuditFilter): { where: string; values: string[] } {
  const clauses = ["workspace_id = ?"];
  const values = [filter.workspaceId];
  if (filter.action !== undefined) clauses.push("action = ?"), values.push(filter.action);
  if (filter.actor !== undefined) clauses.push("(actor_id = ? OR actor_name = ?)"), values.push(filter.actor, filter.actor);
  if (filter.targetType !== undefined) clauses.push("target_type = ?"), values.push(filter.targetType);
  if (filter.from !== undefined) clauses.push("created_at >= ?"), values.push(filter.from);
  if (filter.to !== undefined) clauses.push("created_at < ?"), values.push(filter.to);
  return { where: clauses.join(" AND "), values };
}
