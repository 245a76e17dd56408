/** Folders: organise workflows (workflow scopes). */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { created, routeOptions } from "./route-options";
import { Uuid } from "../schema/common";
import { Folder } from "../schema/folder";
import { MoveBody } from "../schema/workflow-record";

const route = routeOptions(["Folders"]);
const FolderBody = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export const foldersApi = ({ security, folders }: AppDeps) =>
  new Elysia({ name: "api-folders" })
    .use(security)
    .get("/api/folders", ({ auth }) => folders.list(auth.workspaceId), {
      permission: "workflow:read",
      ...route.list(Folder, "List folders with their workflow counts (GET /api/workflows?folderId= lists a folder's workflows)"),
    })
    .post("/api/folders", async ({ auth, body, set }) => created(set, await folders.create(auth, body.name)), {
      permission: "workflow:write",
      ...route.creates(Folder, "Create a folder (names are unique in a workspace, ignoring case)"),
      body: FolderBody,
    })
    .get("/api/folders/:id", async ({ auth, params }) => ({ data: await folders.get(auth.workspaceId, params.id) }), {
      permission: "workflow:read",
      ...route.byId(Folder, "Read a folder"),
    })
    .put("/api/folders/:id", async ({ auth, params, body }) => ({ data: await folders.rename(auth, params.id, body.name) }), {
      permission: "workflow:write",
      ...route.byId(Folder, "Rename a folder"),
      body: FolderBody,
    })
    .delete("/api/folders/:id", async ({ auth, params, query }) => ({ data: await folders.delete(auth, params.id, query.moveTo) }), {
      permission: "workflow:write",
      ...route.byId(
        t.Object({ id: Uuid, deleted: t.Boolean(), moved: Type.Integer() }),
        "Delete a folder; one holding workflows is refused (409, with the count) unless ?moveTo=<folderId> or ?moveTo=root",
      ),
      query: t.Object(
        { moveTo: t.Optional(t.String({ description: "a folder id, or root; required when the folder holds workflows" })) },
        { additionalProperties: true },
      ),
    })
    .post("/api/workflows/move", async ({ auth, body }) => ({ data: await folders.move(auth, body.workflowIds, body.folderId) }), {
      permission: "workflow:write",
      ...route.answer(
        t.Object({ moved: Type.Integer(), folderId: t.Union([Uuid, t.Null()]) }),
        "Move workflows into a folder (folderId null: out of every folder); all or nothing",
      ),
      body: MoveBody,
    });
