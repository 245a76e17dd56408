/** Workflows, versions, pinned data and variables on PostgreSQL (../workflows.ts says what each answers). */
import * as workflows from "../workflows";
import { marks, type PostgresConnection } from "./connection";

const INSERT_WORKFLOW = `INSERT INTO workflows (${workflows.WORKFLOW_COLUMNS.join(", ")}) VALUES (${marks(workflows.WORKFLOW_COLUMNS.length)})`;
const UPDATE_WORKFLOW = `UPDATE workflows SET ${workflows.WORKFLOW_UPDATE_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(", ")}
  WHERE id = $${workflows.WORKFLOW_UPDATE_COLUMNS.length + 1} AND workspace_id = $${workflows.WORKFLOW_UPDATE_COLUMNS.length + 2}`;
const INSERT_VERSION = `INSERT INTO workflow_versions (${workflows.VERSION_COLUMNS.join(", ")}) VALUES (${marks(workflows.VERSION_COLUMNS.length)})`;

export class PostgresWorkflows implements workflows.WorkflowRepository {
  constructor(private readonly c: PostgresConnection) {}

  get(workspaceId: string, id: string) {
    return this.c.get<workflows.WorkflowRow>("SELECT * FROM workflows WHERE id = $1 AND workspace_id = $2", [id, workspaceId]);
  }
  getAnyWorkspace(id: string) {
    return this.c.get<workflows.WorkflowRow>("SELECT * FROM workflows WHERE id = $1", [id]);
  }
  async exists(workspaceId: string, id: string) {
    return (await this.c.get("SELECT id FROM workflows WHERE id = $1 AND workspace_id = $2", [id, workspaceId])) !== null;
  }
  byWebhookTokenHash(hash: string) {
    return this.c.get<workflows.WorkflowRow>("SELECT * FROM workflows WHERE webhook_token_hash = $1", [hash]);
  }
  live() {
    return this.c.all<workflows.WorkflowRow>("SELECT * FROM workflows WHERE status = 'active' ORDER BY created_at");
  }
  async liveVersions() {
    const rows = await this.c.all<workflows.VersionRow>(
      "SELECT v.* FROM workflows w JOIN workflow_versions v ON v.id = w.latest_version_id WHERE w.status = 'active'",
    );
    return new Map(rows.map((v) => [v.id, v]));
  }
  async retentionOverrides() {
    return workflows.retentionOverridesOf(
      await this.c.all<{ id: string; definition: string }>(`SELECT id, definition FROM workflows WHERE definition LIKE '%"retention%'`),
    );
  }
  async insert(row: workflows.WorkflowRow) {
    await this.c.run(
      INSERT_WORKFLOW,
      workflows.WORKFLOW_COLUMNS.map((c) => row[c]),
    );
  }
  async update(row: workflows.WorkflowRow) {
    await this.c.run(UPDATE_WORKFLOW, [...workflows.WORKFLOW_UPDATE_COLUMNS.map((c) => row[c]), row.id, row.workspace_id]);
  }
  async delete(workspaceId: string, id: string) {
    return (await this.c.run("DELETE FROM workflows WHERE id = $1 AND workspace_id = $2", [id, workspaceId])) > 0;
  }

  async list(workspaceId: string, filter: workflows.WorkflowFilter, limit: number, offset: number) {
    const args: Array<string | number> = [workspaceId];
    const where = ["w.workspace_id = $1"];
    const bind = (value: string | number) => `$${args.push(value)}`;
    if (filter.folderId === null) where.push("w.folder_id IS NULL");
    else if (filter.folderId !== undefined) where.push(`w.folder_id = ${bind(filter.folderId)}`);
    if (filter.status) where.push(`w.status = ${bind(filter.status)}`);
    if (filter.tag) where.push(`EXISTS (SELECT 1 FROM jsonb_array_elements_text(w.tags::jsonb) AS tag(value) WHERE tag.value = ${bind(filter.tag)})`);
    if (filter.q) {
      const q = bind(filter.q.toLowerCase());
      where.push(`(strpos(lower(w.name), ${q}) > 0 OR strpos(lower(w.description), ${q}) > 0)`);
    }
    const clause = where.join(" AND ");
    const filtered = [...args];
    const rows = await this.c.all<workflows.WorkflowListRow>(
      `SELECT ${workflows.LIST_COLUMNS} FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id WHERE ${clause}
        ORDER BY w.updated_at DESC, w.id DESC LIMIT ${bind(limit)} OFFSET ${bind(offset)}`,
      args,
    );
    const total = (await this.c.get<{ n: number }>(`SELECT count(*) AS n FROM workflows w WHERE ${clause}`, filtered))?.n ?? 0;
    return { rows, total };
  }

  async countInFolder(workspaceId: string, folderId: string) {
    return (await this.c.get<{ n: number }>("SELECT count(*) AS n FROM workflows WHERE workspace_id = $1 AND folder_id = $2", [workspaceId, folderId]))?.n ?? 0;
  }
  async moveFolderContents(workspaceId: string, fromFolderId: string, toFolderId: string | null, at: string) {
    await this.c.run("UPDATE workflows SET folder_id = $1, updated_at = $2 WHERE workspace_id = $3 AND folder_id = $4", [
      toFolderId,
      at,
      workspaceId,
      fromFolderId,
    ]);
  }
  async move(workspaceId: string, id: string, folderId: string | null, at: string) {
    return (await this.c.run("UPDATE workflows SET folder_id = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4", [folderId, at, workspaceId, id])) > 0;
  }
  versions(workspaceId: string, workflowId: string) {
    return this.c.all<Omit<workflows.VersionRow, "definition">>(
      "SELECT id, workflow_id, workspace_id, number, hash, trigger_type, created_by, created_at FROM workflow_versions WHERE workflow_id = $1 AND workspace_id = $2 ORDER BY number DESC",
      [workflowId, workspaceId],
    );
  }
  version(workspaceId: string, workflowId: string, versionId: string) {
    return this.c.get<workflows.VersionRow>("SELECT * FROM workflow_versions WHERE id = $1 AND workflow_id = $2 AND workspace_id = $3", [
      versionId,
      workflowId,
      workspaceId,
    ]);
  }
  versionById(versionId: string) {
    return this.c.get<workflows.VersionRow>("SELECT * FROM workflow_versions WHERE id = $1", [versionId]);
  }
  async nextVersionNumber(workflowId: string) {
    return ((await this.c.get<{ n: number | null }>("SELECT max(number) AS n FROM workflow_versions WHERE workflow_id = $1", [workflowId]))?.n ?? 0) + 1;
  }
  async insertVersion(row: workflows.VersionRow) {
    await this.c.run(
      INSERT_VERSION,
      workflows.VERSION_COLUMNS.map((c) => row[c]),
    );
  }
  async liveVersionHash(versionId: string | null) {
    return versionId ? this.c.get<{ hash: string; number: number }>("SELECT hash, number FROM workflow_versions WHERE id = $1", [versionId]) : null;
  }
  pins(workflowId: string) {
    return this.c.all<workflows.PinRow>("SELECT * FROM workflow_pinned_data WHERE workflow_id = $1 ORDER BY step_name", [workflowId]);
  }
  async putPin(row: workflows.PinRow) {
    await this.c.run(
      `INSERT INTO workflow_pinned_data (workflow_id, step_name, data, stamp, pinned_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (workflow_id, step_name) DO UPDATE SET data = EXCLUDED.data, stamp = EXCLUDED.stamp, pinned_at = EXCLUDED.pinned_at`,
      [row.workflow_id, row.step_name, row.data, row.stamp, row.pinned_at],
    );
  }
  async deletePin(workflowId: string, stepName: string) {
    return (await this.c.run("DELETE FROM workflow_pinned_data WHERE workflow_id = $1 AND step_name = $2", [workflowId, stepName])) > 0;
  }
  variables(workflowId: string) {
    return this.c.all<workflows.VariableRow>("SELECT * FROM workflow_variables WHERE workflow_id = $1 ORDER BY name", [workflowId]);
  }
  async replaceVariables(workflowId: string, rows: workflows.VariableRow[]) {
    await this.c.run("DELETE FROM workflow_variables WHERE workflow_id = $1", [workflowId]);
    for (const r of rows) {
      await this.c.run("INSERT INTO workflow_variables (workflow_id, name, value, secret, description, updated_at) VALUES ($1, $2, $3, $4, $5, $6)", [
        workflowId,
        r.name,
        r.value,
        r.secret,
        r.description,
        r.updated_at,
      ]);
    }
  }
  async setTestPayloads(workflowId: string, payloadsJson: string) {
    await this.c.run("UPDATE workflows SET test_payloads = $1 WHERE id = $2", [payloadsJson, workflowId]);
  }
}
