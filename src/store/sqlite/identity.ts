/** Orgs, workspaces, users, members, invitations, sessions and API tokens on SQLite (../identity.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { countOf } from "./db";
import type * as identity from "../identity";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  insertOrg: db.query<null, [string, string, string]>("INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)"),
  firstOrg: db.query<identity.OrgRow, []>("SELECT * FROM orgs ORDER BY created_at LIMIT 1"),
  insertWorkspace: db.query<null, [string, string, string, string]>("INSERT INTO workspaces (id, org_id, name, created_at) VALUES (?, ?, ?, ?)"),
  workspace: db.query<identity.WorkspaceRow, [string, string]>("SELECT * FROM workspaces WHERE id = ? AND org_id = ?"),
  workspacesOfOrg: db.query<identity.WorkspaceRow, [string]>("SELECT * FROM workspaces WHERE org_id = ? ORDER BY created_at"),
  firstWorkspace: db.query<identity.WorkspaceRow, [string]>("SELECT * FROM workspaces WHERE org_id = ? ORDER BY created_at LIMIT 1"),
  countUsers: db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM users"),
  insertUser: db.query<null, [string, string, string, string, string, string, string, string]>(
    "INSERT INTO users (id, org_id, email, name, password_hash, role, default_workspace_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  ),
  // The column is declared COLLATE NOCASE: the comparison ignores case.
  userByEmail: db.query<identity.UserRow, [string]>("SELECT * FROM users WHERE email = ?"),
  user: db.query<identity.UserRow, [string]>("SELECT * FROM users WHERE id = ?"),
  insertSession: db.query<null, Record<string, string | null>>(
    `INSERT INTO sessions (id_hash, id, user_id, workspace_id, csrf_token, expires_at, created_at, last_seen_at, user_agent, address)
     VALUES ($id_hash, $id, $user_id, $workspace_id, $csrf_token, $expires_at, $created_at, $last_seen_at, $user_agent, $address)`,
  ),
  session: db.query<identity.SessionRow, [string]>("SELECT * FROM sessions WHERE id_hash = ?"),
  deleteSession: db.query<null, [string]>("DELETE FROM sessions WHERE id_hash = ?"),
  sessionsOfUser: db.query<identity.SessionRow, [string, string]>(
    "SELECT * FROM sessions WHERE user_id = ? AND expires_at > ? ORDER BY coalesce(last_seen_at, created_at) DESC, created_at DESC",
  ),
  deleteSessionOfUser: db.query<null, [string, string]>("DELETE FROM sessions WHERE user_id = ? AND id = ?"),
  deleteSessionsOfUser: db.query<null, [string, string]>("DELETE FROM sessions WHERE user_id = ? AND id_hash <> ?"),
  deleteExpiredSessions: db.query<null, [string, number]>("DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions WHERE expires_at <= ? LIMIT ?)"),
  deleteOrphanSsoSessions: db.query<null, [number]>(
    "DELETE FROM sso_sessions WHERE session_hash IN (SELECT l.session_hash FROM sso_sessions l WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id_hash = l.session_hash) LIMIT ?)",
  ),
  deleteExpiredSsoPending: db.query<null, [string, number]>(
    "DELETE FROM sso_pending WHERE state_hash IN (SELECT state_hash FROM sso_pending WHERE expires_at <= ? LIMIT ?)",
  ),
  touchSession: db.query<null, [string, string | null, string | null, string]>(
    "UPDATE sessions SET last_seen_at = ?, address = coalesce(?, address), user_agent = coalesce(?, user_agent) WHERE id_hash = ?",
  ),
  setPasswordHash: db.query<null, [string, string]>("UPDATE users SET password_hash = ? WHERE id = ?"),
  setSessionWorkspace: db.query<null, [string, string]>("UPDATE sessions SET workspace_id = ? WHERE id_hash = ?"),
  countTokens: db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM api_tokens"),
  insertToken: db.query<null, [string, string, string, string, string, string, string, string | null, string]>(
    "INSERT INTO api_tokens (id, org_id, workspace_id, name, prefix, token_hash, scopes, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  ),
  tokenByHash: db.query<identity.TokenRow, [string]>("SELECT * FROM api_tokens WHERE token_hash = ?"),
  tokensOfWorkspace: db.query<identity.TokenRow, [string]>("SELECT * FROM api_tokens WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY created_at"),
  token: db.query<identity.TokenRow, [string, string]>("SELECT * FROM api_tokens WHERE id = ? AND workspace_id = ?"),
  revokeToken: db.query<null, [string, string]>("UPDATE api_tokens SET revoked_at = ? WHERE id = ?"),
  touchToken: db.query<null, [string, string]>("UPDATE api_tokens SET last_used_at = ? WHERE id = ?"),
  usersOfOrgWithRole: db.query<identity.UserRow, [string, string]>("SELECT * FROM users WHERE org_id = ? AND role = ? ORDER BY created_at"),
  insertMember: db.query<null, [string, string, string, string | null, string]>(
    "INSERT INTO workspace_members (workspace_id, user_id, role, deactivated_at, created_at) VALUES (?, ?, ?, ?, ?)",
  ),
  member: db.query<identity.MemberRow, [string, string]>("SELECT * FROM workspace_members WHERE workspace_id = ? AND user_id = ?"),
  membersOfWorkspace: db.query<identity.MemberWithUserRow, [string]>(
    "SELECT m.*, u.email, u.name FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ? ORDER BY m.created_at, u.email",
  ),
  membershipsOfUser: db.query<identity.MemberRow, [string]>("SELECT * FROM workspace_members WHERE user_id = ? ORDER BY created_at"),
  setMemberRole: db.query<null, [string, string, string]>("UPDATE workspace_members SET role = ? WHERE workspace_id = ? AND user_id = ?"),
  setMemberDeactivated: db.query<null, [string | null, string, string]>(
    "UPDATE workspace_members SET deactivated_at = ? WHERE workspace_id = ? AND user_id = ?",
  ),
  deleteMember: db.query<null, [string, string]>("DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?"),
  insertInvitation: db.query<null, [string, string, string, string, string, string, string | null, string, string]>(
    "INSERT INTO invitations (id, org_id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  ),
  invitationByHash: db.query<identity.InvitationRow, [string]>("SELECT * FROM invitations WHERE token_hash = ?"),
  invitation: db.query<identity.InvitationRow, [string, string]>("SELECT * FROM invitations WHERE id = ? AND workspace_id = ?"),
  pendingInvitations: db.query<identity.InvitationRow, [string, string]>(
    "SELECT * FROM invitations WHERE workspace_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at",
  ),
  acceptInvitation: db.query<null, [string, string, string]>(
    "UPDATE invitations SET accepted_at = ?, accepted_by = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL",
  ),
  revokeInvitation: db.query<null, [string, string]>("UPDATE invitations SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
  insertSsoProvider: db.query<null, Record<string, string | number | null>>(
    `INSERT INTO sso_providers (id, org_id, workspace_id, name, issuer, client_id, client_secret, scopes, role_claim, role_mapping, default_role, sso_only, created_at, updated_at)
     VALUES ($id, $org_id, $workspace_id, $name, $issuer, $client_id, $client_secret, $scopes, $role_claim, $role_mapping, $default_role, $sso_only, $created_at, $updated_at)`,
  ),
  updateSsoProvider: db.query<null, Record<string, string | number | null>>(
    `UPDATE sso_providers SET workspace_id = $workspace_id, name = $name, issuer = $issuer, client_id = $client_id, client_secret = $client_secret,
     scopes = $scopes, role_claim = $role_claim, role_mapping = $role_mapping, default_role = $default_role, sso_only = $sso_only, updated_at = $updated_at
     WHERE id = $id`,
  ),
  deleteSsoProvider: db.query<null, [string, string]>("DELETE FROM sso_providers WHERE id = ? AND org_id = ?"),
  ssoProvider: db.query<identity.SsoProviderRow, [string]>("SELECT * FROM sso_providers WHERE id = ?"),
  ssoProvidersOfOrg: db.query<identity.SsoProviderRow, [string]>("SELECT * FROM sso_providers WHERE org_id = ? ORDER BY created_at, name"),
  ssoProviders: db.query<identity.SsoProviderRow, []>("SELECT * FROM sso_providers ORDER BY created_at, name"),
  ssoLink: db.query<identity.SsoLinkRow, [string, string]>("SELECT * FROM sso_links WHERE issuer = ? AND subject = ?"),
  insertSsoLink: db.query<null, [string, string, string, string, string]>(
    "INSERT INTO sso_links (issuer, subject, user_id, provider_id, created_at) VALUES (?, ?, ?, ?, ?)",
  ),
  insertSsoPending: db.query<null, [string, string, string, string, string]>(
    "INSERT INTO sso_pending (state_hash, provider_id, nonce, code_verifier, expires_at) VALUES (?, ?, ?, ?, ?)",
  ),
  takeSsoPending: db.query<identity.SsoPendingRow, [string]>("DELETE FROM sso_pending WHERE state_hash = ? RETURNING *"),
  dropExpiredSsoPending: db.query<null, [string]>("DELETE FROM sso_pending WHERE expires_at <= ?"),
  insertSsoSession: db.query<null, [string, string, string, string]>(
    "INSERT INTO sso_sessions (session_hash, provider_id, id_token, created_at) VALUES (?, ?, ?, ?)",
  ),
  takeSsoSession: db.query<identity.SsoSessionRow, [string]>("DELETE FROM sso_sessions WHERE session_hash = ? RETURNING *"),
});

export class SqliteIdentity extends Prepared(statements) implements identity.IdentityRepository {
  insertOrg(row: identity.OrgRow) {
    return this.c.do(() => void this.q.insertOrg.run(row.id, row.name, row.created_at));
  }
  firstOrg() {
    return this.c.do(() => this.q.firstOrg.get());
  }
  insertWorkspace(row: identity.WorkspaceRow) {
    return this.c.do(() => void this.q.insertWorkspace.run(row.id, row.org_id, row.name, row.created_at));
  }
  workspace(id: string, orgId: string) {
    return this.c.do(() => this.q.workspace.get(id, orgId));
  }
  workspacesOfOrg(orgId: string) {
    return this.c.do(() => this.q.workspacesOfOrg.all(orgId));
  }
  firstWorkspace(orgId: string) {
    return this.c.do(() => this.q.firstWorkspace.get(orgId));
  }
  countUsers() {
    return this.c.do(() => countOf(this.q.countUsers.get()));
  }
  insertUser(row: identity.UserRow) {
    return this.c.do(
      () => void this.q.insertUser.run(row.id, row.org_id, row.email, row.name, row.password_hash, row.role, row.default_workspace_id, row.created_at),
    );
  }
  userByEmail(email: string) {
    return this.c.do(() => this.q.userByEmail.get(email));
  }
  user(id: string) {
    return this.c.do(() => this.q.user.get(id));
  }
  insertSession(row: identity.SessionRow) {
    const params = Object.fromEntries(Object.entries(row).map(([key, value]) => [`$${key}`, value]));
    return this.c.do(() => void this.q.insertSession.run(params));
  }
  session(idHash: string) {
    return this.c.do(() => this.q.session.get(idHash));
  }
  deleteSession(idHash: string) {
    return this.c.do(() => void this.q.deleteSession.run(idHash));
  }
  sessionsOfUser(userId: string, now: string) {
    return this.c.do(() => this.q.sessionsOfUser.all(userId, now));
  }
  deleteSessionOfUser(userId: string, id: string) {
    return this.c.do(() => this.q.deleteSessionOfUser.run(userId, id).changes === 1);
  }
  deleteSessionsOfUser(userId: string, keepIdHash: string | null) {
    // No session's hash is empty: "" keeps none.
    return this.c.do(() => this.q.deleteSessionsOfUser.run(userId, keepIdHash ?? "").changes);
  }
  deleteExpiredSessions(now: string, limit: number) {
    return this.c.do(() => {
      const sessions = this.q.deleteExpiredSessions.run(now, limit).changes;
      // A session's SSO link is written after the session (src/core/sso.ts): one without its session is left over.
      this.q.deleteOrphanSsoSessions.run(limit);
      this.q.deleteExpiredSsoPending.run(now, limit);
      return sessions;
    });
  }
  touchSession(idHash: string, at: string, address: string | null, userAgent: string | null) {
    return this.c.do(() => void this.q.touchSession.run(at, address, userAgent, idHash));
  }
  setPasswordHash(userId: string, passwordHash: string) {
    return this.c.do(() => void this.q.setPasswordHash.run(passwordHash, userId));
  }
  setSessionWorkspace(idHash: string, workspaceId: string) {
    return this.c.do(() => void this.q.setSessionWorkspace.run(workspaceId, idHash));
  }
  countTokens() {
    return this.c.do(() => countOf(this.q.countTokens.get()));
  }
  insertToken(row: Omit<identity.TokenRow, "last_used_at" | "revoked_at">) {
    return this.c.do(
      () => void this.q.insertToken.run(row.id, row.org_id, row.workspace_id, row.name, row.prefix, row.token_hash, row.scopes, row.created_by, row.created_at),
    );
  }
  tokenByHash(hash: string) {
    return this.c.do(() => this.q.tokenByHash.get(hash));
  }
  tokensOfWorkspace(workspaceId: string) {
    return this.c.do(() => this.q.tokensOfWorkspace.all(workspaceId));
  }
  token(id: string, workspaceId: string) {
    return this.c.do(() => this.q.token.get(id, workspaceId));
  }
  revokeToken(id: string, at: string) {
    return this.c.do(() => void this.q.revokeToken.run(at, id));
  }
  touchToken(id: string, at: string) {
    return this.c.do(() => void this.q.touchToken.run(at, id));
  }
  usersOfOrgWithRole(orgId: string, role: string) {
    return this.c.do(() => this.q.usersOfOrgWithRole.all(orgId, role));
  }
  insertMember(row: identity.MemberRow) {
    return this.c.do(() => void this.q.insertMember.run(row.workspace_id, row.user_id, row.role, row.deactivated_at, row.created_at));
  }
  member(workspaceId: string, userId: string) {
    return this.c.do(() => this.q.member.get(workspaceId, userId));
  }
  membersOfWorkspace(workspaceId: string) {
    return this.c.do(() => this.q.membersOfWorkspace.all(workspaceId));
  }
  membershipsOfUser(userId: string) {
    return this.c.do(() => this.q.membershipsOfUser.all(userId));
  }
  setMemberRole(workspaceId: string, userId: string, role: string) {
    return this.c.do(() => void this.q.setMemberRole.run(role, workspaceId, userId));
  }
  setMemberDeactivated(workspaceId: string, userId: string, at: string | null) {
    return this.c.do(() => void this.q.setMemberDeactivated.run(at, workspaceId, userId));
  }
  deleteMember(workspaceId: string, userId: string) {
    return this.c.do(() => void this.q.deleteMember.run(workspaceId, userId));
  }
  insertInvitation(row: Omit<identity.InvitationRow, "accepted_at" | "accepted_by" | "revoked_at">) {
    return this.c.do(
      () =>
        void this.q.insertInvitation.run(
          row.id,
          row.org_id,
          row.workspace_id,
          row.email,
          row.role,
          row.token_hash,
          row.invited_by,
          row.created_at,
          row.expires_at,
        ),
    );
  }
  invitationByHash(hash: string) {
    return this.c.do(() => this.q.invitationByHash.get(hash));
  }
  invitation(id: string, workspaceId: string) {
    return this.c.do(() => this.q.invitation.get(id, workspaceId));
  }
  pendingInvitations(workspaceId: string, now: string) {
    return this.c.do(() => this.q.pendingInvitations.all(workspaceId, now));
  }
  acceptInvitation(id: string, at: string, userId: string) {
    return this.c.do(() => this.q.acceptInvitation.run(at, userId, id).changes === 1);
  }
  revokeInvitation(id: string, at: string) {
    return this.c.do(() => void this.q.revokeInvitation.run(at, id));
  }
  insertSsoProvider(row: identity.SsoProviderRow) {
    return this.c.do(() => void this.q.insertSsoProvider.run(ssoParams(row)));
  }
  updateSsoProvider(row: identity.SsoProviderRow) {
    return this.c.do(() => void this.q.updateSsoProvider.run(ssoParams(row)));
  }
  deleteSsoProvider(id: string, orgId: string) {
    return this.c.do(() => void this.q.deleteSsoProvider.run(id, orgId));
  }
  ssoProvider(id: string) {
    return this.c.do(() => ssoRow(this.q.ssoProvider.get(id)));
  }
  ssoProviders(orgId: string | null) {
    return this.c.do(() => (orgId ? this.q.ssoProvidersOfOrg.all(orgId) : this.q.ssoProviders.all()).map((row) => ssoRow(row)!));
  }
  ssoLink(issuer: string, subject: string) {
    return this.c.do(() => this.q.ssoLink.get(issuer, subject));
  }
  insertSsoLink(row: identity.SsoLinkRow) {
    return this.c.do(() => void this.q.insertSsoLink.run(row.issuer, row.subject, row.user_id, row.provider_id, row.created_at));
  }
  insertSsoPending(row: identity.SsoPendingRow) {
    return this.c.do(() => void this.q.insertSsoPending.run(row.state_hash, row.provider_id, row.nonce, row.code_verifier, row.expires_at));
  }
  takeSsoPending(stateHash: string, now: string) {
    return this.c.do(() => {
      const row = this.q.takeSsoPending.get(stateHash);
      this.q.dropExpiredSsoPending.run(now);
      return row && row.expires_at > now ? row : null;
    });
  }
  insertSsoSession(row: identity.SsoSessionRow) {
    return this.c.do(() => void this.q.insertSsoSession.run(row.session_hash, row.provider_id, row.id_token, row.created_at));
  }
  takeSsoSession(sessionHash: string) {
    return this.c.do(() => this.q.takeSsoSession.get(sessionHash));
  }
}

/** SQLite keeps the flag as 0 or 1. */
const ssoParams = (row: identity.SsoProviderRow) =>
  Object.fromEntries(Object.entries({ ...row, sso_only: row.sso_only ? 1 : 0 }).map(([key, value]) => [`$${key}`, value])) as Record<
    string,
    string | number | null
  >;
const ssoRow = (row: identity.SsoProviderRow | null) => (row ? { ...row, sso_only: Boolean(row.sso_only) } : null);
