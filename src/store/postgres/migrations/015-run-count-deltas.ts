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

// What the run-count migrations (15, 19, 24, 25, 26) each make again is written once below; the SQL every shipped
// version produces is pinned by test/store/migration-freeze.test.ts, so a change here for a new migration shows.

/** weft_add_run_counts' declarations and its first guard: nothing to add for no runs. */
export const ADD_RUN_COUNTS_START = `DECLARE
  tagged boolean;
  untagged boolean;
BEGIN
  IF cardinality(deltas) = 0 THEN RETURN; END IF;`;

/** A statement's runs counted under no tag ('') in run_counts (inside weft_add_run_counts: `deltas`). */
export const COUNT_UNTAGGED = `  INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
    SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, '', sum(r.d), txid_current() FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;`;

/** A statement's runs counted in `table` (as `alias`) per `column` (its value for a run `r`: `value`) and the usual cells. */
export const countPer = (table: string, alias: string, column: string, value: string) =>
  `  INSERT INTO ${table} AS ${alias} (workspace_id, ${column}, environment, workflow_id, status, trigger_type, n, slot)
    SELECT r.workspace_id, ${value}, r.environment, r.workflow_id, r.status, r.trigger_type, sum(r.d), txid_current()
    FROM unnest(deltas) AS r
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
    ON CONFLICT (workspace_id, ${column}, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = ${alias}.n + EXCLUDED.n;`;

/** A statement's tagged runs counted once under each distinct tag in run_counts. */
export const COUNT_TAGGED = `    INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n, slot)
      SELECT r.workspace_id, r.environment, r.workflow_id, r.status, r.trigger_type, t.tag, sum(r.d), txid_current()
      FROM unnest(deltas) AS r, LATERAL (SELECT DISTINCT value AS tag FROM jsonb_array_elements_text(r.tags::jsonb)) AS t
      WHERE r.tags <> '[]'
      GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(r.d) <> 0
      ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag, slot) DO UPDATE SET n = c.n + EXCLUDED.n;`;

/** run_tags kept with the statement's tagged runs: an uncounted run's tags removed, a counted run's added. */
export const KEEP_RUN_TAGS = `    IF untagged THEN
      DELETE FROM run_tags AS t USING (SELECT DISTINCT r.workspace_id, v.value AS tag, r.started_at, r.id
          FROM unnest(deltas) AS r, jsonb_array_elements_text(r.tags::jsonb) AS v WHERE r.d = -1 AND r.tags <> '[]') AS gone
        WHERE t.workspace_id = gone.workspace_id AND t.tag = gone.tag AND t.started_at = gone.started_at AND t.run_id = gone.id;
    END IF;
    INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
      SELECT r.workspace_id, v.value, r.started_at, r.id
      FROM unnest(deltas) AS r, jsonb_array_elements_text(r.tags::jsonb) AS v WHERE r.d = 1 AND r.tags <> '[]'
      ON CONFLICT DO NOTHING;`;

/** A statement's runs counted in run_definition_uses, by definition hash (since migration 19, from run_names' keys). */
export const COUNT_DEFINITION_USES = `  INSERT INTO run_definition_uses AS u (hash, slot, n)
    SELECT n.name, txid_current(), sum(r.d) FROM unnest(deltas) AS r JOIN run_names n ON n.key = r.definition_hash
    GROUP BY 1 HAVING sum(r.d) <> 0
    ON CONFLICT (hash, slot) DO UPDATE SET n = u.n + EXCLUDED.n;`;

/**
 * weft_add_run_counts as migrations 19, 24 and 25 make it (`create`: CREATE or CREATE OR REPLACE): every run under
 * no tag, then `perCell` (the per-hour, per-bucket counts), the definitions' uses, and for tagged runs each tag,
 * then `tagged` (more per-tag counts), then run_tags.
 */
export const addRunCounts = (
  create: string,
  perCell: string,
  tagged = "",
) => `${create} FUNCTION weft_add_run_counts(deltas weft_run_delta[]) RETURNS void LANGUAGE plpgsql AS $$
${ADD_RUN_COUNTS_START}
  SELECT bool_or(r.tags <> '[]'), bool_or(r.tags <> '[]' AND r.d = -1) INTO tagged, untagged FROM unnest(deltas) AS r;
${COUNT_UNTAGGED}
${perCell}
${COUNT_DEFINITION_USES}
  IF tagged THEN
${COUNT_TAGGED}${tagged}
${KEEP_RUN_TAGS}
  END IF;
END
$$;`;

/** The statement trigger function `name` (`create`: CREATE or CREATE OR REPLACE): each of `rows` counted `d` (1 or -1); `more`, the delta's attributes after d. */
export const countRows = (
  create: string,
  name: string,
  d: number,
  rows: string,
  more = "",
) => `${create} FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(SELECT ROW(workspace_id, environment, workflow_id, status, trigger_type, tags, started_at, id,
    definition_hash, ${d}${more})::weft_run_delta FROM ${rows}));
  RETURN NULL;
END
$$;`;

/** Migration 15's update trigger function: a run whose status or tags changed is uncounted as it was and counted as it is. */
export const RUNS_UPDATED = `CREATE FUNCTION weft_runs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM weft_add_run_counts(ARRAY(
    SELECT ROW(o.workspace_id, o.environment, o.workflow_id, o.status, o.trigger_type, o.tags, o.started_at, o.id, o.definition_hash, -1)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags
    UNION ALL
    SELECT ROW(n.workspace_id, n.environment, n.workflow_id, n.status, n.trigger_type, n.tags, n.started_at, n.id, n.definition_hash, 1)::weft_run_delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR o.tags IS DISTINCT FROM n.tags));
  RETURN NULL;
END
$$;`;

/** The three statement triggers on runs that call the functions above. */
export const RUN_COUNT_TRIGGERS = `CREATE TRIGGER runs_counted_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_inserted();
CREATE TRIGGER runs_counted_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_deleted();
CREATE TRIGGER runs_counted_update AFTER UPDATE ON runs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION weft_runs_updated();`;

/** Moves the rows of `table` in slots other than 0 into slot 0 (its cells: the workspace and `cells`), counting them in `folded`. */
export const fold = (table: string, cells: string[]) => `  WITH gone AS (DELETE FROM ${table} WHERE slot <> 0 RETURNING *)
  INSERT INTO ${table} AS c (workspace_id, ${cells.join(", ")}, n, slot)
    SELECT workspace_id, ${cells.join(", ")}, sum(n), 0 FROM gone GROUP BY ${cells.map((_, i) => i + 1).join(", ")}, ${cells.length + 1}
    ON CONFLICT (workspace_id, ${cells.join(", ")}, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;`;

/** weft_fold_run_counts (`create`: CREATE or CREATE OR REPLACE): `folds` (each kept-count table's), then the definitions' uses. */
export const foldRunCounts = (create: string, folds: string) => `${create} FUNCTION weft_fold_run_counts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  folded bigint := 0;
  k bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) THEN RETURN 0; END IF;
${folds}
  WITH gone AS (DELETE FROM run_definition_uses RETURNING *)
  UPDATE run_definitions AS d SET runs = d.runs + uses.n FROM (SELECT hash, sum(n) AS n FROM gone GROUP BY hash) AS uses WHERE d.hash = uses.hash;
  GET DIAGNOSTICS k = ROW_COUNT;
  RETURN folded + k;
END
$$;`;

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
${ADD_RUN_COUNTS_START}
  -- Most batches carry no tags: their tag statements are skipped.
  SELECT bool_or(r.tags <> '[]'), bool_or(r.tags <> '[]' AND r.d = -1) INTO tagged, untagged FROM unnest(deltas) AS r;
${COUNT_UNTAGGED}
${countPer("run_hours", "h", "hour", "substr(r.started_at, 1, 13)")}
  INSERT INTO run_definition_uses AS u (hash, slot, n)
    SELECT r.definition_hash, txid_current(), sum(r.d) FROM unnest(deltas) AS r GROUP BY 1 HAVING sum(r.d) <> 0
    ON CONFLICT (hash, slot) DO UPDATE SET n = u.n + EXCLUDED.n;
  IF tagged THEN
${COUNT_TAGGED}
${KEEP_RUN_TAGS}
  END IF;
END
$$;

${countRows("CREATE", "weft_runs_inserted", 1, "new_rows")}
${countRows("CREATE", "weft_runs_deleted", -1, "old_rows")}
-- An update matters when status or tags changed: the run is uncounted as it was and counted as it is.
${RUNS_UPDATED}
${RUN_COUNT_TRIGGERS}

-- Moves the changes in slots other than 0 into slot 0 (and definitions' uses into run_definitions.runs), in
-- one transaction, so readers see the same sums before and after. One folder at a time (the others skip:
-- it folds theirs too); returns the rows folded.
${foldRunCounts(
  "CREATE",
  `${fold("run_counts", ["environment", "workflow_id", "status", "trigger_type", "tag"])}
  WITH gone AS (DELETE FROM run_hours WHERE slot <> 0 RETURNING *)
  INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n, slot)
    SELECT workspace_id, hour, environment, workflow_id, status, trigger_type, sum(n), 0 FROM gone GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = h.n + EXCLUDED.n;
  GET DIAGNOSTICS k = ROW_COUNT;
  folded := folded + k;`,
)}
`,
};
