/**
 * The run list at any history size (issue 19): counts kept in the same transaction as the run writes, and
 * indexes that answer every filter of GET /api/runs without touching the run rows.
 *
 * - `run_counts`: runs per cell (workspace, environment, workflow, status, trigger type), once with tag ''
 *   (every run) and once per tag the run carries. The list's exact `total` is a sum over a few cells
 *   instead of a count over millions of rows.
 * - `run_hours`: the same cells per hour of `started_at` (its first 13 characters, '2026-11-25T10'). A deep
 *   page is found by adding up hours from the nearer end of the history, then stepping only within one hour.
 * - `run_tags`: (workspace, tag, started_at, run) for the tag filter, newest first.
 * - Triggers keep the three tables right whatever writes the runs (the run writer, retention, a workflow's
 *   deletion): only `status` and `tags` of a stored run ever change; workspace, environment, workflow,
 *   trigger type and start are fixed at insert.
 * - The list indexes carry the filter columns after the sort key (SQLite checks a filter in the index and
 *   skips rows of an OFFSET without reading the table); `runs_workspace_duration` serves sort=duration;
 *   `runs_unfinished` holds only runs that are not finished, so start-up recovery no longer reads the table.
 *
 * Existing runs are counted once here (a single pass per table; a few seconds per million runs).
 */
export const cell = (row: "NEW" | "OLD") => `${row}.workspace_id, ${row}.environment, ${row}.workflow_id, ${row}.status, ${row}.trigger_type`;
export const cellIs = (row: "NEW" | "OLD") =>
  `workspace_id = ${row}.workspace_id AND environment = ${row}.environment AND workflow_id = ${row}.workflow_id AND status = ${row}.status AND trigger_type = ${row}.trigger_type`;
const HOUR = (row: "NEW" | "OLD") => `substr(${row}.started_at, 1, 13)`;

/**
 * Adds a run's cell (+1) or takes it away (-1), as `row` (NEW or OLD) had it. 018 counts the same way on its compact
 * values: its own `hour`, and `kept` (` AND slot = 0`) to take only from the kept rows.
 */
export function count(row: "NEW" | "OLD", delta: 1 | -1, hour = HOUR, kept = ""): string {
  if (delta === 1) {
    return `
  INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n) VALUES (${cell(row)}, '', 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT INTO run_hours (workspace_id, hour, environment, workflow_id, status, trigger_type, n) VALUES (${row}.workspace_id, ${hour(row)}, ${row}.environment, ${row}.workflow_id, ${row}.status, ${row}.trigger_type, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;`;
  }
  return `
  UPDATE run_counts SET n = n - 1 WHERE ${cellIs(row)} AND tag = ''${kept};
  UPDATE run_hours SET n = n - 1 WHERE workspace_id = ${row}.workspace_id AND hour = ${hour(row)} AND environment = ${row}.environment
    AND workflow_id = ${row}.workflow_id AND status = ${row}.status AND trigger_type = ${row}.trigger_type${kept};`;
}

/** The same for each tag of the run (its cell's tag counts, and its run_tags rows when `withRows`). */
function countTags(row: "NEW" | "OLD", delta: 1 | -1, withRows: boolean): string {
  if (delta === 1) {
    return `
  INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
    SELECT ${cell(row)}, value, 1 FROM (SELECT DISTINCT value FROM json_each(${row}.tags)) WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;${
      withRows
        ? `
  INSERT OR IGNORE INTO run_tags (workspace_id, tag, started_at, run_id) SELECT ${row}.workspace_id, value, ${row}.started_at, ${row}.id FROM json_each(${row}.tags);`
        : ""
    }`;
  }
  return `
  UPDATE run_counts SET n = n - 1 WHERE ${cellIs(row)} AND tag IN (SELECT value FROM json_each(${row}.tags));${
    withRows
      ? `
  DELETE FROM run_tags WHERE workspace_id = ${row}.workspace_id AND tag IN (SELECT value FROM json_each(${row}.tags)) AND started_at = ${row}.started_at AND run_id = ${row}.id;`
      : ""
  }`;
}

export default {
  version: 8,
  name: "run-counts",
  sql: `
CREATE TABLE run_counts (
  workspace_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  status TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  tag TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, environment, workflow_id, status, trigger_type, tag)
) WITHOUT ROWID;
CREATE TABLE run_hours (
  workspace_id TEXT NOT NULL,
  hour TEXT NOT NULL,
  environment TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  status TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type)
) WITHOUT ROWID;
CREATE TABLE run_tags (
  workspace_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  started_at TEXT NOT NULL,
  run_id TEXT NOT NULL,
  PRIMARY KEY (workspace_id, tag, started_at, run_id)
) WITHOUT ROWID;

INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
  SELECT workspace_id, environment, workflow_id, status, trigger_type, '', count(*) FROM runs
  GROUP BY workspace_id, environment, workflow_id, status, trigger_type;
INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
  SELECT runs.workspace_id, runs.environment, runs.workflow_id, runs.status, runs.trigger_type, t.value, count(DISTINCT runs.id)
  FROM runs, json_each(runs.tags) AS t WHERE runs.tags <> '[]'
  GROUP BY runs.workspace_id, runs.environment, runs.workflow_id, runs.status, runs.trigger_type, t.value;
INSERT INTO run_hours (workspace_id, hour, environment, workflow_id, status, trigger_type, n)
  SELECT workspace_id, substr(started_at, 1, 13), environment, workflow_id, status, trigger_type, count(*) FROM runs
  GROUP BY workspace_id, substr(started_at, 1, 13), environment, workflow_id, status, trigger_type;
INSERT OR IGNORE INTO run_tags (workspace_id, tag, started_at, run_id)
  SELECT runs.workspace_id, t.value, runs.started_at, runs.id FROM runs, json_each(runs.tags) AS t WHERE runs.tags <> '[]';

CREATE TRIGGER runs_count_insert AFTER INSERT ON runs BEGIN${count("NEW", 1)}
END;
CREATE TRIGGER runs_count_insert_tags AFTER INSERT ON runs WHEN NEW.tags <> '[]' BEGIN${countTags("NEW", 1, true)}
END;
CREATE TRIGGER runs_count_delete AFTER DELETE ON runs BEGIN${count("OLD", -1)}
END;
CREATE TRIGGER runs_count_delete_tags AFTER DELETE ON runs WHEN OLD.tags <> '[]' BEGIN${countTags("OLD", -1, true)}
END;
CREATE TRIGGER runs_count_status AFTER UPDATE OF status ON runs WHEN OLD.status IS NOT NEW.status BEGIN${count("OLD", -1)}${count("NEW", 1)}
END;
CREATE TRIGGER runs_count_status_tags AFTER UPDATE OF status, tags ON runs
  WHEN (OLD.status IS NOT NEW.status OR OLD.tags IS NOT NEW.tags) AND (OLD.tags <> '[]' OR NEW.tags <> '[]') BEGIN${countTags("OLD", -1, true)}${countTags("NEW", 1, true)}
END;

DROP INDEX runs_workspace_started;
DROP INDEX runs_workflow_started;
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, id, environment, status, trigger_type);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, id, environment, status, trigger_type);
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms, started_at, id, environment);
CREATE INDEX runs_unfinished ON runs(id) WHERE status IN ('pending', 'running', 'paused');
`,
};
