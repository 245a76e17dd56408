/**
 * The OpenAPI 3.1 contract, generated from the routes' own TypeBox schemas and `detail`
 * (which the `permission` macro fills with `x-permission` and `security`).
 */
import { toOpenAPISchema } from "@elysiajs/openapi";
import "../../http/string-formats";
import type { AnyElysia } from "elysia";

/** The API's resource groups in the order a workflow's life meets them, then the service's own groups. */
export const TAGS = [
  { name: "Workflows", description: "Create, read, update and delete workflows" },
  { name: "Lifecycle", description: "Validate, publish, run, versions and variables" },
  { name: "Runs", description: "Executions and their steps" },
  { name: "Pieces", description: "The catalog of triggers and actions, and their schema projections" },
  { name: "Connections", description: "Credentials and OAuth2" },
  { name: "Folders", description: "Folders that organise workflows" },
  { name: "Templates", description: "Workflow templates" },
  { name: "Editor Internals", description: "Operations used by the builder UI" },
  { name: "Identity", description: "Sessions, API tokens and workspaces" },
  { name: "Members", description: "Roles, members and invitations of a workspace (docs/teams.md)" },
  { name: "Audit", description: 'Who did what, when, from where in a workspace, and its export (docs/teams.md, "Audit log")' },
  { name: "Settings", description: "Instance-wide settings: the private networks steps may reach" },
  { name: "Triggers", description: "Public trigger endpoints (no bearer token)" },
  { name: "Service", description: "Health, readiness, metrics, contract, documentation, UI and MCP" },
];

const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" }, details: {} },
    },
  },
};

export function buildOpenApi(app: AnyElysia, info: { version: string; serverUrl: string }) {
  const { paths, components } = toOpenAPISchema(app, { staticFile: false }, undefined, undefined, "3.1.0") as any;
  // Our global JSON parser is a function, which the generator cannot map to a content type, so it
  // leaves request bodies without content; put each route's own body schema back as JSON.
  for (const route of app.routes as Array<{ method: string; path: string; hooks?: { body?: unknown } }>) {
    const body = route.hooks?.body;
    const operation = paths[route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")]?.[route.method.toLowerCase()];
    if (!operation || !body || typeof body !== "object") continue;
    operation.requestBody ??= { required: true };
    if (Object.keys(operation.requestBody.content ?? {}).length === 0)
      operation.requestBody.content = { "application/json": { schema: JSON.parse(JSON.stringify(body)) } };
  }
  for (const operations of Object.values<any>(paths)) {
    for (const operation of Object.values<any>(operations)) {
      // Elysia lists every content type a body could be parsed from; our bodies are JSON.
      const content = operation.requestBody?.content;
      if (content?.["application/json"]) operation.requestBody.content = { "application/json": content["application/json"] };
      operation.responses ??= {};
      if (Object.keys(operation.responses).length === 0) operation.responses["200"] = { description: 'Success, inside the envelope {"data": ...}' };
      operation.responses.default ??= { description: "Failure envelope", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Weft API",
      version: info.version,
      description:
        'Every response is inside a JSON envelope: {"data": ...} on success, {"error": {"code", "message"}} on failure. Each operation\'s required scope is its x-permission.',
    },
    servers: [{ url: info.serverUrl }],
    tags: TAGS,
    paths,
    components: {
      ...components,
      schemas: { ...(components?.schemas ?? {}), Error: ERROR_SCHEMA },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "API token from Settings → Workspace → API tokens" },
        session: { type: "apiKey", in: "cookie", name: "weft_session", description: "Browser session; writes need X-CSRF-Token" },
      },
    },
  };
}
