/**
 * The OpenAPI 3.1 contract, generated from the routes' own TypeBox schemas and `detail`
 * (which the `permission` macro fills with `x-permission` and `security`).
 */
import { toOpenAPISchema } from "@elysiajs/openapi";
import "../../http/string-formats";
import type { AnyElysia } from "elysia";
import { escapeHtml } from "../../lib/html";

/** Resource groups in the spec's order (spec §1), then the service's own groups. */
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
  { name: "Triggers", description: "Public trigger endpoints (no bearer token)" },
  { name: "Service", description: "Health, contract, documentation, UI and MCP" },
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

/** A readable, dependency-free documentation page (works offline inside the binary). */
export function renderDocsPage(doc: ReturnType<typeof buildOpenApi>): string {
  const esc = escapeHtml;
  const byTag = new Map<string, string[]>();
  for (const [path, operations] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(operations)) {
      const tag = op.tags?.[0] ?? "Service";
      const row =
        `<details><summary><code class="m ${esc(method)}">${esc(method.toUpperCase())}</code> <code>${esc(path)}</code> — ${esc(op.summary)} <span class="scope">${esc(op["x-permission"])}</span></summary>` +
        `${op.description ? `<p>${esc(op.description)}</p>` : ""}<pre>${esc(JSON.stringify({ parameters: op.parameters, requestBody: op.requestBody?.content?.["application/json"]?.schema, responses: op.responses }, null, 2))}</pre></details>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
    }
  }
  const sections = doc.tags.filter((t) => byTag.has(t.name)).map((t) => `<h2>${esc(t.name)}</h2><p>${esc(t.description)}</p>${byTag.get(t.name)!.join("")}`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Weft API</title><meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1d232a}summary{cursor:pointer;padding:.3rem 0}
pre{background:#f4f5f7;padding:.8rem;overflow:auto;font-size:12px}.m{display:inline-block;min-width:4.5em;font-weight:600}.get{color:#0a7}.post{color:#06c}.put,.patch{color:#a60}.delete{color:#c22}
.scope{float:right;color:#667;font-size:12px}</style></head><body><h1>Weft API</h1><p>${esc(doc.info.description)} The machine-readable contract is at <a href="/api/openapi.json">/api/openapi.json</a>.</p>${sections.join("")}</body></html>`;
}
