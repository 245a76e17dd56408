/**
 * The `permission` macro: one declaration per route that both enforces the scope and writes
 * `x-permission` (and the OpenAPI `security` requirement) into the contract, so they cannot drift.
 * It authenticates in the transform phase, i.e. before body validation, so an anonymous caller
 * learns nothing about a route's schema. The `idempotent` macro marks routes that accept
 * Idempotency-Key (see ./idempotency.ts). A route may also admit callers by their address instead of a token
 * (`{ scope, orFrom }`: GET /metrics and WEFT_METRICS_ALLOW_CIDRS).
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
import { csrfMatches, scopeRefusal, type Identity, type Principal } from "../../core/identity";
import type { AddressRanges } from "../../net/address-ranges";
import { clientOf } from "../../net/client-address";
import { EDIT_SCOPES, type Permission, type Scope } from "../../schema/scopes";
import { AppError } from "../../http/errors";
import type { Clock } from "../../lib/clock";
import { TokenBuckets, rateLimitHeaders } from "./rate-limit";

export const SESSION_COOKIE = "weft_session";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/**
 * What a session that must enrol a second factor may still call (docs/teams.md, "Second factor"): who am I, log out,
 * switch workspace, and the second factor's own routes. Everything else answers 403 saying to enrol.
 */
const BEFORE_SECOND_FACTOR = new Set(["/api/auth/me", "/api/auth/logout", "/api/auth/workspace"]);
const mayCallBeforeSecondFactor = (path: string) => BEFORE_SECOND_FACTOR.has(path) || path.startsWith("/api/auth/second-factor");

/**
 * A scope, or a call from an address in `orFrom.ranges` (the socket's address; a forwarding header never
 * counts). `orFrom.setting` names where the ranges are set, for the refusal's message.
 */
export interface ScopeOrAddress {
  scope: Scope;
  orFrom: { ranges: AddressRanges; setting: string };
}

export interface SecurityOptions {
  identity: Identity;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** What the buckets refill by (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
  /** Throws when the principal's workspace takes no workflow edits (managed by git: docs/workflows-as-code.md, "Environments"). */
  editGuard?: (principal: Principal, request: Request) => Promise<void>;
}

/** Reads the session cookie value from a Cookie header without parsing every cookie. */
export function sessionCookie(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/**
 * Whether the credential `request` came with still holds `scope`, asked again by a response that outlives its
 * request (a run's event stream, docs/teams.md, "Sessions"): a session revoked, logged out, expired, or whose member
 * was deactivated, and a token revoked, answer false. No rate limit is taken and the session's "last seen" is not
 * written: this is the same request, asked again.
 */
export async function credentialHolds(identity: Identity, request: Request, scope: Scope): Promise<boolean> {
  const authorization = request.headers.get("authorization");
  const bearer = authorization === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  const cookie = authorization === null ? sessionCookie(request.headers.get("cookie")) : undefined;
  const principal = bearer ? await identity.authenticateToken(bearer) : cookie ? await identity.authenticateSession(cookie) : null;
  return principal !== null && !principal.secondFactorMissing && principal.scopes.has(scope);
}

export function createSecurity(options: SecurityOptions) {
  const buckets = new TokenBuckets(options.rateLimitPerSecond, options.rateLimitBurst, undefined, options.clock);

  async function authenticate(request: Request, set: { headers: Record<string, any> }, permission: Permission): Promise<Principal | undefined> {
    if (permission === "public") return undefined;
    const authorization = request.headers.get("authorization");
    let principal: Principal | null = null;
    if (authorization !== null) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (match) principal = await options.identity.authenticateToken(match[1]);
    } else {
      const cookie = sessionCookie(request.headers.get("cookie"));
      if (cookie) {
        const client = { address: clientOf(request).address, userAgent: request.headers.get("user-agent")?.slice(0, 500) ?? null };
        principal = await options.identity.authenticateSession(cookie, client);
      }
    }
    if (!principal) {
      const why =
        authorization === null && !request.headers.get("cookie")
          ? "missing credentials"
          : "the credential is invalid, expired or revoked, or its user is not an active member of its workspace";
      throw new AppError("UNAUTHORIZED", `${why}; send Authorization: Bearer <API token>`, undefined, undefined, { "www-authenticate": 'Bearer realm="weft"' });
    }
    if (buckets.enabled) {
      const state = buckets.take(principal.credentialId);
      Object.assign(set.headers, rateLimitHeaders(state, buckets.perSecond));
      if (!state.allowed) {
        throw new AppError(
          "RATE_LIMITED",
          `rate limit of ${state.limit} requests (refilling ${buckets.perSecond}/s) exceeded for this credential; retry after ${state.retryAfterSeconds} s`,
          undefined,
          undefined,
          { "retry-after": String(state.retryAfterSeconds) },
        );
      }
    }
    if (principal.kind === "session" && !SAFE_METHODS.has(request.method)) {
      if (!csrfMatches(principal, request.headers.get("x-csrf-token"))) {
        throw new AppError("FORBIDDEN", "cookie-authenticated writes need the X-CSRF-Token header with the value from GET /api/auth/me; API tokens need none");
      }
    }
    if (principal.secondFactorMissing && !mayCallBeforeSecondFactor(new URL(request.url).pathname)) {
      throw new AppError(
        "FORBIDDEN",
        `workspace ${principal.workspaceId} requires a second factor: turn yours on in your profile (#/profile; POST /api/auth/second-factor/enrol) before anything else`,
        { secondFactorRequired: true, workspaceId: principal.workspaceId },
      );
    }
    if (permission !== "authenticated" && !principal.scopes.has(permission)) throw scopeRefusal(principal, permission);
    if (EDIT_SCOPES.has(permission) && !SAFE_METHODS.has(request.method)) await options.editGuard?.(principal, request);
    return principal;
  }

  /** The scope, or the address: a refusal names both ways in. */
  async function authenticateOrAdmit(
    request: Request,
    set: { headers: Record<string, any> },
    server: Server<unknown> | null,
    permission: ScopeOrAddress,
  ): Promise<Principal | undefined> {
    const address: string | undefined = server?.requestIP(request)?.address;
    const { ranges, setting } = permission.orFrom;
    if (ranges.includes(address)) return undefined;
    try {
      return await authenticate(request, set, permission.scope);
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== "UNAUTHORIZED" && error.code !== "FORBIDDEN")) throw error;
      const where = `an address in ${setting} (${ranges.cidrs.join(", ") || "none set"}); this call came from ${address ?? "an unknown address"}`;
      const message =
        error.code === "UNAUTHORIZED"
          ? `${error.message} with the scope "${permission.scope}", or call from ${where}`
          : `${error.message}; or call from ${where}`;
      throw new AppError(error.code, message, error.details, error.status, error.headers);
    }
  }

  return new Elysia({ name: "weft-security" }).macro({
    permission: (permission: Permission | ScopeOrAddress) => ({
      detail: {
        "x-permission": typeof permission === "string" ? permission : permission.scope,
        security: permission === "public" ? [] : [{ bearer: [] }, { session: [] }],
      } as Record<string, unknown>,
      // Parts of the context, never the context itself: Elysia reads this function's text, and a context passed
      // whole to a function makes it parse every request's cookies, headers and query for every route.
      async transform(ctx: any) {
        ctx.auth =
          typeof permission === "string"
            ? await authenticate(ctx.request, ctx.set, permission)
            : await authenticateOrAdmit(ctx.request, ctx.set, ctx.server, permission);
      },
      resolve: (ctx: any) => ({ auth: ctx.auth as Principal }),
    }),
    idempotent: (accepts: boolean) => ({
      detail: { "x-idempotent": accepts } as Record<string, unknown>,
      transform(ctx: any) {
        ctx.acceptsIdempotencyKey = accepts;
      },
    }),
  });
}

export type Security = ReturnType<typeof createSecurity>;
