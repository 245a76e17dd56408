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
import { FOLD_LOCK_KEY } from "./015-run-count-deltas";

/** Moves the rows of `table` in slots other than 0 into slot 0 (its cells: the workspace and `cells`), counting them in `folded`. */
export const fold = (table: string, cells: string[]) => `  WITH gone AS (DELETE FROM ${table} WHERE slot <> 0 RETURNING *)
  INSERT INTO ${table} AS c (workspace_id, ${cells.join(", ")}, n, slot)
    SELECT workspace_id, ${cells.join(", ")}, sum(n), 0 FROM gone GROUP BY ${cells.map((_, i) => i + 1).join(", ")}, ${cells.length + 1}
    ON CONFLICT (workspace_id, ${cells.join(", ")}, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;`;

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
  environment SMALLINT NOT NULL,
  workflow_id INTEGER NOT NULL,
  status SMALLINT NOT NULL,
  trigger_type INTEGER NOT NULL,
  n BIGINT NOT NULL,
  slot BIGINT NOT NULL DEFAULT 0,
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

export default {
  version: 25,
  name: "run-tag-counts",
  sql: `${create("run_tag_hours")}
${create("run_tag_durations")}

CREATE OR REPLACE FUNCTION weft_add_run_counts(deltas weft_run_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  tagged boolean;
  untagged boolean;
BEGIN
  IF cardinality(deltas) = 0 THEN RETURN; END IF;
  SELECT bool_or(r.tags <> '[]'), bool_or(r.tags <> '[]' AND r.d = -1) INTO tagged, untagged FROM unnest(deltas) AS r;
  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, '', sum(r.d), txid_current() FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, r.started_at / 3600000, r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  INSERT INTO run_durations AS b (workspace_id, bucket, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, weft_duration_bucket(r.duration_ms), r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, bucket, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = b.n + EXCLUDED.n;
  INSERT INTO run_definition_uses AS u (hash, slot, n)
    SELECT n.name, txid_current(), sum(r.d) FROM unnest(deltas) AS r JOIN run_names n ON n.key = r.definition_hash
    GROUP BY 1 HAVING sum(r.d) <> 0
    ON CONFLICT (hash, slot) DO UPDATE SET n = u.n + EXCLUDED.n;
  IF tagged THEN
    INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
      SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, t.tag, sum(r.d), txid_current()
      FROM unnest(deltas) AS r, LATERAL (SELECT DISTINCT value AS tag FROM jsonb_array_elements_text(r.tags::jsonb)) AS t
      WHERE r.tags <> '[]'
      GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
      ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
${addTagged("run_tag_hours")}${addTagged("run_tag_durations")}
    IF untagged THEN
      DELETE FROM run_tags AS t USING (SELECT DISTINCT r.workspace_id, v.value AS tag, r.started_at, r.id
          FROM unnest(deltas) AS r, jsonb_array_elements_text(r.tags::jsonb) AS v WHERE r.d = -1 AND r.tags <> '[]') AS gone
        WHERE t.workspace_id = gone.workspace_id AND t.tag = gone.tag AND t.started_at = gone.started_at AND t.run_id = gone.id;
    END IF;
    INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
      SELECT r.workspace_id, v.value, r.started_at, r.id
      FROM unnest(deltas) AS r, jsonb_array_elements_text(r.tags::jsonb) AS v WHERE r.d = 1 AND r.tags <> '[]'
      ON CONFLICT DO NOTHING;
  END IF;
END
$$;

-- Migration 24's fold, run_tag_hours' and run_tag_durations' slots included.
CREATE OR REPLACE FUNCTION weft_fold_run_counts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  folded bigint := 0;
  k bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) THEN RETURN 0; END IF;
${fold("run_counts", ["environment", "workflow_id", "status", "trigger_type", "tag"])}
${fold("run_hours", ["hour", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_durations", ["bucket", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_tag_hours", ["tag", "hour", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_tag_durations", ["tag", "bucket", "environment", "workflow_id", "status", "trigger_type"])}
  WITH gone AS (DELETE FROM run_definition_uses RETURNING *)
  UPDATE run_definitions AS d SET runs = d.runs + uses.n FROM (SELECT hash, sum(n) AS n FROM gone GROUP BY hash) AS uses WHERE d.hash = uses.hash;
  GET DIAGNOSTICS k = ROW_COUNT;
  RETURN folded + k;
END
$$;
`,
};
