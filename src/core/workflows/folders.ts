/** Folders (flat): create, rename, delete (refused while non-empty unless ?moveTo=), move workflows. */
import { AppError, notFound } from "../../http/errors";
import { nowIso } from "../../store/db";
import type { FolderRow, FolderWithCount } from "../../store/folders";
import type { Storage } from "../../store/port";
import { newId } from "../../lib/ids";
import type { Actor, Workflows } from "./workflows";

export interface FolderView {
  id: string;
  name: string;
  workflowCount: number;
  workspaceId: string;
  createdAt: string;
  updatedAt: string;
}

const view = (f: FolderWithCount): FolderView => ({
  id: f.id,
  name: f.name,
  workflowCount: f.workflow_count,
  workspaceId: f.workspace_id,
  createdAt: f.created_at,
  updatedAt: f.updated_at,
});

export class Folders {
  constructor(private readonly workflows: Workflows) {}

  private get storage() {
    return this.workflows.storage;
  }

  async list(workspaceId: string) {
    const data = (await this.storage.folders.list(workspaceId)).map(view);
    return { data, total: data.length };
  }

  async get(workspaceId: string, id: string, storage: Storage = this.storage): Promise<FolderView> {
    const folder = await storage.folders.get(workspaceId, id);
    if (!folder) throw notFound(`folder ${id}`);
    return view(folder);
  }

  // The name check and the write are one unit: two instances creating the same name at once answer 201 and 409.
  async create(actor: Actor, name: string): Promise<FolderView> {
    const row = await this.storage.atomically(async (unit) => {
      const trimmed = await this.assertFreeName(unit, actor.workspaceId, name);
      const at = nowIso();
      const row: FolderRow = { id: newId(), workspace_id: actor.workspaceId, name: trimmed, created_at: at, updated_at: at };
      await unit.folders.insert(row);
      return row;
    });
    return view({ ...row, workflow_count: 0 });
  }

  async rename(actor: Actor, id: string, name: string): Promise<FolderView> {
    await this.storage.atomically(async (unit) => {
      await this.get(actor.workspaceId, id, unit);
      const trimmed = await this.assertFreeName(unit, actor.workspaceId, name, id);
      await unit.folders.rename(actor.workspaceId, id, trimmed, nowIso());
    });
    return this.get(actor.workspaceId, id);
  }

  /** Refused while the folder holds workflows, unless moveTo names another folder or `root`. */
  async delete(actor: Actor, id: string, moveTo?: string): Promise<{ id: string; deleted: true; moved: number }> {
    const folder = await this.get(actor.workspaceId, id);
    let moved = 0;
    await this.storage.atomically(async (unit) => {
      const count = await unit.workflows.countInFolder(actor.workspaceId, id);
      if (count > 0) {
        if (moveTo === undefined || moveTo === "") {
          throw new AppError(
            "CONFLICT",
            `folder "${folder.name}" holds ${count} workflow${count === 1 ? "" : "s"}; move ${count === 1 ? "it" : "them"} first, or delete with ?moveTo=<folderId> or ?moveTo=root`,
            { workflowCount: count },
          );
        }
        const target = moveTo === "root" ? null : moveTo;
        if (target === id) throw new AppError("VALIDATION_FAILED", "moveTo names the folder being deleted; name another folder or root");
        if (target !== null) await this.workflows.assertFolder(actor.workspaceId, target, unit);
        await unit.workflows.moveFolderContents(actor.workspaceId, id, target, nowIso());
        moved = count;
      }
      await unit.folders.delete(actor.workspaceId, id);
    });
    return { id, deleted: true, moved };
  }

  /** Moves workflows into a folder (or out of every folder with null); all or nothing. */
  async move(actor: Actor, workflowIds: string[], folderId: string | null): Promise<{ moved: number; folderId: string | null }> {
    if (folderId !== null) await this.workflows.assertFolder(actor.workspaceId, folderId);
    const at = nowIso();
    await this.storage.atomically(async (unit) => {
      for (const id of new Set(workflowIds)) {
        if (!(await unit.workflows.move(actor.workspaceId, id, folderId, at))) throw notFound(`workflow ${id}`);
      }
    });
    return { moved: new Set(workflowIds).size, folderId };
  }

  private async assertFreeName(unit: Storage, workspaceId: string, name: string, exceptId?: string): Promise<string> {
    const trimmed = name.trim();
    if (trimmed === "") throw new AppError("VALIDATION_FAILED", "a folder name cannot be blank");
    const existing = await unit.folders.byName(workspaceId, trimmed);
    if (existing && existing.id !== exceptId)
      throw new AppError("CONFLICT", `a folder named "${existing.name}" already exists (${existing.id}); pick another name`);
    return trimmed;
  }
}
