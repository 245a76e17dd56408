/**
 * Synchronous reads of workflows and their published versions and variables, for the code not yet on the
 * storage port that needs them inside its own synchronous transactions: the triggers' ports and `engine.enqueue`
 * (a schedule's instant or a poll's baseline commits together with its run). Read-only: every write goes through
 * the port (./workflows.ts). Goes with those areas' move onto the port (docs/architecture.md, "Storage").
 */
import type { Db } from "./db";
import type { PinRow, VariableRow, VersionRow, WorkflowRow } from "./workflows";

export class WorkflowSyncReads {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.query<WorkflowRow, [string, string]>("SELECT * FROM workflows WHERE id = ? AND workspace_id = ?"),
      getAny: db.query<WorkflowRow, [string]>("SELECT * FROM workflows WHERE id = ?"),
      live: db.query<WorkflowRow, []>("SELECT * FROM workflows WHERE status = 'active' ORDER BY created_at"),
      liveVersions: db.query<VersionRow, []>("SELECT v.* FROM workflows w JOIN workflow_versions v ON v.id = w.latest_version_id WHERE w.status = 'active'"),
      versionById: db.query<VersionRow, [string]>("SELECT * FROM workflow_versions WHERE id = ?"),
      pins: db.query<PinRow, [string]>("SELECT * FROM workflow_pinned_data WHERE workflow_id = ? ORDER BY step_name"),
      variables: db.query<VariableRow, [string]>("SELECT * FROM workflow_variables WHERE workflow_id = ? ORDER BY name"),
    };
  }

  get(workspaceId: string, id: string): WorkflowRow | null {
    return this.q.get.get(id, workspaceId);
  }
  getAnyWorkspace(id: string): WorkflowRow | null {
    return this.q.getAny.get(id);
  }
  live(): WorkflowRow[] {
    return this.q.live.all();
  }
  liveVersions(): Map<string, VersionRow> {
    return new Map(this.q.liveVersions.all().map((v) => [v.id, v]));
  }
  versionById(versionId: string): VersionRow | null {
    return this.q.versionById.get(versionId);
  }
  pins(workflowId: string): PinRow[] {
    return this.q.pins.all(workflowId);
  }
  variables(workflowId: string): VariableRow[] {
    return this.q.variables.all(workflowId);
  }
}
