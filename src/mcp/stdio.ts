/**
 * `weft mcp`: the same tools over stdio for desktop agents. The process opens the data directory like
 * `weft serve` (without listening), acts as the API token in WEFT_TOKEN, and keeps stdout for JSON-RPC:
 * every log line goes to stderr.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { AppDeps } from "../api/deps";
import { AppError } from "../http/errors";
import { createMcpServer, principalOf, toolsFor, type PrincipalSource } from "./server";

/** How often a stdio session looks for callable workflows that went live or were unpublished. */
const TOOL_LIST_POLL_MS = 1_000;

const signatureOf = async (deps: AppDeps, auth: PrincipalSource) =>
  (await toolsFor(deps, await principalOf(auth))).map((tool) => `${tool.name}\u0000${JSON.stringify(tool.input)}`).join("\u0001");

/**
 * The API token's principal, resolved again at every request (Identity caches it briefly and drops it when a token
 * is revoked or a membership changes), so a long-lived session stops or shrinks as the HTTP API does (docs/teams.md).
 */
export function tokenPrincipal(deps: AppDeps, token: string): PrincipalSource {
  return async () => {
    const principal = await deps.identity.authenticateToken(token);
    if (!principal) throw new AppError("UNAUTHORIZED", "WEFT_TOKEN was revoked, or its member was deactivated or removed from the workspace");
    return principal;
  };
}

/** Serves MCP on stdin/stdout until stdin closes; resolves then. */
export async function serveMcpStdio(deps: AppDeps, auth: PrincipalSource, version: string): Promise<void> {
  const server = createMcpServer(deps, auth, { version, listChanged: true });
  const transport = new StdioServerTransport();
  // A stdio session is long-lived, so it can tell the agent when the callable-workflow tools change.
  let signature = await signatureOf(deps, auth);
  // Each check is awaited within its tick and catches its own failure (a timer's rejection would end the process).
  const poll = setInterval(async () => {
    try {
      const next = await signatureOf(deps, auth);
      if (next === signature) return;
      signature = next;
      void server.sendToolListChanged().catch(() => {});
    } catch (error) {
      deps.log.warn("mcp: tool list check failed", { error: (error as Error).message });
    }
  }, TOOL_LIST_POLL_MS);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  clearInterval(poll);
  await server.close().catch(() => {});
}
