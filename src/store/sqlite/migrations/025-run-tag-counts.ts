/**
 * Deep pages of the tag filter (docs/operations.md, "run_tag_hours (migration 25)"): counts of tagged runs per hour
 * and per duration bucket, kept as run_hours' and run_durations' counts of every run are.
 *
 * - `run_tag_hours`: runs per (workspace, tag, hour, environment, workflow, status, trigger type), `slot` as in
 *   run_hours (migration 15: always 0 on SQLite). A run counts once under each distinct tag it carries, as in
 *   run_counts' tag rows (migration 8); the hour is started_at / 3,600,000, as run_hours'. A time-sorted tag page
 *   sums the tag's hours from the nearer end of the list and walks run_tags only within the hours holding the page
 *   (RunStore.taggedPage).
 * - `run_tag_durations`: the same per duration bucket instead of hour (the buckets of run_durations, migration 024).
 *   A tag page of sort=duration sums the tag's buckets from the nearer end and walks the duration index only from
 *   the bucket holding the page.
 * - Triggers keep both in the same transaction as every insert and deletion of a tagged run and every change of a
 *   run's status or tags (and, for the buckets, its duration), as migrations 018 and 024 keep run_counts' tag rows
 *   and run_durations. The workspace, environment, workflow, trigger type and start of a stored run never change
 *   (migration 008).
 *
 * Existing tagged runs are counted once, by one GROUP BY per table over run_tags joined to their runs (run_tags holds
 * one row per distinct tag of a run).
 */
import { COUNTED } from "./018-compact-runs";
import { BUCKET } from "./024-run-durations";

/** The column of the table (`hour` or `bucket`) and its value for a run as `row` (NEW or OLD) has it. */
const KEYS = {
  run_tag_hours: { column: "hour", of: (row: string) => `${row}.started_at / 3600000` },
  run_tag_durations: { column: "bucket", of: (row: string) => BUCKET(`${row}.duration_ms`) },
} as const;
type Table = keyof typeof KEYS;

/** Counts a run (+1) under each distinct tag it carries, as `row` has it. */
const add = (table: Table, row: "NEW" | "OLD") => `
  INSERT INTO ${table} (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, n)
    SELECT ${row}.workspace_id, value, ${KEYS[table].of(row)}, ${row}.environment, ${row}.workflow_id, ${row}.status, ${row}.trigger_type, 1
    FROM (SELECT DISTINCT value FROM json_each(${row}.tags)) WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;`;
/** Takes a run away (-1) from each tag it carries, as `row` has it. */
const remove = (table: Table, row: "NEW" | "OLD") => `
  UPDATE ${table} SET n = n - 1 WHERE workspace_id = ${row}.workspace_id AND tag IN (SELECT value FROM json_each(${row}.tags))
    AND ${KEYS[table].column} = ${KEYS[table].of(row)} AND environment = ${row}.environment AND workflow_id = ${row}.workflow_id
    AND status = ${row}.status AND trigger_type = ${row}.trigger_type AND slot = 0;`;

const create = (table: Table) => `
CREATE TABLE ${table} (
  workspace_id INTEGER NOT NULL,
  tag TEXT NOT NULL,
  ${KEYS[table].column} INTEGER NOT NULL,
${COUNTED}
  PRIMARY KEY (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, slot)
) WITHOUT ROWID;
CREATE INDEX ${table}_deltas ON ${table}(slot) WHERE slot <> 0;
INSERT INTO ${table} (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, n, slot)
  SELECT t.workspace_id, t.tag, ${KEYS[table].of("r")}, r.environment, r.workflow_id, r.status, r.trigger_type, count(*), 0
  FROM run_tags AS t JOIN runs AS r ON r.id = t.run_id
  GROUP BY 1, 2, 3, 4, 5, 6, 7;`;

export default {
  version: 25,
  name: "run-tag-counts",
  sql: `${create("run_tag_hours")}
${create("run_tag_durations")}

CREATE TRIGGER runs_tag_counts_insert AFTER INSERT ON runs WHEN NEW.tags <> '[]' BEGIN${add("run_tag_hours", "NEW")}${add("run_tag_durations", "NEW")}
END;
CREATE TRIGGER runs_tag_counts_delete AFTER DELETE ON runs WHEN OLD.tags <> '[]' BEGIN${remove("run_tag_hours", "OLD")}${remove("run_tag_durations", "OLD")}
END;
CREATE TRIGGER runs_tag_hours_update AFTER UPDATE OF status, tags ON runs
  WHEN (OLD.status IS NOT NEW.status OR OLD.tags IS NOT NEW.tags) AND (OLD.tags <> '[]' OR NEW.tags <> '[]') BEGIN${remove("run_tag_hours", "OLD")}${add("run_tag_hours", "NEW")}
END;
CREATE TRIGGER runs_tag_durations_update AFTER UPDATE OF status, tags, duration_ms ON runs
  WHEN (OLD.status IS NOT NEW.status OR OLD.tags IS NOT NEW.tags OR OLD.duration_ms IS NOT NEW.duration_ms) AND (OLD.tags <> '[]' OR NEW.tags <> '[]')
  BEGIN${remove("run_tag_durations", "OLD")}${add("run_tag_durations", "NEW")}
END;
`,
};
