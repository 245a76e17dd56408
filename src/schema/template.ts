/**
 * Request fields of the templates routes (src/api/templates.ts) and the MCP template tools
 * (src/mcp/tools/templates.ts), declared once.
 */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DateTime, Uuid } from "./common";

export const TemplateId = t.String({ minLength: 1, maxLength: 100, description: "template id (uuid) or a built-in template's slug" });

/** Filters of the template list (besides paging). */
export const TemplateFilters = {
  q: t.Optional(t.String()),
  category: t.Optional(t.String()),
  source: t.Optional(t.String({ description: "builtin or workspace; other values are ignored" })),
};

/** What "use a template" takes besides the template id. */
export const UseTemplateFields = {
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  folderId: t.Optional(t.Union([Uuid, t.Null()])),
};

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

/** A template as GET /api/templates lists it; GET /api/templates/{id} adds its definition. */
export const TemplateSummary = t.Object({
  id: t.String(),
  slug: Nullable(t.String()),
  name: t.String(),
  description: t.String(),
  category: t.String(),
  source: t.Union([t.Literal("builtin"), t.Literal("workspace")]),
  triggerType: t.String(),
  pieces: t.Array(t.String()),
  stepCount: Type.Integer(),
  sourceWorkflowId: Nullable(t.String()),
  createdAt: Nullable(DateTime),
});
