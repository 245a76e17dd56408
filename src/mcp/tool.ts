/**
 * What an MCP tool is here: a name, the scope of the HTTP route it mirrors, an input schema built
 * from that route's own TypeBox schemas, and a function that calls the route's core function.
 * A tool returns what the route would put in its body (`{data}`, `{data,total}`, `{data,pagination}`),
 * so an agent reads the same shapes a script reads.
 */
import type { TObject } from "@sinclair/typebox";
import { t } from "elysia";
import type { AppDeps } from "../api/deps";
import type { AuditTarget } from "../core/audit";
import type { Principal } from "../core/identity";
import { Uuid } from "../schema/common";
import type { Permission } from "../schema/scopes";

export interface McpContext {
  deps: AppDeps;
  auth: Principal;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
}

export interface McpTool<A = any> {
  name: string;
  description: string;
  /** The scope of the HTTP route this tool mirrors (its `permission`). */
  scope: Permission;
  input: TObject;
  /** Read-only tools are marked so agents may call them without asking. */
  readOnly?: boolean;
  run(ctx: McpContext, args: A): Promise<Record<string, unknown>> | Record<string, unknown>;
}

export const defineTool = <A>(tool: McpTool<A>): McpTool<A> => tool;

/**
 * A tool on one record of the caller's workspace, named by its `id` (the input it takes, nothing else): answers
 * `{ data }` of what `call` gives for it, as the route `…/{id}` it mirrors does.
 */
export const recordTool = (
  tool: Omit<McpTool, "input" | "run">,
  call: (deps: AppDeps, workspaceId: string, id: string) => Promise<unknown>,
): McpTool<{ id: string }> => ({
  ...tool,
  input: t.Object({ id: Uuid }, { additionalProperties: false }),
  run: async ({ deps, auth }, args) => ({ data: await call(deps, auth.workspaceId, args.id) }),
});

/**
 * Records what a tool did in the audit log (docs/teams.md, "Audit log"), as a route does: the caller's user or
 * token; no address (a call over stdio has none); "mcp" as the client.
 */
export async function audited<T>(ctx: McpContext, action: string, target: (data: T) => AuditTarget, data: T, details?: Record<string, unknown>) {
  await ctx.deps.audit.record(await ctx.deps.audit.contextOf(ctx.auth, null, "mcp"), action, target(data), details);
  return { data };
}

export { workflowTarget } from "../api/audit";
