/**
 * Compact run rows and list indexes (issue 19, "less disk per run"; ../../run-layout.ts says how each column is
 * stored and read). A 3-step run took ~1,020 bytes, most of it keys: each of the three list index entries held
 * a 36-character workspace or workflow id, a 24-character time, the 36-character run id and three words, the
 * row three such ids and a 64-character definition hash. Now:
 * - `run_names` holds each workspace id, workflow id, trigger type and definition hash once; runs, run_counts,
 *   run_hours and run_tags hold its integer key;
 * - status and environment are fixed codes (completed 0, failed 1, cancelled 2, pending 3, running 4,
 *   paused 5; production 0, test 1);
 * - started_at is milliseconds since the epoch; run_hours.hour is started_at / 3,600,000;
 * - `seq` (the rowid, kept by VACUUM) orders runs started in the same millisecond, so the list indexes no
 *   longer hold the run id; the id keeps its own unique index, for look-ups by id.
 *
 * Every stored run is rewritten once (the first start after the upgrade: about 20 s per million runs on a
 * 2-core machine; the file needs room for a second copy of the runs meanwhile, given back to the file system
 * by retention's incremental vacuum afterwards). Times are kept to the millisecond in canonical ISO form, as
 * the engine writes them; a stored time that is not (hand-edited) is read back in that form.
 */
import { RUN_DETAILS } from "./004-runs";
import { cell, cellIs, count as countCell } from "./008-run-counts";
import { countedColumns, ENVIRONMENT, KEY, rebuildKeptCounts, STATUS } from "../../migration-sql";

const MS = (column: string) => `CAST(round((julianday(${column}) - 2440587.5) * 86400000) AS INTEGER)`;
const HOUR = (column: string) => `CAST(round((julianday(${column} || ':00:00Z') - 2440587.5) * 24) AS INTEGER)`;

const hourOf = (row: "NEW" | "OLD") => `${row}.started_at / 3600000`;

/** As migration 008's, on the compact values (the hour is an integer), taking only from the kept rows. */
const count = (row: "NEW" | "OLD", delta: 1 | -1) => countCell(row, delta, hourOf, " AND slot = 0");

function countTags(row: "NEW" | "OLD", delta: 1 | -1): string {
  if (delta === 1) {
    return `
  INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
    SELECT ${cell(row)}, value, 1 FROM (SELECT DISTINCT value FROM json_each(${row}.tags)) WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT OR IGNORE INTO run_tags (workspace_id, tag, started_at, run_id) SELECT ${row}.workspace_id, value, ${row}.started_at, ${row}.id FROM json_each(${row}.tags);`;
  }
  return `
  UPDATE run_counts SET n = n - 1 WHERE ${cellIs(row)} AND slot = 0 AND tag IN (SELECT value FROM json_each(${row}.tags));
  DELETE FROM run_tags WHERE workspace_id = ${row}.workspace_id AND tag IN (SELECT value FROM json_each(${row}.tags)) AND started_at = ${row}.started_at AND run_id = ${row}.id;`;
}

/** A kept-count table rebuilt with its columns' compact values (`select` maps the old row's columns). */
const rebuild = (table: string, columns: string, key: string, select: string) => `
CREATE TABLE ${table}_compact (
${columns}
  PRIMARY KEY (${key})
) WITHOUT ROWID;
INSERT INTO ${table}_compact SELECT ${select} FROM ${table};
DROP TABLE ${table};
ALTER TABLE ${table}_compact RENAME TO ${table};`;

/** SQLite's kept-count cell and count columns, as run_hours has them here and run_durations (024) and the tag counts (025) take them. */
export const COUNTED = countedColumns("INTEGER", "INTEGER");

export default {
  version: 18,
  name: "compact-runs",
  note: "rewrites every stored run once: ~11 s per million runs on 2 cores",
  sql: `
CREATE TABLE run_names (
  key INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO run_names (name) SELECT DISTINCT workspace_id FROM runs;
INSERT OR IGNORE INTO run_names (name) SELECT DISTINCT workflow_id FROM runs;
INSERT OR IGNORE INTO run_names (name) SELECT DISTINCT trigger_type FROM runs;
INSERT OR IGNORE INTO run_names (name) SELECT hash FROM run_definitions;
INSERT OR IGNORE INTO run_names (name) SELECT DISTINCT definition_hash FROM runs;
INSERT OR IGNORE INTO run_names (name) SELECT workspace_id FROM run_counts UNION SELECT workflow_id FROM run_counts UNION SELECT trigger_type FROM run_counts;
INSERT OR IGNORE INTO run_names (name) SELECT workspace_id FROM run_hours UNION SELECT workflow_id FROM run_hours UNION SELECT trigger_type FROM run_hours;
INSERT OR IGNORE INTO run_names (name) SELECT workspace_id FROM run_tags;

CREATE TABLE runs_compact (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  workspace_id INTEGER NOT NULL,
  org_id TEXT NOT NULL,
  workflow_id INTEGER NOT NULL,
  workflow_name TEXT NOT NULL,
  workflow_trigger_type TEXT,
  status INTEGER NOT NULL,
  trigger_type INTEGER NOT NULL,
  trigger_data TEXT NOT NULL,
  environment INTEGER NOT NULL,
  version_id TEXT,
  version_number INTEGER,
  executed_version_id TEXT,
  executed_version_number INTEGER,
  definition_hash INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
${RUN_DETAILS},
  owner TEXT,
  packed_steps BLOB
);
INSERT INTO runs_compact (id, workspace_id, org_id, workflow_id, workflow_name, workflow_trigger_type, status, trigger_type,
  trigger_data, environment, version_id, version_number, executed_version_id, executed_version_number, definition_hash,
  started_at, finished_at, duration_ms, error_message, tags, started_from_step, retry_of_run_id, retried_by_run_id,
  step_total, step_failed, wait_step, resume_mode, resume_at, resume_token_hash, parent_run_id, depth, state, response,
  event_seq, owner, packed_steps)
SELECT id, ${KEY("workspace_id")}, org_id, ${KEY("workflow_id")}, workflow_name, workflow_trigger_type, ${STATUS("status")},
  ${KEY("trigger_type")}, trigger_data, ${ENVIRONMENT("environment")}, version_id, version_number, executed_version_id,
  executed_version_number, ${KEY("definition_hash")}, ${MS("started_at")}, finished_at, duration_ms, error_message, tags,
  started_from_step, retry_of_run_id, retried_by_run_id, step_total, step_failed, wait_step, resume_mode, resume_at,
  resume_token_hash, parent_run_id, depth, state, response, event_seq, owner, packed_steps
FROM runs ORDER BY rowid;
DROP TABLE runs;
ALTER TABLE runs_compact RENAME TO runs;
${rebuildKeptCounts(rebuild, { code: "INTEGER", count: "INTEGER", text: "TEXT" }, MS, HOUR)}

CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, environment, status, trigger_type);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, environment, status, trigger_type);
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms, started_at, environment);
CREATE INDEX runs_unfinished ON runs(id) WHERE status IN (3, 4, 5);

CREATE TRIGGER runs_count_insert AFTER INSERT ON runs BEGIN${count("NEW", 1)}
END;
CREATE TRIGGER runs_count_insert_tags AFTER INSERT ON runs WHEN NEW.tags <> '[]' BEGIN${countTags("NEW", 1)}
END;
CREATE TRIGGER runs_count_delete AFTER DELETE ON runs BEGIN${count("OLD", -1)}
END;
CREATE TRIGGER runs_count_delete_tags AFTER DELETE ON runs WHEN OLD.tags <> '[]' BEGIN${countTags("OLD", -1)}
END;
CREATE TRIGGER runs_count_status AFTER UPDATE OF status ON runs WHEN OLD.status IS NOT NEW.status BEGIN${count("OLD", -1)}${count("NEW", 1)}
END;
CREATE TRIGGER runs_count_status_tags AFTER UPDATE OF status, tags ON runs
  WHEN (OLD.status IS NOT NEW.status OR OLD.tags IS NOT NEW.tags) AND (OLD.tags <> '[]' OR NEW.tags <> '[]') BEGIN${countTags("OLD", -1)}${countTags("NEW", 1)}
END;
CREATE TRIGGER run_definitions_used AFTER INSERT ON runs BEGIN
  UPDATE run_definitions SET runs = runs + 1 WHERE hash = (SELECT name FROM run_names WHERE key = NEW.definition_hash);
END;
CREATE TRIGGER run_definitions_released AFTER DELETE ON runs BEGIN
  UPDATE run_definitions SET runs = runs - 1 WHERE hash = (SELECT name FROM run_names WHERE key = OLD.definition_hash);
END;
`,
};
