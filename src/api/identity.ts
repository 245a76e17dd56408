/** Sessions for the UI, API tokens and workspaces (Settings → Workspace → API tokens). */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { SESSION_COOKIE } from "./middleware/security";
import { addressOf, audited, auditOf, userAgentOf } from "./audit";
import { created, routeOptions } from "./route-options";
import { AppError } from "../http/errors";
import { clientOf } from "../net/client-address";
import { Data, wholeList } from "../schema/common";
import {
  LoginBody,
  PasswordChangeBody,
  PasswordChanged,
  Session,
  SessionsRevoked,
  SetupBody,
  Token,
  TokenCreateBody,
  TokenCreated,
  Workspace,
  WorkspaceCreateBody,
} from "../schema/identity";

const route = routeOptions(["Identity"]);

export function sessionCookieHeader(value: string, expiresAt: string, secure: boolean) {
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Expires=${new Date(expiresAt).toUTCString()}${secure ? "; Secure" : ""}`;
}

/**
 * A session cookie is `Secure` when the public URL is https or this request came over HTTPS, directly or as a
 * proxy of WEFT_TRUSTED_PROXIES says (docs/teams.md, "Sessions").
 */
export const secureCookie = (publicUrl: string, request: Request) => publicUrl.startsWith("https:") || clientOf(request).https;

/** A browser session as the audit log names it: by its browser. */
const sessionTarget = (session: { id: string; userAgent: string | null }) => ({ type: "session", id: session.id, name: session.userAgent ?? "" });
/** An API token as the audit log names it. */
const tokenTarget = (token: { id: string; name: string }) => ({ type: "token", id: token.id, name: token.name });

export const identityApi = ({ identity, sso, secondFactor, security, config, audit, loginGuard: guard }: AppDeps) => {
  return new Elysia({ name: "api-identity" })
    .use(security)
    .get("/api/auth/status", async () => ({ data: { needsSetup: await identity.needsSetup() } }), {
      permission: "public",
      detail: route.detail("Whether the first owner account still has to be created"),
      response: Data(t.Object({ needsSetup: t.Boolean() })),
    })
    .post(
      "/api/auth/setup",
      async ({ body, set, request }) => {
        const session = await identity.setupOwner(body);
        set.headers["set-cookie"] = sessionCookieHeader(session.sessionId, session.expiresAt, secureCookie(config.publicUrl, request));
        set.status = 201;
        return { data: { user: session.user, workspaceId: session.workspaceId, csrfToken: session.csrfToken } };
      },
      {
        permission: "public",
        body: SetupBody,
        detail: route.detail("Create the first owner account (only while no user exists)"),
      },
    )
    .post(
      "/api/auth/login",
      async ({ body, set, request, server }) => {
        const ip = addressOf(request, server);
        const attempt = guard.attempt(body.email, ip);
        const user = await identity.checkPassword(body.email, body.password).catch(async (error) => {
          if (error instanceof AppError && error.code === "UNAUTHORIZED") {
            await audit.login(body.email, ip, userAgentOf(request));
            // Under "SSO only" a wrong password is refused as a right one is, so the answer tells no owner apart (docs/teams.md).
            await sso.assertPasswordAllowed(null);
          }
          throw error;
        });
        await sso.assertPasswordAllowed(user);
        attempt.succeeded();
        // With a second factor on, no session yet: a ticket for POST /api/auth/login/second-factor (docs/teams.md).
        if (await secondFactor.isOn(user.id)) return { data: { secondFactorRequired: true, ...(await secondFactor.startLogin(user)) } };
        const session = await identity.openSession(user, undefined, { address: ip, userAgent: userAgentOf(request) });
        await audit.login(session.user.email, ip, userAgentOf(request), { userId: session.user.id, workspaceId: session.workspaceId });
        set.headers["set-cookie"] = sessionCookieHeader(session.sessionId, session.expiresAt, secureCookie(config.publicUrl, request));
        return { data: { user: session.user, workspaceId: session.workspaceId, csrfToken: session.csrfToken } };
      },
      {
        permission: "public",
        body: LoginBody,
        detail: route.detail(
          "Log in with email and password; sets an HttpOnly session cookie, or, for an account with a second factor, answers secondFactorRequired and a ticket for POST /api/auth/login/second-factor",
        ),
      },
    )
    .post(
      "/api/auth/logout",
      async ({ request, set }) => {
        const cookie = /(?:^|;\s*)weft_session=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1];
        // A session from a provider also ends there when the provider offers it (RP-initiated logout): the UI goes to logoutUrl.
        const logoutUrl = cookie ? await sso.endSession(decodeURIComponent(cookie)) : null;
        if (cookie) await identity.logout(decodeURIComponent(cookie));
        set.headers["set-cookie"] =
          `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secureCookie(config.publicUrl, request) ? "; Secure" : ""}`;
        return { data: { loggedOut: true, logoutUrl } };
      },
      {
        permission: "authenticated",
        ...route.answer(
          t.Object({ loggedOut: t.Boolean(), logoutUrl: t.Union([t.String(), t.Null()]) }),
          "End the browser session; logoutUrl: where to end it at the single sign-on provider too (or null)",
        ),
      },
    )
    .get("/api/auth/me", async ({ auth }) => ({ data: await identity.me(auth) }), {
      permission: "authenticated",
      detail: route.detail("The caller: user, active workspace, scopes and (for sessions) the CSRF token"),
    })
    .get("/api/auth/sessions", async ({ auth }) => wholeList(await identity.listSessions(auth)), {
      permission: "authenticated",
      ...route.list(Session, "Your browser sessions (not expired), most recently used first; `current` marks this one"),
    })
    .delete(
      "/api/auth/sessions/:id",
      async (ctx) => {
        const revoked = await identity.revokeSession(ctx.auth, ctx.params.id);
        return audited(audit, ctx, revoked, "session.revoked", sessionTarget(revoked), { current: revoked.current });
      },
      { permission: "authenticated", ...route.byId(Session, "End one of your sessions at once (its next call is refused, on every instance)") },
    )
    .post(
      "/api/auth/sessions/revoke-others",
      async (ctx) => {
        const revoked = await identity.revokeOtherSessions(ctx.auth);
        return audited(audit, ctx, { revoked }, "session.revoked_others", null, { revoked });
      },
      { permission: "authenticated", ...route.answer(SessionsRevoked, "End every session of yours but this one") },
    )
    .post(
      "/api/auth/password",
      async (ctx) => {
        const { auth, body } = ctx;
        const user = auth.userId ? await identity.user(auth.userId) : null;
        // Guessing the current password here is guessing at login: the same buckets count it.
        const attempt = guard.attempt(user?.email ?? auth.credentialId, addressOf(ctx.request, ctx.server));
        const changed = await identity.changePassword(auth, body.currentPassword, body.newPassword);
        attempt.succeeded();
        await auditOf(
          audit,
          ctx,
          "password.changed",
          { type: "user", id: changed.user.id, name: changed.user.email },
          { sessionsRevoked: changed.sessionsRevoked },
        );
        return { data: { changed: true, sessionsRevoked: changed.sessionsRevoked } };
      },
      {
        permission: "authenticated",
        ...route.answer(PasswordChanged, "Change your password (needs the current one); your other sessions end"),
        body: PasswordChangeBody,
      },
    )
    .post("/api/auth/workspace", async ({ auth, body }) => ({ data: await identity.switchWorkspace(auth, body.workspaceId) }), {
      permission: "authenticated",
      body: t.Object({ workspaceId: t.String({ format: "uuid" }) }, { additionalProperties: false }),
      detail: route.detail("Switch the browser session's active workspace"),
    })
    .get("/api/tokens", async ({ auth }) => wholeList(await identity.listTokens(auth.workspaceId)), {
      permission: "workspace:admin",
      ...route.list(Token, "List the workspace's API tokens (never their raw values)"),
    })
    .post(
      "/api/tokens",
      async (ctx) => {
        const { auth, body, set } = ctx;
        const token = await identity.createToken({
          orgId: auth.orgId,
          workspaceId: body.workspaceId ?? auth.workspaceId,
          name: body.name,
          scopes: body.scopes,
          createdBy: auth.userId,
          grantable: auth.scopes,
        });
        set.status = 201;
        return audited(audit, ctx, token, "token.created", tokenTarget(token), {
          scopes: token.scopes,
          workspaceId: token.workspaceId,
          createdBy: auth.userId,
        });
      },
      { permission: "workspace:admin", ...route.creates(TokenCreated, "Mint an API token; the raw value is returned once"), body: TokenCreateBody },
    )
    .delete(
      "/api/tokens/:id",
      async (ctx) => {
        const revoked = await identity.revokeToken(ctx.auth.workspaceId, ctx.params.id);
        return audited(audit, ctx, revoked, "token.revoked", tokenTarget(revoked));
      },
      { permission: "workspace:admin", ...route.byId(Token, "Revoke an API token at once") },
    )
    .get("/api/workspaces", async ({ auth }) => wholeList(await identity.listWorkspaces(auth.orgId, auth.userId)), {
      permission: "workspace:admin",
      ...route.list(Workspace, "List the org's workspaces (for a user: those they are an active member of)"),
    })
    .post("/api/workspaces", async ({ auth, body, set }) => created(set, await identity.createWorkspace(auth.orgId, body.name, auth.userId)), {
      permission: "workspace:admin",
      ...route.creates(Workspace, "Create a workspace in the caller's org; its creator becomes its owner (accepts Idempotency-Key)"),
      idempotent: true,
      body: WorkspaceCreateBody,
    });
};
