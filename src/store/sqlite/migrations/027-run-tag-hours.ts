/**
 * Deep pages of the tag filter (docs/operations.md, "run_tag_hours (migration 27)"): counts of tagged runs per
 * hour, kept as run_hours' counts of every run are.
 *
 * - `run_tag_hours`: runs per (workspace, tag, hour, environment, workflow, status, trigger type), `slot` as in
 *   run_hours (migration 15: always 0 on SQLite). A run counts once under each distinct tag it carries, as in
 *   run_counts' tag rows (migration 8); the hour is started_at / 3,600,000, as run_hours'. A tag page sums the
 *   tag's hours from the nearer end of the list and walks run_tags only within the hours holding the page
 *   (RunStore.taggedPage).
 * - Triggers keep it in the same transaction as every insert and deletion of a tagged run and every change of
 *   a run's status or tags, as migration 018's keep run_counts' tag rows. The workspace, environment, workflow,
 *   trigger type and start of a stored run never change (migration 008).
 *
 * Existing tagged runs are counted once, by one GROUP BY over run_tags joined to their runs (run_tags holds one
 * row per distinct tag of a run).
 */
const cellOf = (row: "NEW" | "OLD") =>
  `${row}.workspace_id, value, ${row}.started_at / 3600000, ${row}.environment, ${row}.workflow_id, ${row}.status, ${row}.trigger_type`;

const add = (row: "NEW" | "OLD") => `
  INSERT INTO run_tag_hours (workspace_id, tag, hour, environment, workflow_id, status, trigger_type, n)
    SELECT ${cellOf(row)}, 1 FROM (SELECT DISTINCT value FROM json_each(${row}.tags)) WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;`;
const remove = (row: "NEW" | "OLD") => `
  UPDATE run_tag_hours SET n = n - 1 WHERE workspace_id = ${row}.workspace_id AND tag IN (SELECT value FROM json_each(${row}.tags))
    AND hour = ${row}.started_at / 3600000 AND environment = ${row}.environment AND workflow_id = ${row}.workflow_id
    AND status = ${row}.status AND trigger_type = ${row}.trigger_type AND slot = 0;`;

export default {
  version: 27,
  name: "run-tag-hours",
  sql: `
CREATE TABLE run_tag_hours (
  workspace_id INTEGER NOT NULL,
  tag TEXT NOT NULL,
  hour INTEGER NOT NULL,
  environment INTEGER NOT NULL,
  workflow_id INTEGER NOT NULL,
  status INTEGER NOT NULL,
  trigger_type INTEGER NOT NULL,
  n INTEGER NOT NULL,
  slot INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, tag, hour, environment, workflow_id, status, trigger_type, slot)
) WITHOUT ROWID;
CREATE INDEX run_tag_hours_deltas ON run_tag_hours(slot) WHERE slot <> 0;
INSERT INTO run_tag_hours (workspace_id, tag, hour, environment, workflow_id, status, trigger_type, n, slot)
  SELECT t.workspace_id, t.tag, r.started_at / 3600000, r.environment, r.workflow_id, r.status, r.trigger_type, count(*), 0
  FROM run_tags AS t JOIN runs AS r ON r.id = t.run_id
  GROUP BY 1, 2, 3, 4, 5, 6, 7;

CREATE TRIGGER runs_tag_hours_insert AFTER INSERT ON runs WHEN NEW.tags <> '[]' BEGIN${add("NEW")}
END;
CREATE TRIGGER runs_tag_hours_delete AFTER DELETE ON runs WHEN OLD.tags <> '[]' BEGIN${remove("OLD")}
END;
CREATE TRIGGER runs_tag_hours_update AFTER UPDATE OF status, tags ON runs
  WHEN (OLD.status IS NOT NEW.status OR OLD.tags IS NOT NEW.tags) AND (OLD.tags <> '[]' OR NEW.tags <> '[]') BEGIN${remove("OLD")}${add("NEW")}
END;
`,
};
