import { AUDIT_EVENT_INDEXES } from "../../migration-sql";

/** As SQLite's 028: the audit log, one row per action, read newest first per workspace (docs/teams.md, "Audit log"). */
export default {
  version: 28,
  name: "audit-events",
  sql: `
CREATE TABLE audit_events (
  id TEXT COLLATE "C" PRIMARY KEY,
  created_at TEXT COLLATE "C" NOT NULL,
  workspace_id TEXT COLLATE "C" NOT NULL,
  actor_type TEXT COLLATE "C" NOT NULL,
  actor_id TEXT COLLATE "C",
  actor_name TEXT,
  action TEXT COLLATE "C" NOT NULL,
  target_type TEXT COLLATE "C",
  target_id TEXT COLLATE "C",
  target_name TEXT,
  details TEXT NOT NULL,
  ip TEXT,
  user_agent TEXT
);
${AUDIT_EVENT_INDEXES}`,
};
