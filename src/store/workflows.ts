/** Workflows, their published versions, pinned data and variables. Every read is bounded by workspace. */
import { BoundedMap } from "../lib/bounded-map";
import { countOf, type Db } from "./db";

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
  q?: string;
}

const LIST_COLUMNS = `w.id, w.workspace_id, w.org_id, w.name, w.description, w.draft_hash, w.definition_rev, w.status, w.trigger_type,
  w.cron_expression, w.webhook_token, w.webhook_token_hash, w.latest_version_id, w.folder_id, w.tags, w.created_by, w.created_at, w.updated_at,
  v.hash AS live_hash, v.number AS live_number`;

export class WorkflowStore {
  private readonly q;
  private readonly versionsById = new BoundedMap<string, VersionRow>(64);

  constructor(private readonly db: Db) {
    this.q = {
      get: db.query<WorkflowRow, [string, string]>("SELECT * FROM workflows WHERE id = ? AND workspace_id = ?"),
      getAny: db.query<WorkflowRow, [string]>("SELECT * FROM workflows WHERE id = ?"),
      byTokenHash: db.query<WorkflowRow, [string]>("SELECT * FROM workflows WHERE webhook_token_hash = ?"),
      live: db.query<WorkflowRow, []>("SELECT * FROM workflows WHERE status = 'active' ORDER BY created_at"),
      liveVersions: db.query<VersionRow, []>("SELECT v.* FROM workflows w JOIN workflow_versions v ON v.id = w.latest_version_id WHERE w.status = 'active'"),
      insert: db.query(`INSERT INTO workflows (id, workspace_id, org_id, name, description, definition, draft_hash, definition_rev, status, trigger_type,
        cron_expression, webhook_token, webhook_token_hash, latest_version_id, folder_id, tags, test_payloads, created_by, created_at, updated_at)
        VALUES ($id, $workspace_id, $org_id, $name, $description, $definition, $draft_hash, $definition_rev, $status, $trigger_type,
        $cron_expression, $webhook_token, $webhook_token_hash, $latest_version_id, $folder_id, $tags, $test_payloads, $created_by, $created_at, $updated_at)`),
      update: db.query(`UPDATE workflows SET name = $name, description = $description, definition = $definition, draft_hash = $draft_hash,
        definition_rev = $definition_rev, status = $status, trigger_type = $trigger_type, cron_expression = $cron_expression,
        webhook_token = $webhook_token, webhook_token_hash = $webhook_token_hash, latest_version_id = $latest_version_id,
        folder_id = $folder_id, tags = $tags, test_payloads = $test_payloads, updated_at = $updated_at
        WHERE id = $id AND workspace_id = $workspace_id`),
      delete: db.query("DELETE FROM workflows WHERE id = ? AND workspace_id = ?"),
      countInFolder: db.query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM workflows WHERE workspace_id = ? AND folder_id = ?"),
      moveFolder: db.query("UPDATE workflows SET folder_id = ?, updated_at = ? WHERE workspace_id = ? AND folder_id = ?"),
      move: db.query("UPDATE workflows SET folder_id = ?, updated_at = ? WHERE workspace_id = ? AND id = ?"),
      versions: db.query<Omit<VersionRow, "definition">, [string, string]>(
        "SELECT id, workflow_id, workspace_id, number, hash, trigger_type, created_by, created_at FROM workflow_versions WHERE workflow_id = ? AND workspace_id = ? ORDER BY number DESC",
      ),
      version: db.query<VersionRow, [string, string, string]>("SELECT * FROM workflow_versions WHERE id = ? AND workflow_id = ? AND workspace_id = ?"),
      versionById: db.query<VersionRow, [string]>("SELECT * FROM workflow_versions WHERE id = ?"),
      maxVersion: db.query<{ n: number | null }, [string]>("SELECT MAX(number) AS n FROM workflow_versions WHERE workflow_id = ?"),
      insertVersion: db.query(`INSERT INTO workflow_versions (id, workflow_id, workspace_id, number, definition, hash, trigger_type, created_by, created_at)
        VALUES ($id, $workflow_id, $workspace_id, $number, $definition, $hash, $trigger_type, $created_by, $created_at)`),
      liveHash: db.query<{ hash: string; number: number }, [string]>("SELECT hash, number FROM workflow_versions WHERE id = ?"),
      pins: db.query<PinRow, [string]>("SELECT * FROM workflow_pinned_data WHERE workflow_id = ? ORDER BY step_name"),
      putPin: db.query(`INSERT INTO workflow_pinned_data (workflow_id, step_name, data, stamp, pinned_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (workflow_id, step_name) DO UPDATE SET data = excluded.data, stamp = excluded.stamp, pinned_at = excluded.pinned_at`),
      deletePin: db.query("DELETE FROM workflow_pinned_data WHERE workflow_id = ? AND step_name = ?"),
      variables: db.query<VariableRow, [string]>("SELECT * FROM workflow_variables WHERE workflow_id = ? ORDER BY name"),
      deleteVariables: db.query("DELETE FROM workflow_variables WHERE workflow_id = ?"),
      setTestPayloads: db.query("UPDATE workflows SET test_payloads = ? WHERE id = ?"),
      insertVariable: db.query("INSERT INTO workflow_variables (workflow_id, name, value, secret, description, updated_at) VALUES (?, ?, ?, ?, ?, ?)"),
      exists: db.query<{ id: string }, [string, string]>("SELECT id FROM workflows WHERE id = ? AND workspace_id = ?"),
    };
  }

  get(workspaceId: string, id: string): WorkflowRow | null {
    return this.q.get.get(id, workspaceId);
  }

  /** Unbounded by workspace: for the engine and trigger schedulers, which act for the system. */
  getAnyWorkspace(id: string): WorkflowRow | null {
    return this.q.getAny.get(id);
  }

  exists(workspaceId: string, id: string): boolean {
    return this.q.exists.get(id, workspaceId) !== null;
  }

  byWebhookTokenHash(hash: string): WorkflowRow | null {
    return this.q.byTokenHash.get(hash);
  }

  live(): WorkflowRow[] {
    return this.q.live.all();
  }

  /** The published versions of the live workflows, by version id (one query, however many are live). */
  liveVersions(): Map<string, VersionRow> {
    return new Map(this.q.liveVersions.all().map((v) => [v.id, v]));
  }

  /**
   * Workflows whose saved definition sets its own run retention (`settings.retentionDays` or
   * `settings.retentionMaxRuns`); the rest follow the instance's settings. The text filter only narrows the
   * rows parsed.
   */
  retentionOverrides(): Array<{ workflowId: string; days?: number; maxRuns?: number }> {
    const rows = this.db.query<{ id: string; definition: string }, []>(`SELECT id, definition FROM workflows WHERE definition LIKE '%"retention%'`).all();
    const overrides: Array<{ workflowId: string; days?: number; maxRuns?: number }> = [];
    for (const row of rows) {
      const settings = (JSON.parse(row.definition) as { settings?: { retentionDays?: unknown; retentionMaxRuns?: unknown } }).settings;
      const days = typeof settings?.retentionDays === "number" ? settings.retentionDays : undefined;
      const maxRuns = typeof settings?.retentionMaxRuns === "number" ? settings.retentionMaxRuns : undefined;
      if (days !== undefined || maxRuns !== undefined) overrides.push({ workflowId: row.id, days, maxRuns });
    }
    return overrides;
  }

  insert(row: WorkflowRow) {
    this.q.insert.run(prefix(row));
  }

  update(row: WorkflowRow) {
    this.q.update.run(prefix(row));
  }

  delete(workspaceId: string, id: string): boolean {
    return this.q.delete.run(id, workspaceId).changes > 0;
  }

  list(workspaceId: string, filter: WorkflowFilter, limit: number, offset: number): { rows: WorkflowListRow[]; total: number } {
    const where = ["w.workspace_id = ?"];
    const args: Array<string | number> = [workspaceId];
    if (filter.folderId === null) where.push("w.folder_id IS NULL");
    else if (filter.folderId !== undefined) {
      where.push("w.folder_id = ?");
      args.push(filter.folderId);
    }
    if (filter.status) {
      where.push("w.status = ?");
      args.push(filter.status);
    }
    if (filter.tag) {
      where.push("EXISTS (SELECT 1 FROM json_each(w.tags) WHERE json_each.value = ?)");
      args.push(filter.tag);
    }
    if (filter.q) {
      where.push("(instr(lower(w.name), ?) > 0 OR instr(lower(w.description), ?) > 0)");
      args.push(filter.q.toLowerCase(), filter.q.toLowerCase());
    }
    const clause = where.join(" AND ");
    // Ad-hoc filter combinations: bun:sqlite's statement cache serves the handful of shapes.
    const total = (this.db.query(`SELECT COUNT(*) AS n FROM workflows w WHERE ${clause}`).get(...args) as { n: number }).n;
    const rows = this.db
      .query(
        `SELECT ${LIST_COLUMNS} FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id WHERE ${clause} ORDER BY w.updated_at DESC, w.id DESC LIMIT ? OFFSET ?`,
      )
      .all(...args, limit, offset) as WorkflowListRow[];
    return { rows, total };
  }

  countInFolder(workspaceId: string, folderId: string): number {
    return countOf(this.q.countInFolder.get(workspaceId, folderId));
  }

  moveFolderContents(workspaceId: string, fromFolderId: string, toFolderId: string | null, at: string) {
    this.q.moveFolder.run(toFolderId, at, workspaceId, fromFolderId);
  }

  move(workspaceId: string, id: string, folderId: string | null, at: string): boolean {
    return this.q.move.run(folderId, at, workspaceId, id).changes > 0;
  }

  versions(workspaceId: string, workflowId: string) {
    return this.q.versions.all(workflowId, workspaceId);
  }

  version(workspaceId: string, workflowId: string, versionId: string): VersionRow | null {
    return this.q.version.get(versionId, workflowId, workspaceId);
  }

  /**
   * A version by id. Versions are never changed once written (they go only with their workflow), so each is
   * read once and kept: a webhook's first run read its published version twice (its plan, then what the run
   * executes), and what a production run executes is looked up again every second.
   */
  versionById(versionId: string): VersionRow | null {
    let row = this.versionsById.recall(versionId);
    if (!row) {
      row = this.q.versionById.get(versionId) ?? undefined;
      if (row) this.versionsById.set(versionId, row);
    }
    return row ?? null;
  }

  nextVersionNumber(workflowId: string): number {
    return (this.q.maxVersion.get(workflowId)?.n ?? 0) + 1;
  }

  insertVersion(row: VersionRow) {
    this.q.insertVersion.run(prefix(row));
  }

  liveVersionHash(versionId: string | null): { hash: string; number: number } | null {
    return versionId ? this.q.liveHash.get(versionId) : null;
  }

  pins(workflowId: string): PinRow[] {
    return this.q.pins.all(workflowId);
  }

  putPin(row: PinRow) {
    this.q.putPin.run(row.workflow_id, row.step_name, row.data, row.stamp, row.pinned_at);
  }

  deletePin(workflowId: string, stepName: string): boolean {
    return this.q.deletePin.run(workflowId, stepName).changes > 0;
  }

  variables(workflowId: string): VariableRow[] {
    return this.q.variables.all(workflowId);
  }

  /** Replaces every variable of the workflow at once (one transaction: a reader never sees half of them). */
  replaceVariables(workflowId: string, rows: VariableRow[]) {
    this.db
      .transaction(() => {
        this.q.deleteVariables.run(workflowId);
        for (const r of rows) this.q.insertVariable.run(workflowId, r.name, r.value, r.secret, r.description, r.updated_at);
      })
      .immediate();
  }

  setTestPayloads(workflowId: string, payloadsJson: string) {
    this.q.setTestPayloads.run(payloadsJson, workflowId);
  }
}

/** The database is opened with `strict: true`, so `$name` parameters bind from plain `name` keys. */
const prefix = (row: object) => row as Record<string, string | number | null>;
