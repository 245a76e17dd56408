/**
 * The audit log (docs/teams.md, "Audit log"): who did what, when, from where, one row per action.
 * - `actor_*`: a user (id, e-mail) or an API token (id, name), or nobody known (a failed login).
 * - `target_*`: what the action touched (a workflow, a connection, a member, …); `details` is JSON without secrets.
 * Read newest first per workspace, filtered by action or actor; rows older than WEFT_AUDIT_RETENTION_DAYS go.
 */
import { AUDIT_EVENT_INDEXES } from "../../migration-sql";

export default {
  version: 28,
  name: "audit-events",
  sql: `
CREATE TABLE audit_events (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT,
  actor_name TEXT,
  action TEXT NOT NULL,
  target_type TEXT,
  target_id TEXT,
  target_name TEXT,
  details TEXT NOT NULL,
  ip TEXT,
  user_agent TEXT
);
${AUDIT_EVENT_INDEXES}`,
};
