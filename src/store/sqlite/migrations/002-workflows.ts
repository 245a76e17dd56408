export default {
  version: 2,
  name: "workflows",
  sql: `
CREATE TABLE folders (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX folders_workspace_name ON folders(workspace_id, name COLLATE NOCASE);
CREATE TABLE workflows (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  definition TEXT NOT NULL,
  draft_hash TEXT NOT NULL,
  definition_rev INTEGER NOT NULL,
  status TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  cron_expression TEXT,
  webhook_token TEXT,
  webhook_token_hash TEXT UNIQUE,
  latest_version_id TEXT,
  folder_id TEXT REFERENCES folders(id),
  tags TEXT NOT NULL DEFAULT '[]',
  test_payloads TEXT NOT NULL DEFAULT '{}',
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX workflows_workspace ON workflows(workspace_id, updated_at);
CREATE INDEX workflows_folder ON workflows(folder_id);
CREATE INDEX workflows_live ON workflows(status) WHERE status = 'active';
CREATE TABLE workflow_versions (
  id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  workspace_id TEXT NOT NULL,
  number INTEGER NOT NULL,
  definition TEXT NOT NULL,
  hash TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (workflow_id, number)
);
CREATE TABLE workflow_pinned_data (
  workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  step_name TEXT NOT NULL,
  data TEXT NOT NULL,
  stamp TEXT NOT NULL,
  pinned_at TEXT NOT NULL,
  PRIMARY KEY (workflow_id, step_name)
);
CREATE TABLE workflow_variables (
  workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  secret INTEGER NOT NULL DEFAULT 0,
  description TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (workflow_id, name)
);
CREATE TABLE templates (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  category TEXT NOT NULL DEFAULT 'custom',
  definition TEXT NOT NULL,
  source_workflow_id TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX templates_workspace ON templates(workspace_id, created_at);
`,
};
