/**
 * A real OAuth2 authorization server on loopback for the connection tests (RFC 6749 + PKCE S256):
 *   GET  /authorize  checks the request and redirects to redirect_uri with a one-time code and the state
 *   POST /token      authorization_code (code + PKCE + redirect_uri + client auth), refresh_token, client_credentials
 *   GET  /me         answers 200 for a valid bearer access token (and records the Authorization header it got)
 *   GET  /echo       answers the request's headers, Authorization included
 * It counts every grant so tests can assert "exactly one refresh", and can revoke refresh tokens (invalid_grant).
 */
import { createHash, randomBytes } from "node:crypto";

export interface ProviderOptions {
  clientId?: string;
  clientSecret?: string;
  /** expires_in of issued access tokens, seconds. */
  expiresIn?: number;
  /** Issue a new refresh token on every refresh (and revoke the old one). */
  rotateRefreshTokens?: boolean;
  /** Delay of the token endpoint, so concurrent callers overlap. */
  tokenDelayMs?: number;
}

interface Code {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
}

export async function startProvider(options: ProviderOptions = {}) {
  const clientId = options.clientId ?? "client-123";
  const clientSecret = options.clientSecret ?? "client-secret-XYZ-987";
  const codes = new Map<string, Code>();
  const refreshTokens = new Set<string>();
  const accessTokens = new Set<string>();
  const counts = { authorize: 0, code: 0, refresh: 0, clientCredentials: 0, rejected: 0 };
  const issued: string[] = [];
  /** The Authorization header of every call to the API (/me), in arrival order. */
  const apiAuthorizations: string[] = [];
  let lastAuthorize: URLSearchParams | undefined;
  let lastTokenForm: URLSearchParams | undefined;
  const settings = { expiresIn: options.expiresIn ?? 3600, rotate: options.rotateRefreshTokens ?? true, tokenDelayMs: options.tokenDelayMs ?? 0 };

  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const oauthError = (error: string, description: string) => {
    counts.rejected++;
    return json(400, { error, error_description: description });
  };
  const token = (prefix: string) => {
    const value = `${prefix}_${randomBytes(12).toString("hex")}`;
    issued.push(value);
    return value;
  };
  const tokenSet = (withRefresh: boolean) => {
    const access = token("at");
    accessTokens.add(access);
    const body: Record<string, unknown> = { access_token: access, token_type: "Bearer", expires_in: settings.expiresIn, scope: "read write" };
    if (withRefresh) {
      const refresh = token("rt");
      refreshTokens.add(refresh);
      body.refresh_token = refresh;
    }
    return body;
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/authorize" && request.method === "GET") {
        counts.authorize++;
        const q = url.searchParams;
        lastAuthorize = q;
        const redirect = q.get("redirect_uri");
        if (q.get("response_type") !== "code" || q.get("client_id") !== clientId || !redirect) return json(400, { error: "invalid_request" });
        if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge"))
          return json(400, { error: "invalid_request", error_description: "PKCE S256 required" });
        const code = randomBytes(16).toString("hex");
        codes.set(code, { clientId, redirectUri: redirect, challenge: q.get("code_challenge")!, scope: q.get("scope") ?? "" });
        const target = new URL(redirect);
        target.searchParams.set("code", code);
        target.searchParams.set("state", q.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: target.toString() } });
      }
      if (url.pathname === "/token" && request.method === "POST") {
        if (settings.tokenDelayMs) await Bun.sleep(settings.tokenDelayMs);
        const form = new URLSearchParams(await request.text());
        lastTokenForm = form;
        if (form.get("client_id") !== clientId || form.get("client_secret") !== clientSecret)
          return json(401, { error: "invalid_client", error_description: "client authentication failed" });
        switch (form.get("grant_type")) {
          case "authorization_code": {
            const code = codes.get(form.get("code") ?? "");
            codes.delete(form.get("code") ?? "");
            if (!code) return oauthError("invalid_grant", "unknown or used code");
            if (code.redirectUri !== form.get("redirect_uri")) return oauthError("invalid_grant", "redirect_uri mismatch");
            const verifier = form.get("code_verifier") ?? "";
            if (createHash("sha256").update(verifier).digest("base64url") !== code.challenge) return oauthError("invalid_grant", "PKCE verification failed");
            counts.code++;
            return json(200, tokenSet(true));
          }
          case "refresh_token": {
            const refresh = form.get("refresh_token") ?? "";
            if (!refreshTokens.has(refresh)) return oauthError("invalid_grant", "refresh token revoked");
            counts.refresh++;
            if (settings.rotate) refreshTokens.delete(refresh);
            return json(200, tokenSet(settings.rotate));
          }
          case "client_credentials":
            counts.clientCredentials++;
            return json(200, tokenSet(false));
          default:
            return oauthError("unsupported_grant_type", `grant ${form.get("grant_type")}`);
        }
      }
      if (url.pathname === "/me") {
        apiAuthorizations.push(request.headers.get("authorization") ?? "");
        const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
        return bearer && accessTokens.has(bearer) ? json(200, { id: "me" }) : json(401, { error: "invalid_token" });
      }
      // Like httpbin's /headers: an API that echoes the request, token included (the engine must mask it in run steps).
      if (url.pathname === "/echo") return json(200, { headers: Object.fromEntries(request.headers) });
      return json(404, { error: "not_found" });
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    base,
    authUrl: `${base}/authorize`,
    tokenUrl: `${base}/token`,
    clientId,
    clientSecret,
    counts,
    /** Every token value ever issued (to grep logs, answers and the database file for). */
    issued,
    apiAuthorizations,
    settings,
    lastAuthorize: () => lastAuthorize,
    lastTokenForm: () => lastTokenForm,
    /** Revokes every refresh token: the next refresh answers invalid_grant. */
    revokeRefreshTokens: () => refreshTokens.clear(),
    stop: () => server.stop(true),
  };
}

export type Provider = Awaited<ReturnType<typeof startProvider>>;
