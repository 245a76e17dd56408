/**
 * Workflows, their published versions, pinned data and variables: the rows and what the storage port
 * (./port.ts) answers about them. Every read is bounded by workspace unless its name says otherwise.
 * Implemented by ./sqlite/workflows.ts and ./postgres/workflows.ts.
 */

export interface WorkflowRow {
  id: string;
  workspace_id: string;
  org_id: string;
  name: string;
  description: string;
  definition: string;
  draft_hash: string;
  definition_rev: number;
  status: string;
  trigger_type: string;
  cron_expression: string | null;
  webhook_token: string | null;
  webhook_token_hash: string | null;
  latest_version_id: string | null;
  folder_id: string | null;
  tags: string;
  test_payloads: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** A list row: everything but the definition and test payloads, plus what the record derives from joins. */
export type WorkflowListRow = Omit<WorkflowRow, "definition" | "test_payloads"> & { live_hash: string | null; live_number: number | null };

export interface VersionRow {
  id: string;
  workflow_id: string;
  workspace_id: string;
  number: number;
  definition: string;
  hash: string;
  trigger_type: string;
  created_by: string | null;
  created_at: string;
}

export interface PinRow {
  workflow_id: string;
  step_name: string;
  data: string;
  stamp: string;
  pinned_at: string;
}
export interface VariableRow {
  workflow_id: string;
  name: string;
  value: string;
  secret: number;
  description: string;
  updated_at: string;
}

export interface WorkflowFilter {
  folderId?: string | null;
  status?: string;
  tag?: string;
  /** Lower-cased text found in the name or the description. */
  q?: string;
}

/** A workflow whose saved definition sets its own run retention. */
export interface RetentionOverride {
  workflowId: string;
  days?: number;
  maxRuns?: number;
}

/** The columns an update may change but updated_at, in the order the statements bind them. */
const CHANGEABLE_COLUMNS = [
  "name",
  "description",
  "definition",
  "draft_hash",
  "definition_rev",
  "status",
  "trigger_type",
  "cron_expression",
  "webhook_token",
  "webhook_token_hash",
  "latest_version_id",
  "folder_id",
  "tags",
  "test_payloads",
] as const satisfies ReadonlyArray<keyof WorkflowRow>;

/** The columns of a workflow row, in the order the statements bind them. */
export const WORKFLOW_COLUMNS = [
  "id",
  "workspace_id",
  "org_id",
  ...CHANGEABLE_COLUMNS,
  "created_by",
  "created_at",
  "updated_at",
] as const satisfies ReadonlyArray<keyof WorkflowRow>;

/** The columns an update writes (the rest never change), in the order the statements bind them. */
export const WORKFLOW_UPDATE_COLUMNS = [...CHANGEABLE_COLUMNS, "updated_at"] as const satisfies ReadonlyArray<keyof WorkflowRow>;

export const VERSION_COLUMNS = [
  "id",
  "workflow_id",
  "workspace_id",
  "number",
  "definition",
  "hash",
  "trigger_type",
  "created_by",
  "created_at",
] as const satisfies ReadonlyArray<keyof VersionRow>;

/** The list columns of `list` (w: workflows, v: its live version). */
export const LIST_COLUMNS = `w.id, w.workspace_id, w.org_id, w.name, w.description, w.draft_hash, w.definition_rev, w.status, w.trigger_type,
  w.cron_expression, w.webhook_token, w.webhook_token_hash, w.latest_version_id, w.folder_id, w.tags, w.created_by, w.created_at, w.updated_at,
  v.hash AS live_hash, v.number AS live_number`;

/** The overrides among rows whose definition mentions retention (the text filter only narrows the rows parsed). */
export function retentionOverridesOf(rows: Array<{ id: string; definition: string }>): RetentionOverride[] {
  const overrides: RetentionOverride[] = [];
  for (const row of rows) {
    const settings = (JSON.parse(row.definition) as { settings?: { retentionDays?: unknown; retentionMaxRuns?: unknown } }).settings;
    const days = typeof settings?.retentionDays === "number" ? settings.retentionDays : undefined;
    const maxRuns = typeof settings?.retentionMaxRuns === "number" ? settings.retentionMaxRuns : undefined;
    if (days !== undefined || maxRuns !== undefined) overrides.push({ workflowId: row.id, days, maxRuns });
  }
  return overrides;
}

export interface WorkflowRepository {
  get(workspaceId: string, id: string): Promise<WorkflowRow | null>;
  /** Unbounded by workspace: for the engine and trigger schedulers, which act for the system. */
  getAnyWorkspace(id: string): Promise<WorkflowRow | null>;
  exists(workspaceId: string, id: string): Promise<boolean>;
  byWebhookTokenHash(hash: string): Promise<WorkflowRow | null>;
  /** Every workflow with status active, oldest first. */
  live(): Promise<WorkflowRow[]>;
  /** The published versions of the live workflows, by version id (one query, however many are live). */
  liveVersions(): Promise<Map<string, VersionRow>>;
  /**
   * Workflows whose saved definition sets its own run retention (`settings.retentionDays` or
   * `settings.retentionMaxRuns`); the rest follow the instance's settings.
   */
  retentionOverrides(): Promise<RetentionOverride[]>;
  insert(row: WorkflowRow): Promise<void>;
  /** Writes every column but id, workspace, org and creation back. */
  update(row: WorkflowRow): Promise<void>;
  /** False when the workspace has no such workflow. */
  delete(workspaceId: string, id: string): Promise<boolean>;
  /** A page, newest change first, and how many match in all. */
  list(workspaceId: string, filter: WorkflowFilter, limit: number, offset: number): Promise<{ rows: WorkflowListRow[]; total: number }>;
  countInFolder(workspaceId: string, folderId: string): Promise<number>;
  /** Moves every workflow of one folder to another (null: out of every folder). */
  moveFolderContents(workspaceId: string, fromFolderId: string, toFolderId: string | null, at: string): Promise<void>;
  /** False when the workspace has no such workflow. */
  move(workspaceId: string, id: string, folderId: string | null, at: string): Promise<boolean>;
  /** Newest first, without their definitions. */
  versions(workspaceId: string, workflowId: string): Promise<Array<Omit<VersionRow, "definition">>>;
  version(workspaceId: string, workflowId: string, versionId: string): Promise<VersionRow | null>;
  /** A version by id alone (versions never change once written). */
  versionById(versionId: string): Promise<VersionRow | null>;
  /** One more than the highest version number of the workflow (1 for its first). */
  nextVersionNumber(workflowId: string): Promise<number>;
  insertVersion(row: VersionRow): Promise<void>;
  /** The hash and number of a version; null for a null id. */
  liveVersionHash(versionId: string | null): Promise<{ hash: string; number: number } | null>;
  /** By step name. */
  pins(workflowId: string): Promise<PinRow[]>;
  /** Inserts the pin, or replaces the step's pin. */
  putPin(row: PinRow): Promise<void>;
  /** False when the step had no pin. */
  deletePin(workflowId: string, stepName: string): Promise<boolean>;
  /** By name. */
  variables(workflowId: string): Promise<VariableRow[]>;
  /** Replaces every variable of the workflow: several statements, so called inside a unit (a reader never sees half of them). */
  replaceVariables(workflowId: string, rows: VariableRow[]): Promise<void>;
  setTestPayloads(workflowId: string, payloadsJson: string): Promise<void>;
}
