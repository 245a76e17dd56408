/**
 * Connections: credentials a workspace holds for a piece (docs/connections.md "Statuses"). Statuses: `pending` (an OAuth2
 * authorization-code connection awaiting authorization), `active` (usable), `error` (with `statusMessage`,
 * e.g. the provider rejected the refresh token: reconnect). Every read and write is bounded by workspace.
 *
 *   const connections = new Connections({ storage, box, stateKey, pieces, managedApps, publicUrl, log, fetch });
 *   const auth = await connections.resolveConnectionAuth({ workspaceId, connectionId, pieceId }); // for the engine
 */
import { AppError } from "../../http/errors";
import type { Logger } from "../../http/logger";
import { createGuardedFetch } from "../../net/guarded-fetch";
import type { GuardedFetch, PieceDef, ResolvedAuth } from "../../pieces-sdk/types";
import { pageOf } from "../../schema/common";
import type { ConnectionRow, ConnectionStatus } from "../../store/connections";
import { nowIso } from "../../store/db";
import { type Clock, systemClock } from "../../lib/clock";
import type { Storage } from "../../store/port";
import type { SecretBox } from "../crypto";
import { newId } from "../../lib/ids";
import { isStorageError } from "../../lib/storage-error";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import { AuthResolver, type ConnectionRef } from "./auth-resolver";
import type { CallbackOutcome } from "./callback-page";
import { decryptJson, describe, encryptJson, pieceOf, piecesWithAuth, preparedOf, type ConnectionsContext, type StoredTokens } from "./context";
import { authOf, mergeInput, prepareCredentials, toInput, type CredentialInput, type PreparedCredentials, type SecretValues } from "./credentials";
import { ManagedApps } from "./managed-apps";
import { completeAuthorization, startAuthorization, type CallbackQuery } from "./oauth2-flow";
import { StateSigner } from "./oauth2-state";
import { connectionView, type ConnectionView } from "./view";
import { usesConnection } from "./workflow-usage";

export const CONNECTION_STATUSES = ["pending", "active", "error"] as const;

export interface ConnectionsOptions {
  /** The storage port: every read and write of the connections tables. */
  storage: Storage;
  box: SecretBox;
  /** HMAC key for OAuth2 state (≥ 32 bytes), derived from the encryption key. */
  stateKey: Buffer;
  pieces: PieceRegistry;
  managedApps?: ManagedApps;
  publicUrl: string;
  log: Logger;
  /** The SSRF-guarded fetch; token URLs of the generic piece are user-supplied. */
  fetch?: GuardedFetch;
  refreshMarginMs?: number;
  /** Lifetime of an OAuth2 authorize state, ms (config.oauthStateTtlSeconds). */
  stateLifetimeMs?: number;
  /** Token expiry, refresh leases and authorize states are read from it (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

export interface CreateInput extends CredentialInput {
  pieceId: string;
  name: string;
}

export interface UpdateInput extends CredentialInput {
  name?: string;
}

export interface Actor {
  orgId: string;
  workspaceId: string;
  userId: string | null;
}

const CHECK_TIMEOUT_MS = 15_000;

/** What a new connection's row says besides who made it: its credentials' columns and its status. */
type NewConnectionFields = Omit<
  ConnectionRow,
  | "id"
  | "org_id"
  | "workspace_id"
  | "piece_id"
  | "name"
  | "tokens"
  | "token_expires_at"
  | "refresh_lease"
  | "refresh_lease_until"
  | "created_by"
  | "created_at"
  | "updated_at"
>;

/** A new connection's row: the actor's, made now, with no tokens and no refresh lease yet. */
function newRow(actor: Actor, pieceId: string, name: string, fields: NewConnectionFields): ConnectionRow {
  const at = nowIso();
  return {
    id: newId(),
    org_id: actor.orgId,
    workspace_id: actor.workspaceId,
    piece_id: pieceId,
    name,
    ...fields,
    tokens: null,
    token_expires_at: null,
    refresh_lease: null,
    refresh_lease_until: null,
    created_by: actor.userId,
    created_at: at,
    updated_at: at,
  };
}

export class Connections {
  readonly ctx: ConnectionsContext;
  readonly resolver: AuthResolver;

  constructor(options: ConnectionsOptions) {
    const publicUrl = options.publicUrl.replace(/\/+$/, "");
    const clock = options.clock ?? systemClock;
    this.ctx = {
      storage: options.storage,
      box: options.box,
      pieces: options.pieces,
      managedApps: options.managedApps ?? new ManagedApps(),
      signer: new StateSigner(options.stateKey, options.stateLifetimeMs, clock),
      // Never the global fetch: token URLs are user-supplied (a guard with no allow-list when none is given).
      fetch: options.fetch ?? createGuardedFetch(),
      log: options.log,
      publicUrl,
      redirectUri: `${publicUrl}/api/oauth2/callback`,
      refreshMarginMs: options.refreshMarginMs ?? 120_000,
      clock,
      now: () => clock.now(),
    };
    this.resolver = new AuthResolver(this.ctx);
  }

  // ---- the engine's and the gate's entry points ----

  /** Fresh credentials for a step; refuses a connection of another workspace or piece. Throws AppError. */
  resolveConnectionAuth = (ref: ConnectionRef): Promise<ResolvedAuth> => this.resolver.resolve(ref);

  /** True when the workspace holds connection `id` and it belongs to `pieceId`. */
  connectionExists = async (workspaceId: string, id: string, pieceId: string): Promise<boolean> =>
    (await this.ctx.storage.connections.pieceOf(workspaceId, id)) === pieceId;

  /** The workspace's connections of a piece, by name: the publish gate's connection directory (`workflows.setConnectionDirectory`). */
  choices = (workspaceId: string, pieceId: string): Promise<Array<{ id: string; name: string }>> => this.ctx.storage.connections.choices(workspaceId, pieceId);

  // ---- CRUD ----

  view(row: ConnectionRow): ConnectionView {
    const secrets = decryptJson<SecretValues>(this.ctx, row.secrets, {});
    const tokens = decryptJson<StoredTokens | null>(this.ctx, row.tokens, null);
    return connectionView(row, {
      secrets: (["clientSecret", "apiKey", "password"] as const).filter((k) => secrets[k] !== undefined),
      secretValues: Object.keys(secrets.values ?? {}),
      tokens: tokens ? ["accessToken", ...(tokens.refreshToken ? ["refreshToken"] : [])] : [],
    });
  }

  private async row(workspaceId: string, id: string, storage: Storage = this.ctx.storage): Promise<ConnectionRow> {
    const row = await storage.connections.get(workspaceId, id);
    if (!row) throw new AppError("NOT_FOUND", `connection ${id} not found in this workspace; GET /api/connections lists them`);
    return row;
  }

  async get(workspaceId: string, id: string): Promise<ConnectionView> {
    return this.view(await this.row(workspaceId, id));
  }

  async list(workspaceId: string, query: { pieceId?: string; status?: string; page?: string; limit?: string }) {
    const { limit, offset } = pageOf(query);
    // Like the run list (docs/api.md "4. Run"), an unknown status filter is dropped rather than refused.
    const status = (CONNECTION_STATUSES as readonly string[]).includes(query.status ?? "") ? (query.status as ConnectionStatus) : undefined;
    const { rows, total } = await this.ctx.storage.connections.list(workspaceId, { pieceId: query.pieceId || undefined, status }, limit, offset);
    return { data: rows.map((row) => this.view(row)), total };
  }

  private async assertNameFree(workspaceId: string, name: string, except?: string, storage: Storage = this.ctx.storage) {
    const clash = await storage.connections.byName(workspaceId, name);
    if (clash && clash.id !== except)
      throw new AppError("CONFLICT", `a connection named "${name}" already exists in this workspace (${clash.id}); choose another name`);
  }

  async create(actor: Actor, input: CreateInput): Promise<ConnectionView> {
    const { pieceId, name, ...credentials } = input;
    const piece = this.ctx.pieces.get(pieceId);
    if (!piece)
      throw new AppError("VALIDATION_FAILED", `unknown piece "${pieceId}"; pieces that take connections: ${piecesWithAuth(this.ctx)().join(", ") || "none"}`);
    const auth = authOf(piece, piecesWithAuth(this.ctx));
    const prepared = prepareCredentials(piece, auth, credentials, this.ctx.managedApps);
    await this.assertNameFree(actor.workspaceId, name);
    await validateCredentials(piece, prepared);
    const row = newRow(actor, piece.id, name, {
      ...this.columns(prepared),
      status: prepared.authKind === "oauth2" ? "pending" : "active",
      status_message: null,
    });
    try {
      await this.ctx.storage.connections.insert(row);
    } catch (error) {
      if (isStorageError(error, "unique")) await this.assertNameFree(actor.workspaceId, name);
      throw error;
    }
    this.ctx.log.info("connection created", { connectionId: row.id, pieceId: row.piece_id, authKind: row.auth_kind, managedApp: row.managed_app === 1 });
    if (prepared.grantType === "client_credentials") await this.obtainClientCredentialsToken(row);
    return this.get(actor.workspaceId, row.id);
  }

  /**
   * A connection without credentials, for an import whose workflows name it (docs/workflows-as-code.md): in error,
   * saying so, until its credentials are set (PATCH /api/connections/{id}, or an OAuth2 authorization). A refusal
   * (text) when this server does not load the piece or the piece takes no connection. Written by the import's unit.
   */
  blankRow(actor: Actor, pieceId: string, name: string): ConnectionRow | string {
    const piece = this.ctx.pieces.get(pieceId);
    if (!piece) return `piece "${pieceId}" is not loaded by this server; pieces that take connections: ${piecesWithAuth(this.ctx)().join(", ") || "none"}`;
    if (!piece.auth) return `piece "${pieceId}" declares no authentication, so it takes no connection`;
    return newRow(actor, piece.id, name, {
      auth_kind: piece.auth.kind,
      grant_type: null,
      config: "{}",
      client_id: null,
      managed_app: 0,
      public_values: "{}",
      secrets: null,
      status: "error",
      status_message: "imported without credentials (weft import); set them to use this connection",
    });
  }

  private columns(prepared: PreparedCredentials) {
    return {
      auth_kind: prepared.authKind,
      grant_type: prepared.grantType,
      config: JSON.stringify(prepared.config),
      client_id: prepared.clientId,
      managed_app: prepared.managedApp ? 1 : 0,
      public_values: JSON.stringify(prepared.publicValues),
      secrets: encryptJson(this.ctx, prepared.secrets),
    };
  }

  /** Client-credentials connections get their first token at once, so wrong credentials show up on create. */
  private async obtainClientCredentialsToken(row: ConnectionRow) {
    try {
      await this.resolver.resolve({ workspaceId: row.workspace_id, connectionId: row.id, pieceId: row.piece_id });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const message = error.message;
      // The resolver already recorded refusals; record outages too so the status tells the user.
      if ((await this.ctx.storage.connections.getById(row.id))?.status !== "error")
        await this.ctx.storage.connections.setError(row.id, message, false, nowIso());
    }
  }

  async update(workspaceId: string, id: string, patch: UpdateInput): Promise<ConnectionView> {
    const row = await this.row(workspaceId, id);
    const { name, ...credentials } = patch;
    const piece = pieceOf(this.ctx, row);
    const auth = authOf(piece, piecesWithAuth(this.ctx));
    const before = preparedOf(this.ctx, row);
    const changesCredentials = Object.values(credentials).some((v) => v !== undefined);
    const prepared = changesCredentials ? prepareCredentials(piece, auth, mergeInput(toInput(before), credentials), this.ctx.managedApps) : before;
    if (name !== undefined) await this.assertNameFree(workspaceId, name, row.id);
    if (changesCredentials) await validateCredentials(piece, prepared);
    // A different client, grant or URL makes the stored tokens meaningless: authorize again.
    const reauthorize =
      changesCredentials &&
      prepared.authKind === "oauth2" &&
      (prepared.clientId !== before.clientId || prepared.managedApp !== before.managedApp || JSON.stringify(prepared.config) !== JSON.stringify(before.config));
    // Encrypted before the unit: its body awaits only the unit's own calls.
    const columns = changesCredentials ? this.columns(prepared) : {};
    // Read again in one unit with the write: tokens a refresh stored meanwhile (on any instance, while the
    // credentials were validated) are kept, and so are credentials this change does not touch.
    const next = await this.ctx.storage.atomically(async (unit) => {
      const current = await this.row(workspaceId, id, unit);
      if (name !== undefined) await this.assertNameFree(workspaceId, name, current.id, unit);
      const next: ConnectionRow = { ...current, ...columns, name: name ?? current.name, updated_at: nowIso() };
      if (changesCredentials) {
        if (reauthorize) {
          next.tokens = null;
          next.token_expires_at = null;
        }
        next.status = prepared.grantType === "authorization_code" && !next.tokens ? "pending" : "active";
        next.status_message = null;
        await unit.connections.dropStatesOf(current.id);
      }
      await unit.connections.update(next);
      return next;
    });
    this.ctx.log.info("connection updated", { connectionId: row.id, fields: Object.keys(patch).filter((k) => (patch as any)[k] !== undefined) });
    if (changesCredentials && prepared.grantType === "client_credentials") await this.obtainClientCredentialsToken(next);
    return this.get(workspaceId, row.id);
  }

  /** Refused while a live workflow uses the connection; the refusal names those workflows. */
  async delete(workspaceId: string, id: string): Promise<ConnectionView> {
    // One unit: a workflow published on another instance meanwhile is either seen here or sees the connection gone.
    const view = await this.ctx.storage.atomically((unit) => this.deleteUnused(unit, workspaceId, id));
    this.ctx.log.info("connection deleted", { connectionId: id, pieceId: view.pieceId });
    return view;
  }

  private async deleteUnused(unit: Storage, workspaceId: string, id: string): Promise<ConnectionView> {
    const row = await this.row(workspaceId, id, unit);
    const mentions = await unit.connections.liveWorkflowsMentioning(workspaceId, id);
    const users = mentions.filter((w) => usesConnection(w.draft, id) || usesConnection(w.live, id));
    if (users.length > 0) {
      throw new AppError(
        "CONFLICT",
        `${describe(row)} is used by ${users.length === 1 ? "a live workflow" : `${users.length} live workflows`}: ${users.map((w) => `"${w.name}" (${w.id})`).join(", ")}; unpublish ${users.length === 1 ? "it" : "them"} or switch ${users.length === 1 ? "its" : "their"} steps to another connection first`,
        { workflows: users.map((w) => ({ id: w.id, name: w.name })) },
      );
    }
    const view = this.view(row);
    await unit.connections.delete(workspaceId, id);
    return view;
  }

  // ---- OAuth2 ----

  startOAuth2(workspaceId: string, id: string): Promise<{ authorizeUrl: string; redirectUri: string }> {
    return startAuthorization(this.ctx, workspaceId, id);
  }

  completeOAuth2(query: CallbackQuery): Promise<CallbackOutcome & { status: number }> {
    return completeAuthorization(this.ctx, query);
  }

  // ---- connection test ----

  /** Runs the piece's declared check with fresh credentials; reports instead of throwing when the check fails. */
  async test(workspaceId: string, id: string): Promise<{ ok: boolean; message: string }> {
    const row = await this.row(workspaceId, id);
    const piece = pieceOf(this.ctx, row);
    if (!piece.checkConnection) {
      throw new AppError(
        "UNPROCESSABLE",
        `piece "${piece.id}" declares no connection check, so ${describe(row)} cannot be tested; it is checked when a step uses it`,
      );
    }
    let auth: ResolvedAuth;
    try {
      auth = await this.resolver.resolve({ workspaceId, connectionId: id, pieceId: row.piece_id });
    } catch (error) {
      if (error instanceof AppError) return { ok: false, message: error.message };
      throw error;
    }
    try {
      const result = await piece.checkConnection({ auth, fetch: this.ctx.fetch, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
      return { ok: result.ok === true, message: result.message ?? (result.ok ? `${describe(row)} works` : `${describe(row)} was refused by the provider`) };
    } catch (error) {
      return { ok: false, message: `the check of piece "${piece.id}" failed: ${(error as Error)?.message ?? String(error)}` };
    }
  }
}

/** Time a piece's credential check (validateCredentials) may take before the connection is refused. */
const VALIDATE_TIMEOUT_MS = 30_000;

/** A piece that checks new credentials refuses bad ones before anything is stored (400 with its message). */
async function validateCredentials(piece: PieceDef, prepared: PreparedCredentials): Promise<void> {
  if (!piece.validateCredentials) return;
  let auth: ResolvedAuth;
  switch (prepared.authKind) {
    case "api_key":
      auth = { kind: "api_key", apiKey: prepared.secrets.apiKey ?? "" };
      break;
    case "basic":
      auth = { kind: "basic", username: prepared.publicValues.username ?? "", password: prepared.secrets.password ?? "" };
      break;
    case "custom":
      auth = { kind: "custom", values: { ...prepared.publicValues.values, ...prepared.secrets.values } };
      break;
    default:
      return; // OAuth2 credentials are checked by the provider during authorization
  }
  let result: { ok: boolean; message?: string };
  try {
    result = await piece.validateCredentials({ auth, signal: AbortSignal.timeout(VALIDATE_TIMEOUT_MS) });
  } catch (error) {
    result = { ok: false, message: (error as Error)?.message ?? String(error) };
  }
  if (!result.ok) {
    throw new AppError("VALIDATION_FAILED", `piece "${piece.id}" refused these credentials: ${result.message ?? "no reason given"}; nothing was stored`);
  }
}
