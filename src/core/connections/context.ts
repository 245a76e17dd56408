/**
 * What the connection modules share: the storage port, the secret box, the piece registry, the managed apps, the outbound
 * fetch, and the small decoders between rows and credentials.
 */
import { AppError } from "../../http/errors";
import type { Logger } from "../../http/logger";
import type { Clock } from "../../lib/clock";
import type { GuardedFetch, OAuth2AuthDef, PieceDef } from "../../pieces-sdk/types";
import type { ConnectionRow } from "../../store/connections";
import type { Storage } from "../../store/port";
import type { SecretBox } from "../crypto";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { OAuth2Settings, PreparedCredentials, PublicValues, SecretValues } from "./credentials";
import type { ManagedApps } from "./managed-apps";
import type { StateSigner } from "./oauth2-state";
import type { TokenSet } from "./token-client";

export interface ConnectionsContext {
  /** The storage port: `storage.connections`, and `storage.atomically` for units over the connections tables. */
  storage: Storage;
  box: SecretBox;
  pieces: PieceRegistry;
  managedApps: ManagedApps;
  signer: StateSigner;
  /** Outbound HTTP (token endpoints, connection checks): the SSRF-guarded fetch. */
  fetch: GuardedFetch;
  log: Logger;
  /** `{WEFT_PUBLIC_URL}/api/oauth2/callback` — what providers must have registered. */
  redirectUri: string;
  publicUrl: string;
  /** Refresh an access token this long before it expires. */
  refreshMarginMs: number;
  /** The clock of the engine and the core (docs/architecture.md, "Time"): a wait for another's refresh lease sleeps on it. */
  clock: Clock;
  /** The time now: `clock.now()` (a test may replace it to step past one deadline). */
  now: () => number;
}

/** The token set as stored (encrypted); `expiresAt` lives in its own column so it can be read without decrypting. */
export type StoredTokens = Omit<TokenSet, "expiresAt">;

export const parseJson = <T>(text: string | null, fallback: T): T => (text ? (JSON.parse(text) as T) : fallback);

export function decryptJson<T>(ctx: ConnectionsContext, blob: string | null, fallback: T): T {
  if (!blob) return fallback;
  return JSON.parse(ctx.box.decrypt(blob)) as T;
}

/** Encrypts a JSON value; empty objects are stored as NULL so "nothing secret" needs no decryption. */
export function encryptJson(ctx: ConnectionsContext, value: object | undefined): string | null {
  if (!value || Object.keys(value).length === 0) return null;
  return ctx.box.encrypt(JSON.stringify(value));
}

export function preparedOf(ctx: ConnectionsContext, row: ConnectionRow): PreparedCredentials {
  return {
    authKind: row.auth_kind,
    grantType: row.grant_type,
    config: parseJson<OAuth2Settings>(row.config, {}),
    clientId: row.client_id,
    managedApp: row.managed_app === 1,
    publicValues: parseJson<PublicValues>(row.public_values, {}),
    secrets: decryptJson<SecretValues>(ctx, row.secrets, {}),
  };
}

export const describe = (row: Pick<ConnectionRow, "id" | "name">) => `connection "${row.name}" (${row.id})`;

/** The piece a connection belongs to, as the registry serves it now. */
export function pieceOf(ctx: ConnectionsContext, row: ConnectionRow): PieceDef {
  const piece = ctx.pieces.get(row.piece_id);
  if (!piece)
    throw new AppError(
      "PIECE_UNAVAILABLE",
      `${describe(row)} belongs to piece "${row.piece_id}", which this server does not load; pieces: ${ctx.pieces.ids().join(", ")}`,
    );
  return piece;
}

export function oauth2AuthOf(row: ConnectionRow, piece: PieceDef): OAuth2AuthDef {
  if (piece.auth?.kind !== "oauth2") {
    throw new AppError("UNPROCESSABLE", `${describe(row)} is for piece "${piece.id}", which authenticates with ${piece.auth?.kind ?? "nothing"}, not OAuth2`);
  }
  return piece.auth;
}

/** Pieces that declare auth, for messages that name where a connection could go instead. */
export const piecesWithAuth = (ctx: ConnectionsContext) => () =>
  ctx.pieces
    .list()
    .filter((p) => p.auth)
    .map((p) => p.id);
