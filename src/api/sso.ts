/** Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on"): the login page's buttons, the redirect and callback, Settings → Single sign-on. */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { addressOf, userAgentOf } from "./audit";
import { secureCookie, sessionCookieHeader } from "./identity";
import { AppError } from "../http/errors";
import { created, routeOptions } from "./route-options";
import { IdParams, wholeList } from "../schema/common";
import { SsoProvider, SsoProviderBody, SsoProviderPublic } from "../schema/sso";

const route = routeOptions(["Identity"]);

export const ssoApi = ({ sso, security, config, audit }: AppDeps) => {
  return new Elysia({ name: "api-sso" })
    .use(security)
    .get("/api/auth/sso", async () => wholeList(await sso.listPublic()), {
      permission: "public",
      ...route.list(SsoProviderPublic, "The single sign-on providers the login page offers"),
    })
    .get(
      "/api/auth/sso/:id/start",
      async ({ params, set }) => {
        set.status = 302;
        set.headers.location = (await sso.start(params.id)).toString();
        set.headers["cache-control"] = "no-store";
        return "";
      },
      { permission: "public", params: IdParams, detail: route.detail("Start signing in with a provider: redirects to its authorization endpoint") },
    )
    .get(
      "/api/auth/sso/:id/callback",
      async ({ params, request, set, server }) => {
        let session: Awaited<ReturnType<typeof sso.callback>>;
        try {
          session = await sso.callback(params.id, new URL(request.url).searchParams);
        } catch (error) {
          // A browser is sent back to the login page, which shows why; an API client gets the envelope.
          if (!(error instanceof AppError) || !request.headers.get("accept")?.includes("text/html")) throw error;
          set.status = 303;
          set.headers.location = `/?ssoError=${encodeURIComponent(error.message)}`;
          return "";
        }
        await audit.login(session.user.email, addressOf(request, server), userAgentOf(request), {
          userId: session.user.id,
          workspaceId: session.workspaceId,
        });
        set.headers["set-cookie"] = sessionCookieHeader(session.sessionId, session.expiresAt, secureCookie(config.publicUrl, request));
        set.headers["content-type"] = "text/html; charset=utf-8";
        set.headers["cache-control"] = "no-store";
        // A page of ours that moves on: a SameSite=Strict cookie is sent on a navigation this origin starts, not on
        // a redirect chain the provider started.
        return '<!doctype html><meta http-equiv="refresh" content="0;url=/"><title>Signed in</title><a href="/">Continue to Weft</a>';
      },
      {
        permission: "public",
        params: IdParams,
        detail: route.detail("The provider's redirect back: validates state, nonce, PKCE and the ID token, then opens a session"),
      },
    )
    .get("/api/sso/providers", async ({ auth }) => wholeList(await sso.list(auth.orgId)), {
      permission: "workspace:admin",
      ...route.list(SsoProvider, "The org's single sign-on providers (never their client secrets)"),
    })
    .post("/api/sso/providers", async ({ auth, body, set }) => created(set, await sso.create(auth, body)), {
      permission: "workspace:admin",
      ...route.creates(SsoProvider, "Add a single sign-on provider (owner); the client secret is stored encrypted"),
      body: SsoProviderBody,
    })
    .get("/api/sso/providers/:id", async ({ auth, params }) => ({ data: await sso.get(auth.orgId, params.id) }), {
      permission: "workspace:admin",
      ...route.byId(SsoProvider, "One single sign-on provider"),
    })
    .put("/api/sso/providers/:id", async ({ auth, params, body }) => ({ data: await sso.update(auth, params.id, body) }), {
      permission: "workspace:admin",
      ...route.byId(SsoProvider, "Change a single sign-on provider (owner); an omitted clientSecret keeps the stored one"),
      body: SsoProviderBody,
    })
    .delete("/api/sso/providers/:id", async ({ auth, params }) => ({ data: await sso.remove(auth, params.id) }), {
      permission: "workspace:admin",
      ...route.byId(SsoProvider, "Remove a single sign-on provider (owner)"),
    });
};
