/**
 * Connections, pending OAuth2 authorizations and refresh leases: the rows and what the storage port
 * (./port.ts) answers about them. Implemented by ./sqlite/connections.ts and ./postgres/connections.ts.
 * Secret columns (`secrets`, `tokens`, `code_verifier`) only ever hold ciphertext from src/core/crypto.ts;
 * the store never sees plaintext.
 */

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

/** A live workflow that may use a connection: its draft and published definitions, for the caller to check. */
export interface WorkflowMention {
  id: string;
  name: string;
  draft: string;
  live: string | null;
}

export interface ConnectionRepository {
  /** Throws StorageError "unique" when the workspace has a connection of that name (or the id is taken). */
  insert(row: Omit<ConnectionRow, "refresh_lease" | "refresh_lease_until">): Promise<void>;
  get(workspaceId: string, id: string): Promise<ConnectionRow | null>;
  /** Unbounded by workspace: only for the OAuth2 callback and the refresher, which hold an id already bound. */
  getById(id: string): Promise<ConnectionRow | null>;
  byName(workspaceId: string, name: string): Promise<ConnectionRow | null>;
  /** Id and name of every connection of a piece in the workspace, by name (for the publish gate's messages). */
  choices(workspaceId: string, pieceId: string): Promise<Array<{ id: string; name: string }>>;
  /** The piece of a connection of the workspace; undefined when the workspace has no such connection. */
  pieceOf(workspaceId: string, id: string): Promise<string | undefined>;
  /** A page of the workspace's connections by name, and how many match in all. */
  list(workspaceId: string, filter: ConnectionFilter, limit: number, offset: number): Promise<{ rows: ConnectionRow[]; total: number }>;
  /** Writes every column a user may change (not the lease, the piece or the creation). */
  update(row: ConnectionRow): Promise<void>;
  /** Stores a token set and makes the connection active. */
  setTokens(id: string, tokens: string, expiresAt: string | null, at: string): Promise<void>;
  /** Marks the connection `error`; `dropTokens` forgets tokens the provider no longer honours. */
  setError(id: string, message: string, dropTokens: boolean, at: string): Promise<void>;
  /** False when the workspace has no such connection. */
  delete(workspaceId: string, id: string): Promise<boolean>;
  /**
   * Claims the right to refresh this connection's token until `until` (ms), for every instance of a cluster:
   * false while another holder's lease has not run out at `now`.
   */
  takeLease(id: string, lease: string, until: number, now: number): Promise<boolean>;
  /** Lets go of the lease if `lease` still holds it. */
  releaseLease(id: string, lease: string): Promise<void>;
  /**
   * Live workflows of the workspace whose draft or published definition mentions `connectionId` as text, by
   * name (reads workflows; the caller checks the connectionId fields).
   */
  liveWorkflowsMentioning(workspaceId: string, connectionId: string): Promise<WorkflowMention[]>;
  insertState(row: OAuth2StateRow): Promise<void>;
  /** Deletes and answers a pending authorization: of two concurrent callers only one gets the row. */
  consumeState(nonce: string): Promise<OAuth2StateRow | null>;
  /** Forgets the connection's authorizations in progress. */
  dropStatesOf(connectionId: string): Promise<void>;
  /** Forgets every authorization in progress (after a key rotation they can no longer complete). */
  dropAllStates(): Promise<void>;
  /** Forgets authorizations that expired before `now` (ms). */
  pruneStates(now: number): Promise<void>;
}
