/** Template tools: the catalog and "use" (a new draft), as src/api/templates.ts. */
import { t } from "elysia";
import { AppError } from "../../http/errors";
import { TemplateFilters, TemplateId, UseTemplateFields } from "../../schema/template";
import { pageOfArgs, PageArgs, type PageArgsT } from "../page-args";
import { defineTool } from "../tool";

const strict = { additionalProperties: false } as const;

export const templateTools = [
  defineTool<PageArgsT & { q?: string; category?: string; source?: string }>({
    name: "list_templates",
    description: "List workflow templates: the built-in catalog and the workspace's own (filter by q, category, source builtin|workspace).",
    scope: "template:read",
    readOnly: true,
    input: t.Object({ ...PageArgs, ...TemplateFilters }, strict),
    run: ({ deps, auth }, args) => deps.templates.list(auth.workspaceId, { ...pageOfArgs(args), q: args.q, category: args.category, source: args.source }),
  }),
  defineTool<{ id: string; name?: string; folderId?: string | null }>({
    name: "use_template",
    description: "Create a draft workflow from a template; then adjust it with update_workflow, validate and publish.",
    scope: "workflow:write",
    input: t.Object({ id: TemplateId, ...UseTemplateFields }, strict),
    run: async ({ deps, auth }, { id, ...body }) => {
      // As the route: creating needs workflow:write (the tool's scope), reading the template template:read.
      if (!auth.scopes.has("template:read"))
        throw new AppError(
          "FORBIDDEN",
          `this operation requires the scopes "workflow:write" and "template:read"; the credential has: ${[...auth.scopes].join(", ")}`,
        );
      return { data: await deps.templates.use(auth, id, body) };
    },
  }),
];
