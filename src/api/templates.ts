/** Templates: the built-in catalog plus workspace templates; using one creates a draft workflow. */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { AppError } from "../http/errors";
import { created, Deleted, routeOptions } from "./route-options";
import { PageQuery, pageOf, Uuid } from "../schema/common";
import { TemplateFilters, TemplateId, TemplateSummary, UseTemplateFields } from "../schema/template";
import { FlowVersion } from "../schema/workflow";
import { Workflow } from "../schema/workflow-record";

const route = routeOptions(["Templates"]);
const TemplateParams = t.Object({ id: TemplateId });
const Template = t.Composite([TemplateSummary, t.Object({ definition: FlowVersion })]);

export const templatesApi = ({ security, templates }: AppDeps) =>
  new Elysia({ name: "api-templates" })
    .use(security)
    .get(
      "/api/templates",
      ({ auth, query }) => templates.list(auth.workspaceId, { ...pageOf(query), q: query.q, category: query.category, source: query.source }),
      {
        permission: "template:read",
        ...route.list(TemplateSummary, "List templates: the built-in catalog and the workspace's own (filters q, category, source)"),
        query: t.Object({ ...PageQuery, ...TemplateFilters }, { additionalProperties: true }),
      },
    )
    .get("/api/templates/:id", async ({ auth, params }) => ({ data: await templates.get(auth.workspaceId, params.id) }), {
      permission: "template:read",
      ...route.answer(Template, "Read a template with its definition"),
      params: TemplateParams,
    })
    .post("/api/templates", async ({ auth, body, set }) => created(set, await templates.createFromWorkflow(auth, body)), {
      permission: "template:write",
      ...route.creates(Template, "Make a workspace template from a workflow's draft (connection ids removed)"),
      body: t.Object(
        {
          workflowId: Uuid,
          name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
          description: t.Optional(t.String({ maxLength: 5000 })),
          category: t.Optional(t.String({ minLength: 1, maxLength: 50 })),
        },
        { additionalProperties: false },
      ),
    })
    .delete("/api/templates/:id", async ({ auth, params }) => ({ data: await templates.delete(auth, params.id) }), {
      permission: "template:write",
      ...route.answer(Deleted, "Delete a workspace template (built-in templates cannot be deleted)"),
      params: TemplateParams,
    })
    .post(
      "/api/templates/:id/use",
      async ({ auth, params, body, set }) => {
        // Creating the workflow needs workflow:write (the route's scope); reading the template needs template:read too.
        if (!auth.scopes.has("template:read"))
          throw new AppError(
            "FORBIDDEN",
            `this operation requires the scopes "workflow:write" and "template:read"; the credential has: ${[...auth.scopes].join(", ")}`,
          );
        return created(set, await templates.use(auth, params.id, body ?? {}));
      },
      {
        permission: "workflow:write",
        ...route.creates(Workflow, "Create a draft workflow from a template (needs template:read as well)"),
        idempotent: true,
        params: TemplateParams,
        body: t.Optional(t.Object(UseTemplateFields, { additionalProperties: false })),
      },
    );
