/**
 * Orgs, workspaces, users, sessions and API tokens: the rows and what the storage port (./port.ts) answers
 * about them. Implemented by ./sqlite/identity.ts and ./postgres/identity.ts.
 */

export interface OrgRow {
  id: string;
  name: string;
  created_at: string;
}
export interface WorkspaceRow {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
}
export interface UserRow {
  id: string;
  org_id: string;
  email: string;
  name: string;
  password_hash: string;
  role: string;
  default_workspace_id: string;
  created_at: string;
}
export interface SessionRow {
  id_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  expires_at: string;
  created_at: string;
}
export interface TokenRow {
  id: string;
  org_id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  scopes: string;
  created_by: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface IdentityRepository {
  insertOrg(row: OrgRow): Promise<void>;
  /** The org made first (a single-org installation's only one). */
  firstOrg(): Promise<OrgRow | null>;
  insertWorkspace(row: WorkspaceRow): Promise<void>;
  workspace(id: string, orgId: string): Promise<WorkspaceRow | null>;
  /** Oldest first. */
  workspacesOfOrg(orgId: string): Promise<WorkspaceRow[]>;
  firstWorkspace(orgId: string): Promise<WorkspaceRow | null>;
  countUsers(): Promise<number>;
  insertUser(row: UserRow): Promise<void>;
  /** Case-insensitive, as e-mail addresses are compared. */
  userByEmail(email: string): Promise<UserRow | null>;
  user(id: string): Promise<UserRow | null>;
  insertSession(row: SessionRow): Promise<void>;
  session(idHash: string): Promise<SessionRow | null>;
  deleteSession(idHash: string): Promise<void>;
  setSessionWorkspace(idHash: string, workspaceId: string): Promise<void>;
  countTokens(): Promise<number>;
  insertToken(row: Omit<TokenRow, "last_used_at" | "revoked_at">): Promise<void>;
  /** A token by its hash, revoked ones included. */
  tokenByHash(hash: string): Promise<TokenRow | null>;
  /** The workspace's tokens not revoked, oldest first. */
  tokensOfWorkspace(workspaceId: string): Promise<TokenRow[]>;
  token(id: string, workspaceId: string): Promise<TokenRow | null>;
  revokeToken(id: string, at: string): Promise<void>;
  touchToken(id: string, at: string): Promise<void>;
}
