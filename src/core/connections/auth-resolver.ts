/**
 * Hands a step its connection's credentials, refreshed at run time (docs/connections.md "Refresh at run
 * time"; there is no refresh endpoint). Before an OAuth2 access token that expires within the margin is
 * handed out it is refreshed — once: callers in this process share one in-flight refresh per connection, and a lease row in the database keeps
 * other threads and processes from refreshing the same connection at the same time (they wait and read the
 * result). A new refresh token replaces the old one; an answer without one keeps the old. `invalid_grant`
 * marks the connection `error` and the step fails with a message telling the user to reconnect.
 *
 * The binding rule (issue 8 item 5): a step gets a connection only of its own workspace and of the piece it
 * names; anything else is refused here, at run time, as well as by the publish gate.
 */
import { AppError } from "../../http/errors";
import type { ResolvedAuth } from "../../pieces-sdk/types";
import type { ConnectionRow } from "../../store/connections";
import { nowIso } from "../../store/db";
import { newSecret } from "../../lib/ids";
import { decryptJson, describe, encryptJson, oauth2AuthOf, parseJson, pieceOf, type ConnectionsContext, type StoredTokens } from "./context";
import type { OAuth2Settings, PublicValues, SecretValues } from "./credentials";
import { providerOf } from "./provider";
import { requestToken, TokenEndpointError } from "./token-client";

export interface ConnectionRef {
  workspaceId: string;
  connectionId: string;
  /** The piece of the step asking: a connection of another piece is refused. */
  pieceId: string;
}

/** How long one refresher may hold the lease; others wait at most this long before taking over. */
const LEASE_MS = 30_000;
const WAIT_POLL_MS = 25;

const reconnectHint = (row: ConnectionRow) => `reconnect it: open the connection in Weft and authorize again (POST /api/connections/${row.id}/oauth2/start)`;

export class AuthResolver {
  private readonly inflight = new Map<string, Promise<ConnectionRow>>();
  /** Token-endpoint calls made by this process (refreshes and client-credential grants); for tests and metrics. */
  refreshCount = 0;

  constructor(private readonly ctx: ConnectionsContext) {}

  /** The row a step may use, or a refusal naming why (unknown, other workspace, other piece). */
  async bound(ref: ConnectionRef): Promise<ConnectionRow> {
    const row = await this.ctx.storage.connections.get(ref.workspaceId, ref.connectionId);
    if (!row)
      throw new AppError(
        "NOT_FOUND",
        `connection ${ref.connectionId} not found in this workspace; a step can use only connections of its own workspace (GET /api/connections?pieceId=${ref.pieceId})`,
      );
    if (row.piece_id !== ref.pieceId) {
      throw new AppError(
        "VALIDATION_FAILED",
        `${describe(row)} belongs to piece "${row.piece_id}" and cannot be used by a step of piece "${ref.pieceId}"; choose a connection of piece "${ref.pieceId}" (GET /api/connections?pieceId=${ref.pieceId})`,
      );
    }
    return row;
  }

  async resolve(ref: ConnectionRef): Promise<ResolvedAuth> {
    let row = await this.bound(ref);
    switch (row.auth_kind) {
      case "api_key":
        return { kind: "api_key", apiKey: decryptJson<SecretValues>(this.ctx, row.secrets, {}).apiKey ?? "" };
      case "basic":
        return {
          kind: "basic",
          username: parseJson<PublicValues>(row.public_values, {}).username ?? "",
          password: decryptJson<SecretValues>(this.ctx, row.secrets, {}).password ?? "",
        };
      case "custom":
        return {
          kind: "custom",
          values: { ...parseJson<PublicValues>(row.public_values, {}).values, ...decryptJson<SecretValues>(this.ctx, row.secrets, {}).values },
        };
      case "oauth2":
        row = await this.freshOAuth2(row);
        return this.oauth2Auth(row);
    }
  }

  private oauth2Auth(row: ConnectionRow): ResolvedAuth {
    const tokens = decryptJson<StoredTokens | null>(this.ctx, row.tokens, null);
    if (!tokens) throw new AppError("UNPROCESSABLE", `${describe(row)} holds no access token; ${reconnectHint(row)}`);
    return {
      kind: "oauth2",
      accessToken: tokens.accessToken,
      ...(tokens.tokenType ? { tokenType: tokens.tokenType } : {}),
      ...(tokens.scope ? { scope: tokens.scope } : {}),
      data: { ...tokens.extra, ...(row.token_expires_at ? { expiresAt: row.token_expires_at } : {}) },
    };
  }

  private needsToken(row: ConnectionRow): boolean {
    if (!row.tokens) return true;
    if (!row.token_expires_at) return false; // the provider said the token does not expire
    return Date.parse(row.token_expires_at) - this.ctx.now() <= this.ctx.refreshMarginMs;
  }

  /** The row with a usable access token, refreshing (single-flight) when needed. */
  private async freshOAuth2(row: ConnectionRow): Promise<ConnectionRow> {
    this.assertUsable(row);
    if (!this.needsToken(row)) return row;
    let flight = this.inflight.get(row.id);
    if (!flight) {
      flight = this.refreshUnderLease(row.id).finally(() => this.inflight.delete(row.id));
      this.inflight.set(row.id, flight);
    }
    return flight;
  }

  private assertUsable(row: ConnectionRow) {
    const clientCredentials = row.grant_type === "client_credentials";
    if (row.status === "pending" && !clientCredentials) {
      throw new AppError(
        "UNPROCESSABLE",
        `${describe(row)} is not authorized yet; complete the OAuth2 flow (POST /api/connections/${row.id}/oauth2/start, then open the authorize URL)`,
      );
    }
    // A client-credentials connection in error is retried: its failure may have been the provider's outage.
    if (row.status === "error" && !clientCredentials) {
      throw new AppError("UNPROCESSABLE", `${describe(row)} needs to be reconnected: ${row.status_message ?? "it is in error"}`);
    }
  }

  private async refreshUnderLease(id: string): Promise<ConnectionRow> {
    const store = this.ctx.storage.connections;
    const lease = newSecret("", 12);
    const deadline = this.ctx.now() + LEASE_MS + 5_000;
    for (;;) {
      const row = await store.getById(id);
      if (!row) throw new AppError("NOT_FOUND", `connection ${id} was deleted`);
      this.assertUsable(row);
      if (!this.needsToken(row)) return row; // another thread or process refreshed it meanwhile
      const now = this.ctx.now();
      if (await store.takeLease(id, lease, now + LEASE_MS, now)) {
        try {
          // Re-read under the lease: a refresh may have committed between our read and the lease.
          const current = (await store.getById(id))!;
          return this.needsToken(current) ? await this.refresh(current) : current;
        } finally {
          await store.releaseLease(id, lease);
        }
      }
      if (this.ctx.now() > deadline)
        throw new AppError(
          "SERVICE_UNAVAILABLE",
          `${describe(row)}: another worker has been refreshing its token for over ${LEASE_MS / 1000} s; retry the run`,
        );
      await this.ctx.clock.sleep(WAIT_POLL_MS);
    }
  }

  private async refresh(row: ConnectionRow): Promise<ConnectionRow> {
    const ctx = this.ctx;
    const store = ctx.storage.connections;
    const piece = pieceOf(ctx, row);
    const auth = oauth2AuthOf(row, piece);
    const config = parseJson<OAuth2Settings>(row.config, {});
    const provider = providerOf(ctx, row, piece, auth, config, decryptJson<SecretValues>(ctx, row.secrets, {}));
    const old = decryptJson<StoredTokens | null>(ctx, row.tokens, null);
    const clientCredentials = row.grant_type === "client_credentials";
    if (!clientCredentials && !old?.refreshToken) {
      const message = `its access token expired and the provider issued no refresh token; ${reconnectHint(row)}`;
      await store.setError(row.id, message, false, nowIso());
      throw new AppError("UNPROCESSABLE", `${describe(row)} needs to be reconnected: ${message}`);
    }
    const grant: Record<string, string> = clientCredentials
      ? { grant_type: "client_credentials", ...(provider.scope ? { scope: provider.scope } : {}) }
      : { grant_type: "refresh_token", refresh_token: old!.refreshToken! };
    this.refreshCount++;
    try {
      const tokens = await requestToken(ctx.fetch, provider.tokenUrl, grant, provider.client, ctx.now());
      const { expiresAt, ...fresh } = tokens;
      // Providers that do not rotate refresh tokens omit them from the answer: keep the one we have.
      if (!fresh.refreshToken && old?.refreshToken) fresh.refreshToken = old.refreshToken;
      await store.setTokens(row.id, encryptJson(ctx, fresh)!, expiresAt ?? null, nowIso());
      ctx.log.info(clientCredentials ? "oauth2 client-credentials token obtained" : "oauth2 token refreshed", {
        connectionId: row.id,
        tokenExpiresAt: expiresAt ?? null,
        refreshTokenRotated: tokens.refreshToken !== undefined,
      });
      return (await store.getById(row.id))!;
    } catch (error) {
      if (!(error instanceof TokenEndpointError)) throw error;
      ctx.log.warn("oauth2 token refresh failed", { connectionId: row.id, error: error.error, status: error.status ?? null });
      if (error.transient) {
        // The old token may still be valid for a moment (we refresh ahead of expiry): use it rather than fail.
        if (row.tokens && row.token_expires_at && Date.parse(row.token_expires_at) > ctx.now()) return row;
        throw new AppError("SERVICE_UNAVAILABLE", `${describe(row)}: the provider's token endpoint is unavailable (${error.message}); retry later`);
      }
      const what = clientCredentials ? "refused the client credentials" : "rejected the refresh token";
      const fix = clientCredentials ? `check clientId, clientSecret and config.tokenUrl (PATCH /api/connections/${row.id})` : reconnectHint(row);
      const message = `the provider ${what} (${error.error}${error.description ? `: ${error.description}` : ""}); ${fix}`;
      // Only invalid_grant says the stored grant is dead; after invalid_client (a changed secret) it may still work.
      await store.setError(row.id, message, !clientCredentials && error.error === "invalid_grant", nowIso());
      throw new AppError("UNPROCESSABLE", `${describe(row)} ${clientCredentials ? "could not obtain a token" : "needs to be reconnected"}: ${message}`);
    }
  }
}
