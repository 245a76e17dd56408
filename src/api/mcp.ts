/**
 * The MCP endpoint (Streamable HTTP, stateless): each POST carries JSON-RPC messages and gets the
 * answers back as JSON. The bearer token authenticates here; each tool checks its own scope, the
 * one of the HTTP route it mirrors. There are no sessions, so no GET stream and no DELETE.
 */
import { Elysia, t } from "elysia";
import packageJson from "../../package.json" with { type: "json" };
import type { AppDeps } from "./deps";
import { AppError } from "../http/errors";

// The MCP SDK (with zod) weighs ~25 MB of RSS: load it with the first /mcp call, not at start-up.
let runtime:
  | Promise<{
      createMcpServer: typeof import("../mcp/server").createMcpServer;
      Transport: typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js").WebStandardStreamableHTTPServerTransport;
    }>
  | undefined;
const loadMcp = () =>
  (runtime ??= Promise.all([import("../mcp/server"), import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")]).then(([server, transport]) => ({
    createMcpServer: server.createMcpServer,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
  })));

const tags = ["Service"];

const JsonRpcBody = t.Union([t.Record(t.String(), t.Unknown()), t.Array(t.Record(t.String(), t.Unknown()))], {
  description: "one JSON-RPC 2.0 message or a batch (MCP Streamable HTTP); send Accept: application/json, text/event-stream",
});

const notOffered = () => {
  throw new AppError(
    "VALIDATION_FAILED",
    "this MCP server is stateless: send JSON-RPC messages with POST /mcp; there is no server-sent stream and no session to delete",
    undefined,
    405,
    { allow: "POST" },
  );
};

export const mcpApi = (deps: AppDeps) =>
  new Elysia({ name: "api-mcp" })
    .use(deps.security)
    .post(
      "/mcp",
      async ({ request, body, auth }) => {
        const { createMcpServer, Transport } = await loadMcp();
        const server = createMcpServer(deps, auth, { version: packageJson.version });
        const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await server.connect(transport);
        try {
          return await transport.handleRequest(request, { parsedBody: body });
        } finally {
          // JSON mode answers only after every response is ready, so closing here cuts nothing short.
          void server.close();
        }
      },
      {
        permission: "authenticated",
        body: JsonRpcBody,
        detail: {
          tags,
          summary: "MCP server for AI agents (Streamable HTTP, stateless; tools mirror the API and check the same scopes)",
          description:
            "Tools: list/get/create/update workflows, validate, publish, unpublish, versions, restore, run, runs, pieces, schema projections, dynamic options, connections, templates, plus one tool per live callable workflow. See docs/mcp.md.",
        },
      },
    )
    .get("/mcp", notOffered, { permission: "authenticated", detail: { tags, summary: "Not offered: the MCP server is stateless (answers 405)" } })
    .delete("/mcp", notOffered, { permission: "authenticated", detail: { tags, summary: "Not offered: the MCP server is stateless (answers 405)" } });
