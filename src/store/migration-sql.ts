/**
 * SQL that migrations of both databases run alike, byte for byte: statements and fragments written in what both
 * dialects accept, or built from each database's own types and conversions (given by the caller), said once so
 * that neither migrations folder imports the other's. Shipped migrations are frozen: what these produce for a
 * shipped version must never change (test/store/migration-freeze.test.ts pins every migration's SQL).
 */

/** Migration 7: the run list's two indexes, ascending (sqlite/migrations/007-run-list-indexes.ts says why). */
export const RUN_LIST_INDEXES = `
DROP INDEX runs_workspace_started;
DROP INDEX runs_workflow_started;
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, id);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, id);
`;

/** The runs column, of the database's integer `type`, with every stored run counted once (PostgreSQL's 009 the same). */
export const countUses = (type: string) => `ALTER TABLE run_definitions ADD COLUMN runs ${type} NOT NULL DEFAULT 0;
UPDATE run_definitions SET runs = uses.n
  FROM (SELECT definition_hash, COUNT(*) AS n FROM runs GROUP BY definition_hash) AS uses
  WHERE run_definitions.hash = uses.definition_hash;
`;

/** The audit log's indexes: newest first per workspace, by action, by actor; by time alone for retention. The same on PostgreSQL. */
export const AUDIT_EVENT_INDEXES = `CREATE INDEX audit_events_workspace_time ON audit_events(workspace_id, created_at);
CREATE INDEX audit_events_action ON audit_events(workspace_id, action, created_at);
CREATE INDEX audit_events_actor ON audit_events(workspace_id, actor_id, created_at);
CREATE INDEX audit_events_time ON audit_events(created_at);
`;

/** Migrations 18 and 19: the compact codes of a run's status and environment, and a name's key in run_names. */
export const STATUS = (column: string) =>
  `CASE ${column} WHEN 'completed' THEN 0 WHEN 'failed' THEN 1 WHEN 'cancelled' THEN 2 WHEN 'pending' THEN 3 WHEN 'running' THEN 4 WHEN 'paused' THEN 5 END`;
export const ENVIRONMENT = (column: string) => `CASE ${column} WHEN 'production' THEN 0 WHEN 'test' THEN 1 END`;
export const KEY = (column: string) => `(SELECT key FROM run_names WHERE name = ${column})`;
/**
 * A kept count's cell and count columns, after its key columns, in the database's types: `code` for environment
 * and status, `count` for n and slot; run_counts has its `tag` column between (PostgreSQL's 019 the same).
 */
export const countedColumns = (code: string, count: string, tag = "") => `  environment ${code} NOT NULL,
  workflow_id INTEGER NOT NULL,
  status ${code} NOT NULL,
  trigger_type INTEGER NOT NULL,${tag}
  n ${count} NOT NULL,
  slot ${count} NOT NULL DEFAULT 0,`;

/** One conversion in the database's own SQL: a column in, its compact value out. */
type Conversion = (column: string) => string;

/** A database's column types for the kept counts: `code` (environment, status), `count` (n, slot, started_at), `text`. */
export interface KeptCountTypes {
  code: string;
  count: string;
  text: string;
}

/**
 * The kept counts rewritten with their compact values: the same columns, keys and conversions on both databases
 * (SQLite's 018 and PostgreSQL's 019), each in its own column `types`, `rebuild`, MS and HOUR.
 */
export const rebuildKeptCounts = (
  rebuild: (table: string, columns: string, key: string, select: string) => string,
  { code, count, text }: KeptCountTypes,
  ms: Conversion,
  hour: Conversion,
) => `${rebuild(
  "run_counts",
  `  workspace_id INTEGER NOT NULL,
${countedColumns(code, count, `\n  tag ${text} NOT NULL,`)}`,
  "workspace_id, environment, workflow_id, status, trigger_type, tag, slot",
  `${KEY("workspace_id")}, ${ENVIRONMENT("environment")}, ${KEY("workflow_id")}, ${STATUS("status")}, ${KEY("trigger_type")}, tag, n, slot`,
)}
CREATE INDEX run_counts_deltas ON run_counts(slot) WHERE slot <> 0;
${rebuild(
  "run_hours",
  `  workspace_id INTEGER NOT NULL,
  hour INTEGER NOT NULL,
${countedColumns(code, count)}`,
  "workspace_id, hour, environment, workflow_id, status, trigger_type, slot",
  `${KEY("workspace_id")}, ${hour("hour")}, ${ENVIRONMENT("environment")}, ${KEY("workflow_id")}, ${STATUS("status")}, ${KEY("trigger_type")}, n, slot`,
)}
CREATE INDEX run_hours_deltas ON run_hours(slot) WHERE slot <> 0;
${rebuild(
  "run_tags",
  `  workspace_id INTEGER NOT NULL,
  tag ${text} NOT NULL,
  started_at ${count} NOT NULL,
  run_id ${text} NOT NULL,`,
  "workspace_id, tag, started_at, run_id",
  `${KEY("workspace_id")}, tag, ${ms("started_at")}, run_id`,
)}`;
