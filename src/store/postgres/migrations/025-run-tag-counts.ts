/**
 * As SQLite's 025 (../../sqlite/migrations/025-run-tag-counts.ts): `run_tag_hours` and `run_tag_durations` count runs
 * per (workspace, tag, hour or duration bucket, environment, workflow, status, trigger type), once under each
 * distinct tag a run carries, kept as run_hours and run_durations are since migrations 15 and 24: the statement
 * triggers add each statement's changes per cell in the writing transaction's slot (weft_add_run_counts, only for
 * statements that touch tagged runs), and weft_fold_run_counts folds them into slot 0. A run counts again when its
 * status, its tags or its duration changed (a cell that did not change sums to 0 and is not written).
 *
 * The two functions are made again with the two tables added (migration 24's otherwise, unchanged). The whole
 * migration is one transaction.
 */
import { COUNTED } from "./019-compact-runs-postgres";
import { addRunCounts, countPer, fold, foldRunCounts } from "./015-run-count-deltas";

/** Each table's column after the tag, its type and its value for a run (`r`: a run row or a weft_run_delta). */
const KEYS = {
  run_tag_hours: { column: "hour", type: "INTEGER", of: (r: string) => `${r}.started_at / 3600000` },
  run_tag_durations: { column: "bucket", type: "BIGINT", of: (r: string) => `weft_duration_bucket(${r}.duration_ms)` },
} as const;
type Table = keyof typeof KEYS;

const create = (table: Table) => `
CREATE TABLE ${table} (
  workspace_id INTEGER NOT NULL,
  tag TEXT COLLATE "C" NOT NULL,
  ${KEYS[table].column} ${KEYS[table].type} NOT NULL,
${COUNTED}
  PRIMARY KEY (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, slot)
);
CREATE INDEX ${table}_deltas ON ${table}(slot) WHERE slot <> 0;
INSERT INTO ${table} (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, n, slot)
  SELECT t.workspace_id, t.tag, ${KEYS[table].of("r")}, r.environment, r.workflow_id, r.status, r.trigger_type, count(*), 0
  FROM run_tags AS t JOIN runs AS r ON r.id = t.run_id
  GROUP BY 1, 2, 3, 4, 5, 6, 7;`;

/** A statement's changes to `table` (inside weft_add_run_counts: `deltas`, this transaction's slot). */
const addTagged = (table: Table) => `
    INSERT INTO ${table} AS g (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, n, slot)
      SELECT r.workspace_id, t.tag, ${KEYS[table].of("r")}, r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
      FROM unnest(deltas) AS r, LATERAL (SELECT DISTINCT value AS tag FROM jsonb_array_elements_text(r.tags::jsonb)) AS t
      WHERE r.tags <> '[]'
      GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(r.d) <> 0
      ON CONFLICT (workspace_id, tag, ${KEYS[table].column}, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = g.n + EXCLUDED.n;`;

/** This migration's folds, one per kept-count table (migration 26 adds one). */
export const FOLDS = `${fold("run_counts", ["environment", "workflow_id", "status", "trigger_type", "tag"])}
${fold("run_hours", ["hour", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_durations", ["bucket", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_tag_hours", ["tag", "hour", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_tag_durations", ["tag", "bucket", "environment", "workflow_id", "status", "trigger_type"])}`;

export default {
  version: 25,
  name: "run-tag-counts",
  sql: `${create("run_tag_hours")}
${create("run_tag_durations")}

${addRunCounts(
  "CREATE OR REPLACE",
  `${countPer("run_hours", "h", "hour", "r.started_at / 3600000")}
${countPer("run_durations", "b", "bucket", "weft_duration_bucket(r.duration_ms)")}`,
  `
${addTagged("run_tag_hours")}${addTagged("run_tag_durations")}`,
)}

-- Migration 24's fold, run_tag_hours' and run_tag_durations' slots included.
${foldRunCounts("CREATE OR REPLACE", FOLDS)}
`,
};
