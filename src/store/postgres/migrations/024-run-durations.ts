/**
 * As SQLite's 024 (../../sqlite/migrations/024-run-durations.ts): `run_durations` counts runs per duration bucket
 * (two significant digits of duration_ms; no duration -9007199254740991, a negative one -9007199254740990), kept
 * as run_hours is since migration 15: the statement triggers add each statement's changes per cell in the writing
 * transaction's slot, and weft_fold_run_counts folds them into slot 0. A run counts again when its status or its
 * duration changed (it is given one when it finishes). `runs_workspace_duration` covers status, trigger type and
 * workflow (INCLUDE: the order of its keys, and so of the list, is unchanged), so a filtered walk of it reads no
 * run row.
 *
 * weft_run_delta gains the run's duration, so the trigger functions that build it are made again (same rules
 * otherwise). The whole migration is one transaction.
 */
import { COUNTED } from "./019-compact-runs-postgres";
import { addRunCounts, countPer, countRows, fold, foldRunCounts } from "./015-run-count-deltas";

/** A duration (the BIGINT expression `d`) as its bucket's key: the same buckets as SQLite's. */
const BUCKET = (d: string) => {
  const cuts: string[] = [];
  for (let k = 2; k <= 17; k++) cuts.push(`WHEN ${d} < 1${"0".repeat(k + 1)} THEN ${d} / 1${"0".repeat(k - 1)} * 1${"0".repeat(k - 1)}`);
  return `CASE WHEN ${d} IS NULL THEN -9007199254740991 WHEN ${d} < 0 THEN -9007199254740990 WHEN ${d} < 100 THEN ${d}
    ${cuts.join("\n    ")}
    ELSE ${d} / 100000000000000000 * 100000000000000000 END`;
};

/** What makes a run count again when updated (its cells: status, tags, duration). */
const CHANGED = "o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags OR o.duration_ms IS DISTINCT FROM n.duration_ms";

export default {
  version: 24,
  name: "run-durations",
  sql: `
CREATE TABLE run_durations (
  workspace_id INTEGER NOT NULL,
  bucket BIGINT NOT NULL,
${COUNTED}
  PRIMARY KEY (workspace_id, bucket, environment, workflow_id, status, trigger_type, slot)
);
CREATE INDEX run_durations_deltas ON run_durations(slot) WHERE slot <> 0;
INSERT INTO run_durations (workspace_id, bucket, environment, workflow_id, status, trigger_type, n, slot)
  SELECT workspace_id, ${BUCKET("duration_ms")}, environment, workflow_id, status, trigger_type, count(*), 0 FROM runs
  GROUP BY 1, 2, 3, 4, 5, 6;

CREATE FUNCTION weft_duration_bucket(d BIGINT) RETURNS BIGINT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ${BUCKET("d")}
$$;

ALTER TYPE weft_run_delta ADD ATTRIBUTE duration_ms BIGINT;

${addRunCounts(
  "CREATE OR REPLACE",
  `${countPer("run_hours", "h", "hour", "r.started_at / 3600000")}
${countPer("run_durations", "b", "bucket", "weft_duration_bucket(r.duration_ms)")}`,
)}

${countRows("CREATE OR REPLACE", "weft_runs_inserted", 1, "new_rows", ", duration_ms")}
${countRows("CREATE OR REPLACE", "weft_runs_deleted", -1, "old_rows", ", duration_ms")}
-- An update matters when status, tags or duration changed: the run is uncounted as it was and counted as it is.
CREATE OR REPLACE FUNCTION weft_runs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(
    SELECT ROW(o.workspace_id, o.environment, o.workflow_id, o.status, o.trigger_type, o.tags, o.started_at, o.id, o.definition_hash, -1,
        o.duration_ms)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${CHANGED}
    UNION ALL
    SELECT ROW(n.workspace_id, n.environment, n.workflow_id, n.status, n.trigger_type, n.tags, n.started_at, n.id, n.definition_hash, 1,
        n.duration_ms)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${CHANGED}));
  RETURN NULL;
END
$$;

-- Migration 15's fold, run_durations' slots included.
${foldRunCounts(
  "CREATE OR REPLACE",
  `${fold("run_counts", ["environment", "workflow_id", "status", "trigger_type", "tag"])}
${fold("run_hours", ["hour", "environment", "workflow_id", "status", "trigger_type"])}
${fold("run_durations", ["bucket", "environment", "workflow_id", "status", "trigger_type"])}`,
)}

DROP INDEX runs_workspace_duration;
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms NULLS FIRST, environment, seq)
  INCLUDE (status, trigger_type, workflow_id) WITH (fillfactor = 100);
`,
};
