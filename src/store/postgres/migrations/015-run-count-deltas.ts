/**
 * Migration 8's counters without rows that every writer waits for. Row triggers added each run to the same
 * few counter rows (its workflow's cell and hour, its definition): every batch of every instance locked
 * them until its commit, so the instances' writers took turns, and each run wrote a new version of each
 * row. Now a statement trigger adds a batch's changes per cell, once, as rows of their own (slot: the
 * writing transaction's id, which no other writer shares), and the run writers fold them into slot 0
 * now and then (weft_fold_run_counts, one folder at a time). A count is the sum over its slots, which is
 * what every query of them computes. The rules are migration 8's: a run counts under its status, each
 * distinct tag and its start hour; an update matters when status or tags changed.
 */

/** The advisory lock a fold of the run counts holds (weft_fold_run_counts): "weftfold" in ASCII. */
export const FOLD_LOCK_KEY = 0x7765_6674_666f_6c64n;

export default {
  version: 15,
  name: "run-count-deltas",
  sql: `
DROP TRIGGER runs_count_insert_delete ON runs;
DROP TRIGGER runs_count_update ON runs;
DROP TRIGGER runs_definition_uses ON runs;
DROP FUNCTION weft_run_counts();
DROP FUNCTION weft_definition_uses();

ALTER TABLE run_counts ADD COLUMN slot BIGINT NOT NULL DEFAULT 0;
ALTER TABLE run_counts DROP CONSTRAINT run_counts_pkey;
ALTER TABLE run_counts ADD PRIMARY KEY (workspace_id, environment, workflow_id, status, trigger_type, tag, slot);
CREATE INDEX run_counts_deltas ON run_counts(slot) WHERE slot <> 0;
ALTER TABLE run_hours ADD COLUMN slot BIGINT NOT NULL DEFAULT 0;
ALTER TABLE run_hours DROP CONSTRAINT run_hours_pkey;
ALTER TABLE run_hours ADD PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type, slot);
CREATE INDEX run_hours_deltas ON run_hours(slot) WHERE slot <> 0;
CREATE TABLE run_definition_uses (
  hash TEXT COLLATE "C" NOT NULL,
  slot BIGINT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (hash, slot)
);

-- One run counted (d = 1) or uncounted (d = -1): what a count change needs of it.
CREATE TYPE weft_run_delta AS (
  workspace_id TEXT COLLATE "C",
  environment TEXT COLLATE "C",
  workflow_id TEXT COLLATE "C",
  status TEXT COLLATE "C",
  trigger_type TEXT COLLATE "C",
  tags TEXT COLLATE "C",
  started_at TEXT COLLATE "C",
  id TEXT COLLATE "C",
  definition_hash TEXT COLLATE "C",
  d INTEGER
);

-- Adds a statement's changes, summed per cell, in this transaction's slot (only its own later statements add
-- to the same rows). Static statements: their plans are kept for the session.
CREATE FUNCTION weft_add_run_counts(deltas weft_run_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  tagged boolean;
  untagged boolean;
BEGIN
  IF cardinality(deltas) = 0 THEN RETURN; END IF;
  -- Most batches carry no tags: their tag statements are skipped.
  SELECT bool_or(r.tags <> '[]'), bool_or(r.tags <> '[]' AND r.d = -1) INTO tagged, untagged FROM unnest(deltas) AS r;
  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, '', sum(r.d), txid_current() FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, substr(r.started_at, 1, 13), r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  INSERT INTO run_definition_uses AS u (hash, slot, n)
    SELECT r.definition_hash, txid_current(), sum(r.d) FROM unnest(deltas) AS r GROUP BY 1 HAVING sum(r.d) <> 0
    ON CONFLICT (hash, slot) DO UPDATE SET n = u.n + EXCLUDED.n;
  IF tagged THEN
    INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
      SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, t.tag, sum(r.d), txid_current()
      FROM unnest(deltas) AS r, LATERAL (SELECT DISTINCT value AS tag FROM jsonb_array_elements_text(r.tags::jsonb)) AS t
      WHERE r.tags <> '[]'
      GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
      ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
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

CREATE FUNCTION weft_runs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, 1)::weft_run_delta FROM new_rows));
  RETURN NULL;
END
$$;
CREATE FUNCTION weft_runs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, -1)::weft_run_delta FROM old_rows));
  RETURN NULL;
END
$$;
-- An update matters when status or tags changed: the run is uncounted as it was and counted as it is.
CREATE FUNCTION weft_runs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(
    SELECT ROW(o.workspace_id, o.environment, o.workflow_id, o.status, o.trigger_type, o.tags, o.started_at, o.id, o.definition_hash, -1)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags
    UNION ALL
    SELECT ROW(n.workspace_id, n.environment, n.workflow_id, n.status, n.trigger_type, n.tags, n.started_at, n.id, n.definition_hash, 1)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags));
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_counted_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_inserted();
CREATE TRIGGER runs_counted_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_deleted();
CREATE TRIGGER runs_counted_update AFTER UPDATE ON runs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_updated();

-- Moves the changes in slots other than 0 into slot 0 (and definitions' uses into run_definitions.runs), in
-- one transaction, so readers see the same sums before and after. One folder at a time (the others skip:
-- it folds theirs too); returns the rows folded.
CREATE FUNCTION weft_fold_run_counts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  folded bigint := 0;
  k bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) THEN RETURN 0; END IF;
  WITH gone AS (DELETE FROM run_counts WHERE slot <> 0 RETURNING *)
  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT workspace_id, environment, workflow_id, status, trigger_type, tag, sum(n), 0 FROM gone GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;
  WITH gone AS (DELETE FROM run_hours WHERE slot <> 0 RETURNING *)
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT workspace_id, hour, environment, workflow_id, status, trigger_type, sum(n), 0 FROM gone GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;
  WITH gone AS (DELETE FROM run_definition_uses RETURNING *)
  UPDATE run_definitions AS d SET runs = d.runs + uses.n FROM (SELECT hash, sum(n) AS n FROM gone GROUP BY hash) AS uses WHERE d.hash = uses.hash;
  GET DIAGNOSTICS k = ROW_COUNT;
  RETURN folded + k;
END
$$;
`,
};
