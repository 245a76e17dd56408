/**
 * Counts added as rows, not to rows (for PostgreSQL, where several writers share the counters; see
 * ../../postgres/migrations/015-run-count-deltas.ts). `run_counts` and `run_hours` gain `slot` in their key: slot 0 is the
 * count, any other slot a change not yet folded into it; a count is the sum over its slots, as every query
 * of them already sums. `run_definition_uses` holds such changes of `run_definitions.runs`.
 *
 * On SQLite the row triggers of migrations 8 and 9 keep writing slot 0 and `runs` directly (one writer; no
 * one to wait for), so the other slots and `run_definition_uses` stay empty. The tables are rebuilt with the
 * new key; legacy_alter_table lets the rename leave those triggers as they are (they name the tables, which
 * exist again once renamed).
 */
const rebuild = (table: string, columns: string, key: string) => `
CREATE TABLE ${table}_slotted (
${columns},
  slot INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (${key}, slot)
) WITHOUT ROWID;
INSERT INTO ${table}_slotted SELECT *, 0 FROM ${table};
DROP TABLE ${table};
ALTER TABLE ${table}_slotted RENAME TO ${table};
CREATE INDEX ${table}_deltas ON ${table}(slot) WHERE slot <> 0;`;

export default {
  version: 15,
  name: "run-count-deltas",
  sql: `
PRAGMA legacy_alter_table = ON;
${rebuild(
  "run_counts",
  `  workspace_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  status TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  tag TEXT NOT NULL,
  n INTEGER NOT NULL`,
  "workspace_id, environment, workflow_id, status, trigger_type, tag",
)}
${rebuild(
  "run_hours",
  `  workspace_id TEXT NOT NULL,
  hour TEXT NOT NULL,
  environment TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  status TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  n INTEGER NOT NULL`,
  "workspace_id, hour, environment, workflow_id, status, trigger_type",
)}
PRAGMA legacy_alter_table = OFF;
CREATE TABLE run_definition_uses (
  hash TEXT NOT NULL,
  slot INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (hash, slot)
) WITHOUT ROWID;
`,
};
