/**
 * The MCP server for one principal: `tools/list` and `tools/call` over the SDK's low-level Server.
 * The same server serves the Streamable HTTP route (one per request, stateless) and `weft mcp` (stdio,
 * one per process). The tool list is computed per call: the fixed tools plus one tool per live
 * callable workflow of the principal's workspace.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TObject } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { AppDeps } from "../api/deps";
import { scopeRefusal, type Principal } from "../core/identity";
import { AppError } from "../http/errors";
import { EDIT_SCOPES } from "../schema/scopes";
import { validationResponse } from "../http/error-handler";
import { callableTools } from "./callable-tools";
import { STATIC_TOOLS } from "./catalog";
import type { McpTool } from "./tool";

export const MCP_INSTRUCTIONS =
  "Weft builds and runs workflows. Typical loop: list_pieces → get_piece_summary (discriminators) → get_action_schema / get_trigger_schema " +
  "with gate values → create_workflow → validate_workflow (fix what the diagnostics name) → publish_workflow → run_workflow (wait) → get_run. " +
  "Every result is the HTTP API's JSON body ({data} or {data,total}); errors carry the API's {error:{code,message}}.";

// Compiled once per schema object; callable-workflow tools bring fresh schemas and are compiled per call.
const checks = new WeakMap<TObject, TypeCheck<TObject>>();
function checkerOf(schema: TObject): TypeCheck<TObject> {
  let check = checks.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    checks.set(schema, check);
  }
  return check;
}

/** The JSON Schema an MCP client sees: TypeBox's schema without its symbol keys. */
const jsonSchemaCache = new WeakMap<TObject, Tool["inputSchema"]>();
function toInputSchema(schema: TObject): Tool["inputSchema"] {
  let out = jsonSchemaCache.get(schema);
  if (!out) {
    out = JSON.parse(JSON.stringify(schema)) as Tool["inputSchema"];
    jsonSchemaCache.set(schema, out);
  }
  return out;
}

/** The error envelope of the HTTP API, as an MCP tool error (the agent can read and fix it). */
export function toolError(code: string, message: string, details?: unknown): CallToolResult {
  const error = details === undefined ? { code, message } : { code, message, details };
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error }) }], structuredContent: { error } };
}

function toolResult(body: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
}

const STATIC_BY_NAME = new Map(STATIC_TOOLS.map((tool) => [tool.name, tool]));

/** Every tool the principal's workspace has right now. */
export async function toolsFor(deps: AppDeps, auth: Principal): Promise<McpTool[]> {
  return [...STATIC_TOOLS, ...(await callableTools(deps, auth, new Set(STATIC_BY_NAME.keys())))];
}

export async function callTool(deps: AppDeps, auth: Principal, name: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
  // Fixed tools are found without reading the workspace's callable workflows.
  let tool = STATIC_BY_NAME.get(name);
  if (!tool) {
    const tools = await toolsFor(deps, auth);
    tool = tools.find((candidate) => candidate.name === name);
    if (!tool) return toolError("NOT_FOUND", `tool "${name}" not found; tools: ${tools.map((t) => t.name).join(", ")}`);
  }
  // The same refusal the HTTP route's permission macro gives.
  if (tool.scope !== "authenticated" && tool.scope !== "public" && !auth.scopes.has(tool.scope)) {
    const refusal = scopeRefusal(auth, tool.scope);
    return toolError(refusal.code, refusal.message, refusal.details);
  }
  // A workspace managed by git takes workflow edits only from pulls (docs/workflows-as-code.md, "Environments").
  if (EDIT_SCOPES.has(tool.scope)) {
    try {
      await deps.gitSync.assertEditable(auth.workspaceId);
    } catch (error) {
      if (error instanceof AppError) return toolError(error.code, error.message, error.details);
      throw error;
    }
  }
  const input = args ?? {};
  const check = checkerOf(tool.input);
  if (!check.Check(input)) {
    const { body } = validationResponse("arguments", [...check.Errors(input)] as any);
    return toolError(body.error.code, body.error.message, (body.error as { details?: unknown }).details);
  }
  try {
    return toolResult(await tool.run({ deps, auth, signal }, input));
  } catch (error) {
    if (error instanceof AppError) return toolError(error.code, error.message, error.details);
    const requestId = crypto.randomUUID();
    deps.log.error("mcp tool failed", { tool: name, requestId, error: (error as Error)?.stack ?? String(error) });
    return toolError("INTERNAL", `internal error; quote request id ${requestId} when reporting it`);
  }
}

/**
 * Who the server acts as: a principal resolved once (the HTTP route: one server per request), or resolved again at
 * every request (`weft mcp`: a long-lived process, which must stop when its token is revoked or its member's role
 * changes, as the HTTP API does; docs/teams.md).
 */
export type PrincipalSource = Principal | (() => Promise<Principal>);
export const principalOf = (source: PrincipalSource): Promise<Principal> => (typeof source === "function" ? source() : Promise.resolve(source));

export function createMcpServer(deps: AppDeps, source: PrincipalSource, options: { version: string; listChanged?: boolean }): Server {
  const server = new Server(
    { name: "weft", version: options.version },
    { capabilities: { tools: { listChanged: options.listChanged ?? false } }, instructions: MCP_INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await toolsFor(deps, await principalOf(source))).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: toInputSchema(tool.input),
      annotations: { readOnlyHint: tool.readOnly === true },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    let auth: Principal;
    try {
      auth = await principalOf(source);
    } catch (error) {
      if (error instanceof AppError) return toolError(error.code, error.message);
      throw error;
    }
    return callTool(deps, auth, request.params.name, request.params.arguments, extra.signal);
  });
  return server;
}
