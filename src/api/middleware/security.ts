/**
 * The `permission` macro: one declaration per route that both enforces the scope and writes
 * `x-permission` (and the OpenAPI `security` requirement) into the contract, so they cannot drift.
 * It authenticates in the transform phase, i.e. before body validation, so an anonymous caller
 * learns nothing about a route's schema. The `idempotent` macro marks routes that accept
 * Idempotency-Key (see ./idempotency.ts).
 */
import { Elysia } from "elysia";
import type { Identity, Principal } from "../../core/identity";
import type { Permission } from "../../schema/scopes";
import { AppError } from "../../http/errors";
import { TokenBuckets, rateLimitHeaders } from "./rate-limit";

export const SESSION_COOKIE = "weft_session";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface SecurityOptions {
  identity: Identity;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
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

export function createSecurity(options: SecurityOptions) {
  const buckets = new TokenBuckets(options.rateLimitPerSecond, options.rateLimitBurst);

  async function authenticate(request: Request, set: { headers: Record<string, any> }, permission: Permission): Promise<Principal | undefined> {
    if (permission === "public") return undefined;
    const authorization = request.headers.get("authorization");
    let principal: Principal | null = null;
    if (authorization !== null) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (match) principal = await options.identity.authenticateToken(match[1]);
    } else {
      const cookie = sessionCookie(request.headers.get("cookie"));
      if (cookie) principal = await options.identity.authenticateSession(cookie);
    }
    if (!principal) {
      const why = authorization === null && !request.headers.get("cookie") ? "missing credentials" : "the credential is invalid, expired or revoked";
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
      const csrf = request.headers.get("x-csrf-token");
      if (!csrf || csrf !== principal.csrfToken) {
        throw new AppError("FORBIDDEN", "cookie-authenticated writes need the X-CSRF-Token header with the value from GET /api/auth/me; API tokens need none");
      }
    }
    if (permission !== "authenticated" && !principal.scopes.has(permission)) {
      throw new AppError("FORBIDDEN", `this operation requires the scope "${permission}"; the credential has: ${[...principal.scopes].join(", ") || "none"}`);
    }
    return principal;
  }

  return new Elysia({ name: "weft-security" }).macro({
    permission: (permission: Permission) => ({
      detail: {
        "x-permission": permission,
        security: permission === "public" ? [] : [{ bearer: [] }, { session: [] }],
      } as Record<string, unknown>,
      async transform(ctx: any) {
        ctx.auth = await authenticate(ctx.request, ctx.set, permission);
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
