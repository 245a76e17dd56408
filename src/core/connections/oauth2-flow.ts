/**
 * The authorization-code flow (docs/connections.md "The OAuth2 flow"): `start` mints a fresh authorize URL
 * with PKCE (S256) and a signed state bound to the connection; `complete` is the callback: it refuses a
 * tampered, expired, replayed or unknown state before storing anything, exchanges the code with the kept
 * verifier, and stores the tokens encrypted.
 */
import { AppError } from "../../http/errors";
import { nowIso } from "../../store/db";
import type { CallbackOutcome } from "./callback-page";
import { decryptJson, describe, encryptJson, oauth2AuthOf, parseJson, pieceOf, type ConnectionsContext } from "./context";
import type { OAuth2Settings, SecretValues } from "./credentials";
import { newPkce } from "./pkce";
import { lifetimeText } from "./oauth2-state";
import { bindingOf, providerOf } from "./provider";
import { requestToken, TokenEndpointError } from "./token-client";

/** Parameters only the flow itself sets; a piece's extra parameters cannot replace them. */
const RESERVED = ["response_type", "client_id", "redirect_uri", "scope", "access_type", "state", "code_challenge", "code_challenge_method"];

export async function startAuthorization(ctx: ConnectionsContext, workspaceId: string, connectionId: string) {
  const store = ctx.storage.connections;
  const row = await store.get(workspaceId, connectionId);
  if (!row) throw new AppError("NOT_FOUND", `connection ${connectionId} not found in this workspace; GET /api/connections lists them`);
  const piece = pieceOf(ctx, row);
  const auth = oauth2AuthOf(row, piece);
  if (row.grant_type === "client_credentials") {
    throw new AppError(
      "UNPROCESSABLE",
      `${describe(row)} uses the client_credentials grant, which needs no browser authorization; tokens are fetched automatically (POST /api/connections/${row.id}/test checks them)`,
    );
  }
  const config = parseJson<OAuth2Settings>(row.config, {});
  const provider = providerOf(ctx, row, piece, auth, config, decryptJson<SecretValues>(ctx, row.secrets, {}));
  if (!provider.authorizeUrl)
    throw new AppError("UNPROCESSABLE", `${describe(row)} has no authorize URL; set config.authUrl with PATCH /api/connections/${row.id}`);

  const now = ctx.now();
  await store.pruneStates(now);
  const pkce = newPkce();
  const { state, payload } = ctx.signer.mint(row.id, now);
  await store.insertState({
    nonce: payload.nonce,
    connection_id: row.id,
    workspace_id: row.workspace_id,
    code_verifier: ctx.box.encrypt(pkce.verifier),
    redirect_uri: ctx.redirectUri,
    binding: bindingOf(provider),
    expires_at: payload.expiresAt,
    created_at: now,
  });

  const url = new URL(provider.authorizeUrl);
  for (const [key, value] of Object.entries(provider.extraAuthorizeParams)) if (!RESERVED.includes(key)) url.searchParams.set(key, value);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", provider.client.clientId);
  url.searchParams.set("redirect_uri", ctx.redirectUri);
  url.searchParams.set("scope", provider.scope);
  url.searchParams.set("access_type", "offline");
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", pkce.challenge);
  url.searchParams.set("code_challenge_method", pkce.method);
  ctx.log.info("oauth2 authorization started", { connectionId: row.id, pieceId: row.piece_id, expiresAt: new Date(payload.expiresAt).toISOString() });
  return { authorizeUrl: url.toString(), redirectUri: ctx.redirectUri };
}

export interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
}

const failure = (title: string, message: string, connectionId?: string): CallbackOutcome => ({ ok: false, title, message, connectionId });

const START_AGAIN = "Start the connection again from Weft to get a fresh link.";

/** Handles the provider's redirect. Never throws: every outcome is a page for the person in the browser. */
export async function completeAuthorization(ctx: ConnectionsContext, query: CallbackQuery): Promise<CallbackOutcome & { status: number }> {
  const store = ctx.storage.connections;
  const now = ctx.now();
  const check = ctx.signer.verify(query.state, now);
  if (!check.ok) {
    ctx.log.warn("oauth2 callback refused", { reason: check.reason });
    if (check.reason === "expired") {
      await store.consumeState(check.payload!.nonce);
      return {
        ...failure(
          "Authorization expired",
          `This authorization link was older than ${lifetimeText(ctx.signer.lifetimeMs)}. ${START_AGAIN}`,
          check.payload!.connectionId,
        ),
        status: 400,
      };
    }
    const why =
      check.reason === "missing"
        ? "The provider sent no state parameter."
        : "The state parameter is not one Weft issued (it is malformed or its signature does not match).";
    return { ...failure("Authorization refused", `${why} Nothing was stored. ${START_AGAIN}`), status: 400 };
  }
  const { payload } = check;
  // Consuming before anything else makes the state single-use even when two callbacks race.
  const pending = await store.consumeState(payload.nonce);
  if (!pending || pending.connection_id !== payload.connectionId) {
    ctx.log.warn("oauth2 callback refused", { reason: "replayed_or_unknown", connectionId: payload.connectionId });
    return {
      ...failure("Authorization refused", `This authorization link was already used or is unknown. Nothing was stored. ${START_AGAIN}`, payload.connectionId),
      status: 400,
    };
  }
  const row = await store.getById(pending.connection_id);
  if (!row || row.workspace_id !== pending.workspace_id) {
    return { ...failure("Connection not found", "The connection this authorization was for no longer exists. Nothing was stored."), status: 404 };
  }
  if (query.error) {
    ctx.log.info("oauth2 authorization declined by provider", { connectionId: row.id, error: query.error.slice(0, 64) });
    const detail = query.error_description ? `: ${query.error_description.slice(0, 200)}` : "";
    return {
      ...failure("Authorization not granted", `The provider answered "${query.error.slice(0, 64)}"${detail}. Nothing was stored. ${START_AGAIN}`, row.id),
      status: 400,
    };
  }
  if (!query.code) return { ...failure("Authorization refused", `The provider sent no code. Nothing was stored. ${START_AGAIN}`, row.id), status: 400 };

  try {
    const piece = pieceOf(ctx, row);
    const auth = oauth2AuthOf(row, piece);
    const provider = providerOf(ctx, row, piece, auth, parseJson<OAuth2Settings>(row.config, {}), decryptJson<SecretValues>(ctx, row.secrets, {}));
    if (bindingOf(provider) !== pending.binding) {
      return {
        ...failure(
          "Connection changed",
          `${describe(row)} had its client or URLs changed after this authorization started. Nothing was stored. ${START_AGAIN}`,
          row.id,
        ),
        status: 409,
      };
    }
    const tokens = await requestToken(
      ctx.fetch,
      provider.tokenUrl,
      {
        grant_type: "authorization_code",
        code: query.code,
        redirect_uri: pending.redirect_uri,
        code_verifier: ctx.box.decrypt(pending.code_verifier),
      },
      provider.client,
      ctx.now(),
    );
    const { expiresAt, ...stored } = tokens;
    const sealed = encryptJson(ctx, stored)!;
    await ctx.storage.atomically(async (unit) => {
      await unit.connections.setTokens(row.id, sealed, expiresAt ?? null, nowIso());
      // Any other authorize link still open for this connection is void now.
      await unit.connections.dropStatesOf(row.id);
    });
    ctx.log.info("oauth2 connection authorized", {
      connectionId: row.id,
      pieceId: row.piece_id,
      tokenExpiresAt: expiresAt ?? null,
      refreshToken: tokens.refreshToken !== undefined,
    });
    return { ok: true, title: "Connected", message: `${describe(row)} is active.`, connectionId: row.id, status: 200 };
  } catch (error) {
    const known = error instanceof TokenEndpointError || error instanceof AppError;
    const message = known ? error.message : "unexpected error";
    ctx.log.warn("oauth2 code exchange failed", { connectionId: row.id, error: known ? message : String((error as Error)?.stack ?? error) });
    return { ...failure("Connection failed", `Exchanging the authorization code failed: ${message}. Nothing was stored. ${START_AGAIN}`, row.id), status: 502 };
  }
}
