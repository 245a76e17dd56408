/**
 * Orgs, workspaces, users, members, invitations, sessions and API tokens: the rows and what the storage port (./port.ts) answers
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
  /** SHA-256 of the cookie's value: the key a call is looked up by. */
  id_hash: string;
  /** What the session is named by when listed and revoked (docs/teams.md, "Sessions"); never the cookie or its hash. */
  id: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  expires_at: string;
  created_at: string;
  /** Written at most once a minute. */
  last_seen_at: string | null;
  user_agent: string | null;
  address: string | null;
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

/** A user's membership of a workspace (docs/teams.md). */
export interface MemberRow {
  workspace_id: string;
  user_id: string;
  /** One of src/schema/roles.ts. */
  role: string;
  deactivated_at: string | null;
  created_at: string;
}
export interface MemberWithUserRow extends MemberRow {
  email: string;
  name: string;
}
export interface InvitationRow {
  id: string;
  org_id: string;
  workspace_id: string;
  email: string;
  role: string;
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
  revoked_at: string | null;
}

/** An org's OpenID provider (docs/teams.md, "Single sign-on"); `client_secret` is a SecretBox blob. */
export interface SsoProviderRow {
  id: string;
  org_id: string;
  /** Where a first sign-in becomes a member with `default_role`. */
  workspace_id: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string | null;
  /** Space-separated. */
  scopes: string;
  role_claim: string | null;
  /** JSON: [{ value, role, workspaceId? }]. */
  role_mapping: string;
  default_role: string;
  sso_only: boolean;
  created_at: string;
  updated_at: string;
}
export interface SsoLinkRow {
  issuer: string;
  subject: string;
  user_id: string;
  provider_id: string;
  created_at: string;
}
export interface SsoPendingRow {
  state_hash: string;
  provider_id: string;
  nonce: string;
  code_verifier: string;
  expires_at: string;
}
export interface SsoSessionRow {
  session_hash: string;
  provider_id: string;
  id_token: string;
  created_at: string;
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
  /** The user's sessions not expired at `now`, most recently used first. */
  sessionsOfUser(userId: string, now: string): Promise<SessionRow[]>;
  /** Deletes the user's session named `id`; true when there was one. */
  deleteSessionOfUser(userId: string, id: string): Promise<boolean>;
  /** Deletes every session of the user but the one whose hash is `keepIdHash` (null: all); answers how many. */
  deleteSessionsOfUser(userId: string, keepIdHash: string | null): Promise<number>;
  /**
   * Deletes up to `limit` sessions expired at `now`, then up to `limit` single sign-on links of sessions gone and
   * pending sign-ins expired (docs/teams.md, "Sessions"); answers how many sessions went.
   */
  deleteExpiredSessions(now: string, limit: number): Promise<number>;
  /** When and from where the session was last used. */
  touchSession(idHash: string, at: string, address: string | null, userAgent: string | null): Promise<void>;
  setPasswordHash(userId: string, passwordHash: string): Promise<void>;
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
  /** The org's users whose org-wide role is `role` (the first user is the org's `owner`). */
  usersOfOrgWithRole(orgId: string, role: string): Promise<UserRow[]>;
  insertMember(row: MemberRow): Promise<void>;
  /** One indexed read (the primary key): what the security middleware asks on every call. */
  member(workspaceId: string, userId: string): Promise<MemberRow | null>;
  /** The workspace's members with their e-mail and name, oldest first. */
  membersOfWorkspace(workspaceId: string): Promise<MemberWithUserRow[]>;
  /** The user's memberships, oldest first. */
  membershipsOfUser(userId: string): Promise<MemberRow[]>;
  setMemberRole(workspaceId: string, userId: string, role: string): Promise<void>;
  /** `at` null re-activates. */
  setMemberDeactivated(workspaceId: string, userId: string, at: string | null): Promise<void>;
  deleteMember(workspaceId: string, userId: string): Promise<void>;
  insertInvitation(row: Omit<InvitationRow, "accepted_at" | "accepted_by" | "revoked_at">): Promise<void>;
  invitationByHash(hash: string): Promise<InvitationRow | null>;
  invitation(id: string, workspaceId: string): Promise<InvitationRow | null>;
  /** Neither accepted nor revoked nor expired at `now`, oldest first. */
  pendingInvitations(workspaceId: string, now: string): Promise<InvitationRow[]>;
  /** Marks it accepted unless it already was, or was revoked; true when this call did (single use under races). */
  acceptInvitation(id: string, at: string, userId: string): Promise<boolean>;
  revokeInvitation(id: string, at: string): Promise<void>;
  insertSsoProvider(row: SsoProviderRow): Promise<void>;
  /** Every column but id, org_id and created_at. */
  updateSsoProvider(row: SsoProviderRow): Promise<void>;
  deleteSsoProvider(id: string, orgId: string): Promise<void>;
  ssoProvider(id: string): Promise<SsoProviderRow | null>;
  /** Every org's providers, oldest first (`orgId` null) or one org's. */
  ssoProviders(orgId: string | null): Promise<SsoProviderRow[]>;
  ssoLink(issuer: string, subject: string): Promise<SsoLinkRow | null>;
  insertSsoLink(row: SsoLinkRow): Promise<void>;
  insertSsoPending(row: SsoPendingRow): Promise<void>;
  /** Deletes and answers the pending sign-in of that state unless expired at `now` (single use); drops expired ones. */
  takeSsoPending(stateHash: string, now: string): Promise<SsoPendingRow | null>;
  insertSsoSession(row: SsoSessionRow): Promise<void>;
  /** Deletes and answers it. */
  takeSsoSession(sessionHash: string): Promise<SsoSessionRow | null>;
}
