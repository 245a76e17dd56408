/**
 * Requests to an OAuth2 token endpoint (RFC 6749 §4.1.3, §4.4, §6): authorization-code exchange with the
 * PKCE verifier, refresh, and client credentials. Client authentication is `client_secret_post` (the
 * credentials in the form body), which the common providers accept.
 *
 * Hand-written on fetch rather than a client library: providers differ in ways a strict library refuses
 * (GitHub answers HTTP 200 with an `error` field and form-encoded bodies unless asked for JSON; some add an
 * id_token whose issuer we are not configured to check), and every request must go through the SSRF-guarded
 * fetch because the generic piece's token URL is user-supplied.
 *
 * Nothing a provider returns is echoed back beyond its `error` and `error_description`, so an error message
 * can neither leak a token nor turn the token URL into a way to read internal pages.
 */
import type { GuardedFetch } from "../../pieces-sdk/types";

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  tokenType?: string;
  scope?: string;
  /** ISO time the access token expires, when the provider said (`expires_in`). */
  expiresAt?: string;
  /** Other non-standard fields of the answer (e.g. Salesforce's instance_url), handed to pieces as `auth.data`. */
  extra: Record<string, unknown>;
}

export interface ClientCredentials {
  clientId: string;
  clientSecret?: string;
}

/** The token endpoint refused (an RFC 6749 §5.2 error) or answered something unusable. */
export class TokenEndpointError extends Error {
  constructor(
    /** The OAuth2 error code (`invalid_grant`, …) or `http_<status>` / `invalid_response` / `unreachable`. */
    readonly error: string,
    readonly description: string | undefined,
    readonly status: number | undefined,
  ) {
    super(`token endpoint answered ${error}${description ? `: ${description}` : ""}${status ? ` (HTTP ${status})` : ""}`);
  }

  /** True when retrying later may succeed (network trouble, 5xx, rate limit); false for refusals. */
  get transient(): boolean {
    return (
      this.error === "unreachable" || this.error === "temporarily_unavailable" || (this.status !== undefined && (this.status >= 500 || this.status === 429))
    );
  }
}

const TIMEOUT_MS = 15_000;
const STANDARD_FIELDS = new Set(["access_token", "refresh_token", "token_type", "scope", "expires_in", "id_token", "error", "error_description", "error_uri"]);

const clip = (value: unknown, max = 200): string | undefined =>
  typeof value === "string" && value.length > 0 ? value.replace(/[\r\n\t]+/g, " ").slice(0, max) : undefined;

async function readBody(response: Response): Promise<Record<string, unknown> | undefined> {
  const text = await response.text();
  if (text.length > 1_000_000) return undefined;
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("json") || /^\s*\{/.test(text)) {
    try {
      const value = JSON.parse(text);
      return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }
  if (type.includes("x-www-form-urlencoded") || type.includes("text/plain")) return Object.fromEntries(new URLSearchParams(text));
  return undefined;
}

/** Posts one grant to the token endpoint and returns the parsed token set. Throws TokenEndpointError. */
export async function requestToken(
  fetch: GuardedFetch,
  tokenUrl: string,
  grant: Record<string, string>,
  client: ClientCredentials,
  /** The time the token's `expires_in` counts from (the connections' clock). */
  now: number,
): Promise<TokenSet> {
  const form = new URLSearchParams(grant);
  form.set("client_id", client.clientId);
  if (client.clientSecret) form.set("client_secret", client.clientSecret);
  let response: Response;
  try {
    response = await fetch(tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form.toString(),
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new TokenEndpointError("unreachable", clip((error as Error)?.message), undefined);
  }
  const body = await readBody(response).catch(() => undefined);
  if (body && typeof body.error === "string") {
    throw new TokenEndpointError(clip(body.error, 64)!, clip(body.error_description), response.status);
  }
  if (!response.ok) throw new TokenEndpointError(`http_${response.status}`, undefined, response.status);
  if (!body || typeof body.access_token !== "string" || body.access_token === "") {
    throw new TokenEndpointError("invalid_response", "the answer has no access_token", response.status);
  }
  const expiresIn = Number(body.expires_in);
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!STANDARD_FIELDS.has(key)) extra[key] = value;
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === "string" && body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    ...(typeof body.token_type === "string" ? { tokenType: body.token_type } : {}),
    ...(typeof body.scope === "string" ? { scope: body.scope } : {}),
    ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expiresAt: new Date(now + expiresIn * 1000).toISOString() } : {}),
    extra,
  };
}
