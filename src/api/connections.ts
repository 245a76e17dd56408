/** Connections (docs/connections.md): credentials a workspace holds for a piece, and the start of the OAuth2 flow. */
import { Elysia, type Static } from "elysia";
import type { AppDeps } from "./deps";
import { audited, type CallContext } from "./audit";
import { routeOptions } from "./route-options";
import { AuthorizeStart, Connection, ConnectionCreateBody, ConnectionListQuery, ConnectionTestResult, ConnectionUpdateBody } from "../schema/connection";

const route = routeOptions(["Connections"]);

export const connectionsApi = ({ security, connections, audit }: AppDeps) => {
  /**
   * A connection a route just changed: audited as `action` with its piece and `details`, never its credentials
   * (docs/teams.md, "Audit log"), and answered.
   */
  const changed = (ctx: CallContext, action: string, connection: Static<typeof Connection>, details: Record<string, unknown> = {}) =>
    audited(audit, ctx, connection, action, { type: "connection", id: connection.id, name: connection.name }, { pieceId: connection.pieceId, ...details });

  return new Elysia({ name: "api-connections" })
    .use(security)
    .post(
      "/api/connections",
      async (ctx) => {
        const { auth, body } = ctx;
        const data = await connections.create({ orgId: auth.orgId, workspaceId: auth.workspaceId, userId: auth.userId }, body);
        ctx.set.status = 201;
        return changed(ctx, "connection.created", data, { authKind: data.authKind });
      },
      {
        permission: "connection:write",
        ...route.creates(Connection, {
          summary: "Create a connection for a piece",
          description:
            "Takes the auth values the piece declares: clientId/clientSecret (and config for the generic oauth2 piece) for OAuth2, apiKey, username/password, or values for custom fields. OAuth2 authorization-code connections start `pending`; call POST /api/connections/{id}/oauth2/start next. Secrets are stored encrypted and never returned.",
        }),
        idempotent: true,
        body: ConnectionCreateBody,
      },
    )
    .get("/api/connections", ({ auth, query }) => connections.list(auth.workspaceId, query), {
      permission: "connection:read",
      ...route.list(Connection, "List the workspace's connections (filter by pieceId and status; paginated)"),
      query: ConnectionListQuery,
    })
    .get("/api/connections/:id", async ({ auth, params }) => ({ data: await connections.get(auth.workspaceId, params.id) }), {
      permission: "connection:read",
      ...route.byId(Connection, "Read a connection (poll it until status is active after the OAuth2 flow)"),
    })
    .patch(
      "/api/connections/:id",
      // The names of the fields changed, never their values.
      async (ctx) =>
        changed(ctx, "connection.updated", await connections.update(ctx.auth.workspaceId, ctx.params.id, ctx.body), { changed: Object.keys(ctx.body).sort() }),
      { permission: "connection:write", ...route.byId(Connection, "Rename a connection or replace its credentials"), body: ConnectionUpdateBody },
    )
    .delete("/api/connections/:id", async (ctx) => changed(ctx, "connection.deleted", await connections.delete(ctx.auth.workspaceId, ctx.params.id)), {
      permission: "connection:write",
      ...route.byId(Connection, "Delete a connection; refused while a live workflow uses it (the refusal names the workflows)"),
    })
    .post(
      "/api/connections/:id/oauth2/start",
      async ({ auth, params, set }) => {
        set.headers["cache-control"] = "no-store";
        return { data: await connections.startOAuth2(auth.workspaceId, params.id) };
      },
      {
        permission: "connection:write",
        ...route.byId(AuthorizeStart, {
          summary: "Start the OAuth2 authorization: returns the provider's authorize URL",
          description:
            "No body; does not accept Idempotency-Key. The authorizeUrl carries response_type=code, client_id, redirect_uri, scope, access_type=offline, the piece's extra parameters, PKCE (S256) and a signed state bound to the connection that expires after 10 minutes by default (WEFT_OAUTH_STATE_TTL_SECONDS) and works once. A fresh URL is minted per call; do not cache it. Send a person's browser to it; the provider redirects to redirectUri, which completes the connection. Then poll GET /api/connections/{id} until status is active.",
        }),
        idempotent: false,
      },
    )
    .post("/api/connections/:id/test", async ({ auth, params }) => ({ data: await connections.test(auth.workspaceId, params.id) }), {
      permission: "connection:write",
      ...route.byId(ConnectionTestResult, "Check a connection with the piece's declared check (refreshing its token if needed)"),
    });
};
