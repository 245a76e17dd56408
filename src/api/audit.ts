/**
 * The audit log of the caller's workspace (Settings → Audit log; docs/teams.md, "Audit log"): read it filtered
 * and paged, or export it as JSON lines. `auditOf` is how every other route tells the log what it just did.
 */
import type { Server } from "bun";
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import type { Audit, AuditContext, AuditTarget } from "../core/audit";
import type { Principal } from "../core/identity";
import type { AuditFilter } from "../store/audit";
import { PageQuery, pageOf } from "../schema/common";
import { AuditList } from "../schema/audit";
import { clientOf } from "../net/client-address";

const tags = ["Audit"];

/** What a handler's context holds that the log needs. */
export interface CallContext {
  auth: Principal;
  request: Request;
  server?: Server<unknown> | null;
}

/**
 * The address a request came from: the socket's, or behind a proxy listed in WEFT_TRUSTED_PROXIES the client it
 * names in X-Forwarded-For; from anyone else that header, which any client may send, never counts
 * (docs/teams.md, "Audit log"; src/net/client-address.ts).
 */
export function addressOf(request: Request, server?: Server<unknown> | null): string | null {
  return clientOf(request, server?.requestIP(request)?.address).address;
}

export const userAgentOf = (request: Request) => request.headers.get("user-agent")?.slice(0, 500) ?? null;

/** The request as the audit log's context. */
export const whoCalled = (audit: Audit, ctx: CallContext): Promise<AuditContext> =>
  audit.contextOf(ctx.auth, addressOf(ctx.request, ctx.server), userAgentOf(ctx.request));

/** Records `action` done by the call in `ctx`. */
export async function auditOf(audit: Audit, ctx: CallContext, action: string, target: AuditTarget | null, details?: Record<string, unknown>) {
  await audit.record(await whoCalled(audit, ctx), action, target, details);
}

/** A workflow as the audit log names it (the routes' and the MCP tools'). */
export const workflowTarget = (w: { id: string; name: string }): AuditTarget => ({ type: "workflow", id: w.id, name: w.name });

/** Records `action` on `target` done by the call in `ctx`, then answers `data` in the envelope: how a change ends. */
export async function audited<T>(audit: Audit, ctx: CallContext, data: T, action: string, target: AuditTarget | null, details?: Record<string, unknown>) {
  await auditOf(audit, ctx, action, target, details);
  return { data };
}

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** A time filter as ISO 8601 UTC; unparseable is dropped, as the list endpoints' invalid filters are. */
function instant(value: string | undefined): string | undefined {
  if (!value || !ISO.test(value.trim())) return undefined;
  const ms = Date.parse(value.trim());
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

const text = (value: string | undefined) => (value?.trim() ? value.trim().slice(0, 200) : undefined);

function filterOf(workspaceId: string, query: Record<string, string | undefined>): AuditFilter {
  return {
    workspaceId,
    action: text(query.action),
    actor: text(query.actor),
    targetType: text(query.targetType),
    from: instant(query.from),
    to: instant(query.to),
  };
}

const AuditFilters = {
  action: t.Optional(t.String({ description: "exact action, e.g. workflow.published, login.failed" })),
  actor: t.Optional(t.String({ description: "the actor's id (user or token) or name (e-mail or token name)" })),
  targetType: t.Optional(t.String({ description: "workflow, connection, token, member, invitation, settings, piece, user" })),
  from: t.Optional(t.String({ description: "ISO 8601 date or time, inclusive; unparseable is ignored" })),
  to: t.Optional(t.String({ description: "ISO 8601 date or time, exclusive; unparseable is ignored" })),
};

export const auditApi = ({ security, audit }: AppDeps) =>
  new Elysia({ name: "api-audit" })
    .use(security)
    .get("/api/audit", ({ auth, query }) => audit.list(filterOf(auth.workspaceId, query), pageOf(query)), {
      permission: "workspace:admin",
      query: t.Object({ ...PageQuery, ...AuditFilters }, { additionalProperties: true }),
      response: AuditList,
      detail: {
        tags,
        summary: "The workspace's audit log, newest first: who did what, when, from where (filters action, actor, targetType, from, to; paged)",
      },
    })
    .get(
      "/api/audit/export",
      ({ auth, query }) => {
        const events = audit.export(filterOf(auth.workspaceId, query));
        const encoder = new TextEncoder();
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const next = await events.next();
            if (next.done) controller.close();
            else controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
          },
          async cancel() {
            await events.return(undefined);
          },
        });
        const day = new Date().toISOString().slice(0, 10);
        return new Response(body, {
          headers: { "content-type": "application/x-ndjson", "content-disposition": `attachment; filename="weft-audit-${day}.jsonl"` },
        });
      },
      {
        permission: "workspace:admin",
        query: t.Object(AuditFilters, { additionalProperties: true }),
        detail: {
          tags,
          summary: "Export the workspace's audit log as JSON lines (application/x-ndjson), one event a line, newest first; same filters as the list",
          responses: { 200: { description: "one audit event per line", content: { "application/x-ndjson": { schema: { type: "string" } } } } },
        },
      },
    );
