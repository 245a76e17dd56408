/**
 * Connections and pending OAuth2 authorizations. Secret columns (`secrets`, `tokens`,
 * `code_verifier`) only ever hold ciphertext from src/core/crypto.ts; this module never sees plaintext.
 */
import type { SQLQueryBindings } from "bun:sqlite";
import { bindRow, countOf, type Db } from "./db";
import { rethrowTranslated } from "./storage-errors";

export type ConnectionStatus = "pending" | "active" | "error";
export type AuthKind = "oauth2" | "api_key" | "basic" | "custom";
export type GrantType = "authorization_code" | "client_credentials";

export interface ConnectionRow {
  id: string;
  org_id: string;
  workspace_id: string;
  piece_id: string;
  name: string;
  auth_kind: AuthKind;
  grant_type: GrantType | null;
  status: ConnectionStatus;
  status_message: string | null;
  /** JSON: non-secret settings (generic OAuth2: authUrl, tokenUrl, scope, grantType). */
  config: string;
  client_id: string | null;
  managed_app: number;
  /** JSON: non-secret credential parts shown back to the user (basic username, non-secret custom values). */
  public_values: string;
  /** Ciphertext of a JSON object: clientSecret, apiKey, password, secret custom values. */
  secrets: string | null;
  /** Ciphertext of the JSON token set. */
  tokens: string | null;
  token_expires_at: string | null;
  refresh_lease: string | null;
  refresh_lease_until: number | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface OAuth2StateRow {
  nonce: string;
  connection_id: string;
  workspace_id: string;
  code_verifier: string;
  redirect_uri: string;
  /** Hash of what the authorization was started against (client id, token URL); a change voids it. */
  binding: string;
  expires_at: number;
  created_at: number;
}

export interface ConnectionFilter {
  pieceId?: string;
  status?: ConnectionStatus;
}

export class ConnectionStore {
  private readonly q;

  constructor(readonly db: Db) {
    // CAST: PostgreSQL must be told the type of a parameter that is only tested for NULL.
    const filter =
      "workspace_id = $workspace_id AND (CAST($piece_id AS TEXT) IS NULL OR piece_id = $piece_id) AND (CAST($status AS TEXT) IS NULL OR status = $status)";
    this.q = {
      insert: db.query(
        `INSERT INTO connections (id, org_id, workspace_id, piece_id, name, auth_kind, grant_type, status, status_message, config, client_id, managed_app, public_values, secrets, tokens, token_expires_at, created_by, created_at, updated_at)
         VALUES ($id, $org_id, $workspace_id, $piece_id, $name, $auth_kind, $grant_type, $status, $status_message, $config, $client_id, $managed_app, $public_values, $secrets, $tokens, $token_expires_at, $created_by, $created_at, $updated_at)`,
      ),
      get: db.query<ConnectionRow, [string, string]>("SELECT * FROM connections WHERE id = ? AND workspace_id = ?"),
      getById: db.query<ConnectionRow, [string]>("SELECT * FROM connections WHERE id = ?"),
      byName: db.query<ConnectionRow, [string, string]>("SELECT * FROM connections WHERE workspace_id = ? AND name = ?"),
      choices: db.query<{ id: string; name: string }, [string, string]>(
        "SELECT id, name FROM connections WHERE workspace_id = ? AND piece_id = ? ORDER BY name, id",
      ),
      exists: db.query<{ piece_id: string }, [string, string]>("SELECT piece_id FROM connections WHERE id = ? AND workspace_id = ?"),
      list: db.query<ConnectionRow, [SQLQueryBindings]>(`SELECT * FROM connections WHERE ${filter} ORDER BY name, id LIMIT $limit OFFSET $offset`),
      count: db.query<{ n: number }, [SQLQueryBindings]>(`SELECT COUNT(*) AS n FROM connections WHERE ${filter}`),
      update: db.query(
        `UPDATE connections SET name = $name, grant_type = $grant_type, status = $status, status_message = $status_message, config = $config, client_id = $client_id,
           managed_app = $managed_app, public_values = $public_values, secrets = $secrets, tokens = $tokens, token_expires_at = $token_expires_at, updated_at = $updated_at
         WHERE id = $id AND workspace_id = $workspace_id`,
      ),
      setTokens: db.query("UPDATE connections SET tokens = ?, token_expires_at = ?, status = 'active', status_message = NULL, updated_at = ? WHERE id = ?"),
      setError: db.query(
        "UPDATE connections SET status = 'error', status_message = ?, tokens = CASE WHEN ? = 1 THEN NULL ELSE tokens END, token_expires_at = CASE WHEN ? = 1 THEN NULL ELSE token_expires_at END, updated_at = ? WHERE id = ?",
      ),
      delete: db.query("DELETE FROM connections WHERE id = ? AND workspace_id = ?"),
      takeLease: db.query(
        "UPDATE connections SET refresh_lease = ?, refresh_lease_until = ? WHERE id = ? AND (refresh_lease IS NULL OR refresh_lease_until < ?)",
      ),
      releaseLease: db.query("UPDATE connections SET refresh_lease = NULL, refresh_lease_until = NULL WHERE id = ? AND refresh_lease = ?"),
      // instr() narrows to workflows whose text mentions the id; the caller then checks the connectionId fields.
      liveUsers: db.query<{ id: string; name: string; draft: string; live: string | null }, [string, string, string]>(
        `SELECT w.id, w.name, w.definition AS draft, v.definition AS live FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id
         WHERE w.workspace_id = ? AND w.status = 'active' AND (instr(w.definition, ?) > 0 OR instr(coalesce(v.definition, ''), ?) > 0) ORDER BY w.name`,
      ),
      insertState: db.query(
        "INSERT INTO oauth2_states (nonce, connection_id, workspace_id, code_verifier, redirect_uri, binding, expires_at, created_at) VALUES ($nonce, $connection_id, $workspace_id, $code_verifier, $redirect_uri, $binding, $expires_at, $created_at)",
      ),
      // DELETE … RETURNING makes consumption atomic: of two concurrent callbacks only one gets the row.
      consumeState: db.query<OAuth2StateRow, [string]>("DELETE FROM oauth2_states WHERE nonce = ? RETURNING *"),
      dropStatesOf: db.query("DELETE FROM oauth2_states WHERE connection_id = ?"),
      pruneStates: db.query("DELETE FROM oauth2_states WHERE expires_at < ?"),
      dropAllStates: db.query("DELETE FROM oauth2_states"),
    };
  }

  /** Throws StorageError "unique" when the workspace has a connection of that name (or the id is taken). */
  insert(row: Omit<ConnectionRow, "refresh_lease" | "refresh_lease_until">) {
    try {
      this.q.insert.run(bindRow(row));
    } catch (error) {
      rethrowTranslated(error);
    }
  }

  get(workspaceId: string, id: string) {
    return this.q.get.get(id, workspaceId);
  }

  /** Unbounded by workspace: only for the OAuth2 callback, whose signed state names the connection. */
  getById(id: string) {
    return this.q.getById.get(id);
  }

  byName(workspaceId: string, name: string) {
    return this.q.byName.get(workspaceId, name);
  }

  /** Id and name of every connection of a piece in the workspace (for the publish gate's messages). */
  choices(workspaceId: string, pieceId: string) {
    return this.q.choices.all(workspaceId, pieceId);
  }

  pieceOf(workspaceId: string, id: string): string | undefined {
    return this.q.exists.get(id, workspaceId)?.piece_id;
  }

  list(workspaceId: string, filter: ConnectionFilter, limit: number, offset: number) {
    const params = { workspace_id: workspaceId, piece_id: filter.pieceId ?? null, status: filter.status ?? null };
    return {
      rows: this.q.list.all({ ...params, limit, offset }),
      total: countOf(this.q.count.get(params)),
    };
  }

  update(row: ConnectionRow) {
    this.q.update.run({
      id: row.id,
      workspace_id: row.workspace_id,
      name: row.name,
      grant_type: row.grant_type,
      status: row.status,
      status_message: row.status_message,
      config: row.config,
      client_id: row.client_id,
      managed_app: row.managed_app,
      public_values: row.public_values,
      secrets: row.secrets,
      tokens: row.tokens,
      token_expires_at: row.token_expires_at,
      updated_at: row.updated_at,
    });
  }

  setTokens(id: string, tokens: string, expiresAt: string | null, at: string) {
    this.q.setTokens.run(tokens, expiresAt, at, id);
  }

  /** Marks the connection `error`; `dropTokens` forgets tokens the provider no longer honours. */
  setError(id: string, message: string, dropTokens: boolean, at: string) {
    this.q.setError.run(message, dropTokens ? 1 : 0, dropTokens ? 1 : 0, at, id);
  }

  delete(workspaceId: string, id: string): boolean {
    return this.q.delete.run(id, workspaceId).changes > 0;
  }

  /** Claims the right to refresh this connection's token until `until` (ms); false when another holder has it. */
  takeLease(id: string, lease: string, until: number, now: number): boolean {
    return this.q.takeLease.run(lease, until, id, now).changes > 0;
  }

  releaseLease(id: string, lease: string) {
    this.q.releaseLease.run(id, lease);
  }

  /** Live workflows of the workspace whose draft or published definition mentions `connectionId`. */
  liveWorkflowsMentioning(workspaceId: string, connectionId: string) {
    return this.q.liveUsers.all(workspaceId, connectionId, connectionId);
  }

  insertState(row: OAuth2StateRow) {
    this.q.insertState.run(bindRow(row));
  }

  consumeState(nonce: string) {
    return this.q.consumeState.get(nonce);
  }

  dropStatesOf(connectionId: string) {
    this.q.dropStatesOf.run(connectionId);
  }

  /** Forgets every authorization in progress (after a key rotation they can no longer complete). */
  dropAllStates() {
    this.q.dropAllStates.run();
  }

  pruneStates(now: number) {
    this.q.pruneStates.run(now);
  }
}
