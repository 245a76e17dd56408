/** SQLite's 002-workflows.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 2,
  name: "workflows",
  sql: `
CREATE TABLE folders (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX folders_workspace_name ON folders(workspace_id, lower(name));
CREATE TABLE workflows (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  org_id TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
  name TEXT COLLATE "C" NOT NULL,
  description TEXT COLLATE "C" NOT NULL DEFAULT '',
  definition TEXT COLLATE "C" NOT NULL,
  draft_hash TEXT COLLATE "C" NOT NULL,
  definition_rev BIGINT NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  cron_expression TEXT COLLATE "C",
  webhook_token TEXT COLLATE "C",
  webhook_token_hash TEXT COLLATE "C" UNIQUE,
  latest_version_id TEXT COLLATE "C",
  folder_id TEXT COLLATE "C" REFERENCES folders(id),
  tags TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  test_payloads TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX workflows_workspace ON workflows(workspace_id, updated_at);
CREATE INDEX workflows_folder ON workflows(folder_id);
CREATE INDEX workflows_live ON workflows(status) WHERE status = 'active';
CREATE TABLE workflow_versions (
  id TEXT COLLATE "C" PRIMARY KEY,
  workflow_id TEXT COLLATE "C" NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT COLLATE "C" NOT NULL,
  number BIGINT NOT NULL,
  definition TEXT COLLATE "C" NOT NULL,
  hash TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (workflow_id, number)
);
CREATE TABLE workflow_pinned_data (
  workflow_id TEXT COLLATE "C" NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  step_name TEXT COLLATE "C" NOT NULL,
  data TEXT COLLATE "C" NOT NULL,
  stamp TEXT COLLATE "C" NOT NULL,
  pinned_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workflow_id, step_name)
);
CREATE TABLE workflow_variables (
  workflow_id TEXT COLLATE "C" NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  name TEXT COLLATE "C" NOT NULL,
  value TEXT COLLATE "C" NOT NULL,
  secret INTEGER NOT NULL DEFAULT 0,
  description TEXT COLLATE "C" NOT NULL DEFAULT '',
  updated_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (workflow_id, name)
);
CREATE TABLE templates (
  id TEXT COLLATE "C" PRIMARY KEY,
  workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
  name TEXT COLLATE "C" NOT NULL,
  description TEXT COLLATE "C" NOT NULL DEFAULT '',
  category TEXT COLLATE "C" NOT NULL DEFAULT 'custom',
  definition TEXT COLLATE "C" NOT NULL,
  source_workflow_id TEXT COLLATE "C",
  created_by TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX templates_workspace ON templates(workspace_id, created_at);
`,
};
