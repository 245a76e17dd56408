/** Folders: organise workflows (workflow scopes). */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { Data, IdParams, List, Uuid } from "../schema/common";
import { Folder } from "../schema/folder";
import { MoveBody } from "../schema/workflow-record";

const tags = ["Folders"];
const FolderBody = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export const foldersApi = ({ security, folders }: AppDeps) =>
  new Elysia({ name: "api-folders" })
    .use(security)
    .get("/api/folders", ({ auth }) => folders.list(auth.workspaceId), {
      permission: "workflow:read",
      response: List(Folder),
      detail: { tags, summary: "List folders with their workflow counts (GET /api/workflows?folderId= lists a folder's workflows)" },
    })
    .post(
      "/api/folders",
      async ({ auth, body, set }) => {
        const data = await folders.create(auth, body.name);
        set.status = 201;
        return { data };
      },
      {
        permission: "workflow:write",
        body: FolderBody,
        response: { 201: Data(Folder) },
        detail: { tags, summary: "Create a folder (names are unique in a workspace, ignoring case)" },
      },
    )
    .get("/api/folders/:id", async ({ auth, params }) => ({ data: await folders.get(auth.workspaceId, params.id) }), {
      permission: "workflow:read",
      params: IdParams,
      response: Data(Folder),
      detail: { tags, summary: "Read a folder" },
    })
    .put("/api/folders/:id", async ({ auth, params, body }) => ({ data: await folders.rename(auth, params.id, body.name) }), {
      permission: "workflow:write",
      params: IdParams,
      body: FolderBody,
      response: Data(Folder),
      detail: { tags, summary: "Rename a folder" },
    })
    .delete("/api/folders/:id", async ({ auth, params, query }) => ({ data: await folders.delete(auth, params.id, query.moveTo) }), {
      permission: "workflow:write",
      params: IdParams,
      query: t.Object(
        { moveTo: t.Optional(t.String({ description: "a folder id, or root; required when the folder holds workflows" })) },
        { additionalProperties: true },
      ),
      response: Data(t.Object({ id: Uuid, deleted: t.Boolean(), moved: Type.Integer() })),
      detail: { tags, summary: "Delete a folder; one holding workflows is refused (409, with the count) unless ?moveTo=<folderId> or ?moveTo=root" },
    })
    .post("/api/workflows/move", async ({ auth, body }) => ({ data: await folders.move(auth, body.workflowIds, body.folderId) }), {
      permission: "workflow:write",
      body: MoveBody,
      response: Data(t.Object({ moved: Type.Integer(), folderId: t.Union([Uuid, t.Null()]) })),
      detail: { tags, summary: "Move workflows into a folder (folderId null: out of every folder); all or nothing" },
    });
