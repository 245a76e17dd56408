/** Workflows, versions, pinned data and variables on SQLite (../workflows.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { bindRow, countOf } from "./db";
import * as workflows from "../workflows";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  get: db.query<workflows.WorkflowRow, [string, string]>("SELECT * FROM workflows WHERE id = ? AND workspace_id = ?"),
  getAny: db.query<workflows.WorkflowRow, [string]>("SELECT * FROM workflows WHERE id = ?"),
  byTokenHash: db.query<workflows.WorkflowRow, [string]>("SELECT * FROM workflows WHERE webhook_token_hash = ?"),
  live: db.query<workflows.WorkflowRow, []>("SELECT * FROM workflows WHERE status = 'active' ORDER BY created_at"),
  liveVersions: db.query<workflows.VersionRow, []>(
    "SELECT v.* FROM workflows w JOIN workflow_versions v ON v.id = w.latest_version_id WHERE w.status = 'active'",
  ),
  retention: db.query<{ id: string; definition: string }, []>(`SELECT id, definition FROM workflows WHERE definition LIKE '%"retention%'`),
  insert: db.query(`INSERT INTO workflows (id, workspace_id, org_id, name, description, definition, draft_hash, definition_rev, status, trigger_type,
    cron_expression, webhook_token, webhook_token_hash, latest_version_id, folder_id, tags, test_payloads, created_by, created_at, updated_at)
    VALUES ($id, $workspace_id, $org_id, $name, $description, $definition, $draft_hash, $definition_rev, $status, $trigger_type,
    $cron_expression, $webhook_token, $webhook_token_hash, $latest_version_id, $folder_id, $tags, $test_payloads, $created_by, $created_at, $updated_at)`),
  update: db.query(`UPDATE workflows SET name = $name, description = $description, definition = $definition, draft_hash = $draft_hash,
    definition_rev = $definition_rev, status = $status, trigger_type = $trigger_type, cron_expression = $cron_expression,
    webhook_token = $webhook_token, webhook_token_hash = $webhook_token_hash, latest_version_id = $latest_version_id,
    folder_id = $folder_id, tags = $tags, test_payloads = $test_payloads, updated_at = $updated_at
    WHERE id = $id AND workspace_id = $workspace_id`),
  delete: db.query<null, [string, string]>("DELETE FROM workflows WHERE id = ? AND workspace_id = ?"),
  countInFolder: db.query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM workflows WHERE workspace_id = ? AND folder_id = ?"),
  moveFolder: db.query<null, [string | null, string, string, string]>(
    "UPDATE workflows SET folder_id = ?, updated_at = ? WHERE workspace_id = ? AND folder_id = ?",
  ),
  move: db.query<null, [string | null, string, string, string]>("UPDATE workflows SET folder_id = ?, updated_at = ? WHERE workspace_id = ? AND id = ?"),
  versions: db.query<Omit<workflows.VersionRow, "definition">, [string, string]>(
    "SELECT id, workflow_id, workspace_id, number, hash, trigger_type, created_by, created_at FROM workflow_versions WHERE workflow_id = ? AND workspace_id = ? ORDER BY number DESC",
  ),
  version: db.query<workflows.VersionRow, [string, string, string]>("SELECT * FROM workflow_versions WHERE id = ? AND workflow_id = ? AND workspace_id = ?"),
  versionById: db.query<workflows.VersionRow, [string]>("SELECT * FROM workflow_versions WHERE id = ?"),
  maxVersion: db.query<{ n: number | null }, [string]>("SELECT MAX(number) AS n FROM workflow_versions WHERE workflow_id = ?"),
  insertVersion: db.query(`INSERT INTO workflow_versions (id, workflow_id, workspace_id, number, definition, hash, trigger_type, created_by, created_at)
    VALUES ($id, $workflow_id, $workspace_id, $number, $definition, $hash, $trigger_type, $created_by, $created_at)`),
  liveHash: db.query<{ hash: string; number: number }, [string]>("SELECT hash, number FROM workflow_versions WHERE id = ?"),
  pins: db.query<workflows.PinRow, [string]>("SELECT * FROM workflow_pinned_data WHERE workflow_id = ? ORDER BY step_name"),
  putPin: db.query<
    null,
    [string, string, string, string, string]
  >(`INSERT INTO workflow_pinned_data (workflow_id, step_name, data, stamp, pinned_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (workflow_id, step_name) DO UPDATE SET data = excluded.data, stamp = excluded.stamp, pinned_at = excluded.pinned_at`),
  deletePin: db.query<null, [string, string]>("DELETE FROM workflow_pinned_data WHERE workflow_id = ? AND step_name = ?"),
  variables: db.query<workflows.VariableRow, [string]>("SELECT * FROM workflow_variables WHERE workflow_id = ? ORDER BY name"),
  deleteVariables: db.query<null, [string]>("DELETE FROM workflow_variables WHERE workflow_id = ?"),
  setTestPayloads: db.query<null, [string, string]>("UPDATE workflows SET test_payloads = ? WHERE id = ?"),
  insertVariable: db.query<null, [string, string, string, number, string, string]>(
    "INSERT INTO workflow_variables (workflow_id, name, value, secret, description, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
  ),
  exists: db.query<{ id: string }, [string, string]>("SELECT id FROM workflows WHERE id = ? AND workspace_id = ?"),
});

export class SqliteWorkflows extends Prepared(statements) implements workflows.WorkflowRepository {
  get(workspaceId: string, id: string) {
    return this.c.do(() => this.q.get.get(id, workspaceId));
  }
  getAnyWorkspace(id: string) {
    return this.c.do(() => this.q.getAny.get(id));
  }
  exists(workspaceId: string, id: string) {
    return this.c.do(() => this.q.exists.get(id, workspaceId) !== null);
  }
  byWebhookTokenHash(hash: string) {
    return this.c.do(() => this.q.byTokenHash.get(hash));
  }
  live() {
    return this.c.do(() => this.q.live.all());
  }
  liveVersions() {
    return this.c.do(() => new Map(this.q.liveVersions.all().map((v) => [v.id, v])));
  }
  retentionOverrides() {
    return this.c.do(() => workflows.retentionOverridesOf(this.q.retention.all()));
  }
  insert(row: workflows.WorkflowRow) {
    return this.c.do(() => void this.q.insert.run(bindRow(row)));
  }
  update(row: workflows.WorkflowRow) {
    return this.c.do(() => void this.q.update.run(bindRow(row)));
  }
  delete(workspaceId: string, id: string) {
    return this.c.do(() => this.q.delete.run(id, workspaceId).changes > 0);
  }

  list(workspaceId: string, filter: workflows.WorkflowFilter, limit: number, offset: number) {
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
    return this.c.do(() => {
      // Ad-hoc filter combinations: bun:sqlite's statement cache serves the handful of shapes.
      const total = countOf(this.c.db.query<{ n: number }, Array<string | number>>(`SELECT COUNT(*) AS n FROM workflows w WHERE ${clause}`).get(...args));
      const rows = this.c.db
        .query<workflows.WorkflowListRow, Array<string | number>>(
          `SELECT ${workflows.LIST_COLUMNS} FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id WHERE ${clause} ORDER BY w.updated_at DESC, w.id DESC LIMIT ? OFFSET ?`,
        )
        .all(...args, limit, offset);
      return { rows, total };
    });
  }

  countInFolder(workspaceId: string, folderId: string) {
    return this.c.do(() => countOf(this.q.countInFolder.get(workspaceId, folderId)));
  }
  moveFolderContents(workspaceId: string, fromFolderId: string, toFolderId: string | null, at: string) {
    return this.c.do(() => void this.q.moveFolder.run(toFolderId, at, workspaceId, fromFolderId));
  }
  move(workspaceId: string, id: string, folderId: string | null, at: string) {
    return this.c.do(() => this.q.move.run(folderId, at, workspaceId, id).changes > 0);
  }
  versions(workspaceId: string, workflowId: string) {
    return this.c.do(() => this.q.versions.all(workflowId, workspaceId));
  }
  version(workspaceId: string, workflowId: string, versionId: string) {
    return this.c.do(() => this.q.version.get(versionId, workflowId, workspaceId));
  }
  versionById(versionId: string) {
    return this.c.do(() => this.q.versionById.get(versionId));
  }
  nextVersionNumber(workflowId: string) {
    return this.c.do(() => (this.q.maxVersion.get(workflowId)?.n ?? 0) + 1);
  }
  insertVersion(row: workflows.VersionRow) {
    return this.c.do(() => void this.q.insertVersion.run(bindRow(row)));
  }
  liveVersionHash(versionId: string | null) {
    return this.c.do(() => (versionId ? this.q.liveHash.get(versionId) : null));
  }
  pins(workflowId: string) {
    return this.c.do(() => this.q.pins.all(workflowId));
  }
  putPin(row: workflows.PinRow) {
    return this.c.do(() => void this.q.putPin.run(row.workflow_id, row.step_name, row.data, row.stamp, row.pinned_at));
  }
  deletePin(workflowId: string, stepName: string) {
    return this.c.do(() => this.q.deletePin.run(workflowId, stepName).changes > 0);
  }
  variables(workflowId: string) {
    return this.c.do(() => this.q.variables.all(workflowId));
  }
  replaceVariables(workflowId: string, rows: workflows.VariableRow[]) {
    return this.c.do(() => {
      // A transaction of its own when the caller's unit holds none (a savepoint inside one).
      this.c.db
        .transaction(() => {
          this.q.deleteVariables.run(workflowId);
          for (const r of rows) this.q.insertVariable.run(workflowId, r.name, r.value, r.secret, r.description, r.updated_at);
        })
        .immediate();
    });
  }
  setTestPayloads(workflowId: string, payloadsJson: string) {
    return this.c.do(() => void this.q.setTestPayloads.run(payloadsJson, workflowId));
  }
}
