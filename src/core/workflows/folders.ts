/** Folders (flat): create, rename, delete (refused while non-empty unless ?moveTo=), move workflows. */
import { AppError, notFound } from "../../http/errors";
import { nowIso, atomically } from "../../store/db";
import type { FolderRow, FolderWithCount } from "../../store/folders";
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

  private get store() {
    return this.workflows.folders;
  }

  list(workspaceId: string) {
    const data = this.store.list(workspaceId).map(view);
    return { data, total: data.length };
  }

  get(workspaceId: string, id: string): FolderView {
    const folder = this.store.get(workspaceId, id);
    if (!folder) throw notFound(`folder ${id}`);
    return view(folder);
  }

  // The name check and the write are one unit: two instances creating the same name at once answer 201 and 409.
  create(actor: Actor, name: string): FolderView {
    const row = atomically(this.workflows.db, () => {
      const trimmed = this.assertFreeName(actor.workspaceId, name);
      const at = nowIso();
      const row: FolderRow = { id: newId(), workspace_id: actor.workspaceId, name: trimmed, created_at: at, updated_at: at };
      this.store.insert(row);
      return row;
    });
    return view({ ...row, workflow_count: 0 });
  }

  rename(actor: Actor, id: string, name: string): FolderView {
    atomically(this.workflows.db, () => {
      this.get(actor.workspaceId, id);
      const trimmed = this.assertFreeName(actor.workspaceId, name, id);
      this.store.rename(actor.workspaceId, id, trimmed, nowIso());
    });
    return this.get(actor.workspaceId, id);
  }

  /** Refused while the folder holds workflows, unless moveTo names another folder or `root`. */
  delete(actor: Actor, id: string, moveTo?: string): { id: string; deleted: true; moved: number } {
    const folder = this.get(actor.workspaceId, id);
    let moved = 0;
    atomically(this.workflows.db, () => {
      const count = this.workflows.store.countInFolder(actor.workspaceId, id);
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
        if (target !== null) this.workflows.assertFolder(actor.workspaceId, target);
        this.workflows.store.moveFolderContents(actor.workspaceId, id, target, nowIso());
        moved = count;
      }
      this.store.delete(actor.workspaceId, id);
    });
    return { id, deleted: true, moved };
  }

  /** Moves workflows into a folder (or out of every folder with null); all or nothing. */
  move(actor: Actor, workflowIds: string[], folderId: string | null): { moved: number; folderId: string | null } {
    if (folderId !== null) this.workflows.assertFolder(actor.workspaceId, folderId);
    const at = nowIso();
    atomically(this.workflows.db, () => {
      for (const id of new Set(workflowIds)) {
        if (!this.workflows.store.move(actor.workspaceId, id, folderId, at)) throw notFound(`workflow ${id}`);
      }
    });
    return { moved: new Set(workflowIds).size, folderId };
  }

  private assertFreeName(workspaceId: string, name: string, exceptId?: string): string {
    const trimmed = name.trim();
    if (trimmed === "") throw new AppError("VALIDATION_FAILED", "a folder name cannot be blank");
    const existing = this.store.byName(workspaceId, trimmed);
    if (existing && existing.id !== exceptId)
      throw new AppError("CONFLICT", `a folder named "${existing.name}" already exists (${existing.id}); pick another name`);
    return trimmed;
  }
}
