/**
 * Request fields of the templates routes (src/api/templates.ts) and the MCP template tools
 * (src/mcp/tools/templates.ts), declared once.
 */
import { t } from "elysia";
import { Uuid } from "./common";

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
