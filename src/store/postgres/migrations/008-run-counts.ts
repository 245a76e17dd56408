/**
 * Triggers are one PL/pgSQL function per event instead of SQLite's trigger bodies; tags are read with
 * jsonb_array_elements_text where SQLite uses json_each. Concurrent writers (a cluster) update the same
 * count rows and wait on each other's row locks until commit; one instance has one run writer.
 */
export default {
  version: 8,
  name: "run-counts",
  sql: `
CREATE TABLE run_counts (
  workspace_id TEXT COLLATE "C" NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  workflow_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  tag TEXT COLLATE "C" NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (workspace_id, environment, workflow_id, status, trigger_type, tag)
);
CREATE TABLE run_hours (
  workspace_id TEXT COLLATE "C" NOT NULL,
  hour TEXT COLLATE "C" NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  workflow_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type)
);
CREATE TABLE run_tags (
  workspace_id TEXT COLLATE "C" NOT NULL,
  tag TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  run_id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workspace_id, tag, started_at, run_id)
);

INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
  SELECT workspace_id, environment, workflow_id, status, trigger_type, '', count(*) FROM runs
  GROUP BY workspace_id, environment, workflow_id, status, trigger_type;
INSERT INTO run_counts (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
  SELECT runs.workspace_id, runs.environment, runs.workflow_id, runs.status, runs.trigger_type, t.value, count(DISTINCT runs.id)
  FROM runs, jsonb_array_elements_text(runs.tags::jsonb) AS t(value) WHERE runs.tags <> '[]'
  GROUP BY runs.workspace_id, runs.environment, runs.workflow_id, runs.status, runs.trigger_type, t.value;
INSERT INTO run_hours (workspace_id, hour, environment, workflow_id, status, trigger_type, n)
  SELECT workspace_id, substr(started_at, 1, 13), environment, workflow_id, status, trigger_type, count(*) FROM runs
  GROUP BY workspace_id, substr(started_at, 1, 13), environment, workflow_id, status, trigger_type;
INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
  SELECT runs.workspace_id, t.value, runs.started_at, runs.id FROM runs, jsonb_array_elements_text(runs.tags::jsonb) AS t(value)
  WHERE runs.tags <> '[]' ON CONFLICT DO NOTHING;

CREATE FUNCTION weft_run_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE run_counts SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND environment = OLD.environment
      AND workflow_id = OLD.workflow_id AND status = OLD.status AND trigger_type = OLD.trigger_type
      AND (tag = '' OR (OLD.tags <> '[]' AND tag IN (SELECT jsonb_array_elements_text(OLD.tags::jsonb))));
    UPDATE run_hours SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND hour = substr(OLD.started_at, 1, 13)
      AND environment = OLD.environment AND workflow_id = OLD.workflow_id AND status = OLD.status AND trigger_type = OLD.trigger_type;
    IF OLD.tags <> '[]' THEN
      DELETE FROM run_tags WHERE workspace_id = OLD.workspace_id AND tag IN (SELECT jsonb_array_elements_text(OLD.tags::jsonb))
        AND started_at = OLD.started_at AND run_id = OLD.id;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
      VALUES (NEW.workspace_id, NEW.environment, NEW.workflow_id, NEW.status, NEW.trigger_type, '', 1)
      ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag) DO UPDATE SET n = c.n + 1;
    INSERT INTO run_hours AS h (workspace_id, hour, environment, workflow_id, status, trigger_type, n)
      VALUES (NEW.workspace_id, substr(NEW.started_at, 1, 13), NEW.environment, NEW.workflow_id, NEW.status, NEW.trigger_type, 1)
      ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type) DO UPDATE SET n = h.n + 1;
    IF NEW.tags <> '[]' THEN
      INSERT INTO run_counts AS c (workspace_id, environment, workflow_id, status, trigger_type, tag, n)
        SELECT DISTINCT NEW.workspace_id, NEW.environment, NEW.workflow_id, NEW.status, NEW.trigger_type, t, 1
        FROM jsonb_array_elements_text(NEW.tags::jsonb) AS t
        ON CONFLICT (workspace_id, environment, workflow_id, status, trigger_type, tag) DO UPDATE SET n = c.n + 1;
      INSERT INTO run_tags (workspace_id, tag, started_at, run_id)
        SELECT NEW.workspace_id, t, NEW.started_at, NEW.id FROM jsonb_array_elements_text(NEW.tags::jsonb) AS t
        ON CONFLICT DO NOTHING;
    END IF;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_count_insert_delete AFTER INSERT OR DELETE ON runs FOR EACH ROW EXECUTE FUNCTION weft_run_counts();
CREATE TRIGGER runs_count_update AFTER UPDATE OF status, tags ON runs FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION weft_run_counts();

DROP INDEX runs_workspace_started;
DROP INDEX runs_workflow_started;
CREATE INDEX runs_workspace_started ON runs(workspace_id, started_at, id, environment, status, trigger_type);
CREATE INDEX runs_workflow_started ON runs(workflow_id, started_at, id, environment, status, trigger_type);
CREATE INDEX runs_workspace_duration ON runs(workspace_id, duration_ms NULLS FIRST, started_at, id, environment);
CREATE INDEX runs_unfinished ON runs(id) WHERE status IN ('pending', 'running', 'paused');
`,
};
