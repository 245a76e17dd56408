/** A folder of workflows as GET /api/folders lists it (src/api/folders.ts). */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DateTime, Uuid } from "./common";

export const Folder = t.Object({ id: Uuid, name: t.String(), workflowCount: Type.Integer(), workspaceId: Uuid, createdAt: DateTime, updatedAt: DateTime });
