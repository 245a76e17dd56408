/** Orgs, workspaces, users, members, invitations, sessions and API tokens on PostgreSQL (../identity.ts says what each answers). */
import type * as identity from "../identity";
import type { PostgresConnection } from "./connection";

/** A provider's settings, workspace_id to sso_only, in the order its INSERT and UPDATE take them. */
const ssoProviderSettings = (row: identity.SsoProviderRow) => [
  row.workspace_id,
  row.name,
  row.issuer,
  row.client_id,
  row.client_secret,
  row.scopes,
  row.role_claim,
  row.role_mapping,
  row.default_role,
  row.sso_only ? 1 : 0,
];

export class PostgresIdentity implements identity.IdentityRepository {
  constructor(private readonly c: PostgresConnection) {}

  async insertOrg(row: identity.OrgRow) {
    await this.c.insert("orgs", ["id", "name", "created_at"], row);
  }
  firstOrg() {
    return this.c.get<identity.OrgRow>("SELECT * FROM orgs ORDER BY created_at LIMIT 1");
  }
  async insertWorkspace(row: identity.WorkspaceRow) {
    await this.c.insert("workspaces", ["id", "org_id", "name", "created_at"], row);
  }
  workspace(id: string, orgId: string) {
    return this.c.get<identity.WorkspaceRow>("SELECT * FROM workspaces WHERE id = $1 AND org_id = $2", [id, orgId]);
  }
  workspacesOfOrg(orgId: string) {
    return this.c.all<identity.WorkspaceRow>("SELECT * FROM workspaces WHERE org_id = $1 ORDER BY created_at", [orgId]);
  }
  firstWorkspace(orgId: string) {
    return this.c.get<identity.WorkspaceRow>("SELECT * FROM workspaces WHERE org_id = $1 ORDER BY created_at LIMIT 1", [orgId]);
  }
  async countUsers() {
    return (await this.c.get<{ n: number }>("SELECT count(*) AS n FROM users"))?.n ?? 0;
  }
  async insertUser(row: identity.UserRow) {
    await this.c.insert("users", ["id", "org_id", "email", "name", "password_hash", "role", "default_workspace_id", "created_at"], row);
  }
  userByEmail(email: string) {
    // The column's collation (weft_nocase) ignores case.
    return this.c.get<identity.UserRow>("SELECT * FROM users WHERE email = $1", [email]);
  }
  user(id: string) {
    return this.c.get<identity.UserRow>("SELECT * FROM users WHERE id = $1", [id]);
  }
  async insertSession(row: identity.SessionRow) {
    await this.c.insert(
      "sessions",
      ["id_hash", "id", "user_id", "workspace_id", "csrf_token", "expires_at", "created_at", "last_seen_at", "user_agent", "address"],
      row,
    );
  }
  session(idHash: string) {
    return this.c.get<identity.SessionRow>("SELECT * FROM sessions WHERE id_hash = $1", [idHash]);
  }
  async deleteSession(idHash: string) {
    await this.c.run("DELETE FROM sessions WHERE id_hash = $1", [idHash]);
  }
  sessionsOfUser(userId: string, now: string) {
    return this.c.all<identity.SessionRow>(
      "SELECT * FROM sessions WHERE user_id = $1 AND expires_at > $2 ORDER BY coalesce(last_seen_at, created_at) DESC, created_at DESC",
      [userId, now],
    );
  }
  async deleteSessionOfUser(userId: string, id: string) {
    return (await this.c.run("DELETE FROM sessions WHERE user_id = $1 AND id = $2", [userId, id])) === 1;
  }
  async deleteSessionsOfUser(userId: string, keepIdHash: string | null) {
    // No session's hash is empty: "" keeps none.
    return this.c.run("DELETE FROM sessions WHERE user_id = $1 AND id_hash <> $2", [userId, keepIdHash ?? ""]);
  }
  async deleteExpiredSessions(now: string, limit: number) {
    const sessions = await this.c.run("DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions WHERE expires_at <= $1 LIMIT $2)", [now, limit]);
    // A session's SSO link is written after the session (src/core/sso.ts): one without its session is left over.
    await this.c.run(
      "DELETE FROM sso_sessions WHERE session_hash IN (SELECT l.session_hash FROM sso_sessions l WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id_hash = l.session_hash) LIMIT $1)",
      [limit],
    );
    await this.c.run("DELETE FROM sso_pending WHERE state_hash IN (SELECT state_hash FROM sso_pending WHERE expires_at <= $1 LIMIT $2)", [now, limit]);
    return sessions;
  }
  async touchSession(idHash: string, at: string, address: string | null, userAgent: string | null) {
    await this.c.run("UPDATE sessions SET last_seen_at = $1, address = coalesce($2, address), user_agent = coalesce($3, user_agent) WHERE id_hash = $4", [
      at,
      address,
      userAgent,
      idHash,
    ]);
  }
  async setPasswordHash(userId: string, passwordHash: string) {
    await this.c.run("UPDATE users SET password_hash = $1 WHERE id = $2", [passwordHash, userId]);
  }
  async setSessionWorkspace(idHash: string, workspaceId: string) {
    await this.c.run("UPDATE sessions SET workspace_id = $1 WHERE id_hash = $2", [workspaceId, idHash]);
  }
  async countTokens() {
    return (await this.c.get<{ n: number }>("SELECT count(*) AS n FROM api_tokens"))?.n ?? 0;
  }
  async insertToken(row: Omit<identity.TokenRow, "last_used_at" | "revoked_at">) {
    await this.c.insert("api_tokens", ["id", "org_id", "workspace_id", "name", "prefix", "token_hash", "scopes", "created_by", "created_at"], row);
  }
  tokenByHash(hash: string) {
    return this.c.get<identity.TokenRow>("SELECT * FROM api_tokens WHERE token_hash = $1", [hash]);
  }
  tokensOfWorkspace(workspaceId: string) {
    return this.c.all<identity.TokenRow>("SELECT * FROM api_tokens WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at", [workspaceId]);
  }
  token(id: string, workspaceId: string) {
    return this.c.get<identity.TokenRow>("SELECT * FROM api_tokens WHERE id = $1 AND workspace_id = $2", [id, workspaceId]);
  }
  async revokeToken(id: string, at: string) {
    await this.c.run("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2", [at, id]);
  }
  async touchToken(id: string, at: string) {
    await this.c.run("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2", [at, id]);
  }
  usersOfOrgWithRole(orgId: string, role: string) {
    return this.c.all<identity.UserRow>("SELECT * FROM users WHERE org_id = $1 AND role = $2 ORDER BY created_at", [orgId, role]);
  }
  async insertMember(row: identity.MemberRow) {
    await this.c.insert("workspace_members", ["workspace_id", "user_id", "role", "deactivated_at", "created_at"], row);
  }
  member(workspaceId: string, userId: string) {
    return this.c.get<identity.MemberRow>("SELECT * FROM workspace_members WHERE workspace_id = $1 AND user_id = $2", [workspaceId, userId]);
  }
  membersOfWorkspace(workspaceId: string) {
    return this.c.all<identity.MemberWithUserRow>(
      "SELECT m.*, u.email, u.name FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY m.created_at, u.email",
      [workspaceId],
    );
  }
  membershipsOfUser(userId: string) {
    return this.c.all<identity.MemberRow>("SELECT * FROM workspace_members WHERE user_id = $1 ORDER BY created_at", [userId]);
  }
  async setMemberRole(workspaceId: string, userId: string, role: string) {
    await this.c.run("UPDATE workspace_members SET role = $1 WHERE workspace_id = $2 AND user_id = $3", [role, workspaceId, userId]);
  }
  async setMemberDeactivated(workspaceId: string, userId: string, at: string | null) {
    await this.c.run("UPDATE workspace_members SET deactivated_at = $1 WHERE workspace_id = $2 AND user_id = $3", [at, workspaceId, userId]);
  }
  async deleteMember(workspaceId: string, userId: string) {
    await this.c.run("DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2", [workspaceId, userId]);
  }
  async insertInvitation(row: Omit<identity.InvitationRow, "accepted_at" | "accepted_by" | "revoked_at">) {
    await this.c.insert("invitations", ["id", "org_id", "workspace_id", "email", "role", "token_hash", "invited_by", "created_at", "expires_at"], row);
  }
  invitationByHash(hash: string) {
    return this.c.get<identity.InvitationRow>("SELECT * FROM invitations WHERE token_hash = $1", [hash]);
  }
  invitation(id: string, workspaceId: string) {
    return this.c.get<identity.InvitationRow>("SELECT * FROM invitations WHERE id = $1 AND workspace_id = $2", [id, workspaceId]);
  }
  pendingInvitations(workspaceId: string, now: string) {
    return this.c.all<identity.InvitationRow>(
      "SELECT * FROM invitations WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at",
      [workspaceId, now],
    );
  }
  async acceptInvitation(id: string, at: string, userId: string) {
    return (
      (await this.c.run("UPDATE invitations SET accepted_at = $1, accepted_by = $2 WHERE id = $3 AND accepted_at IS NULL AND revoked_at IS NULL", [
        at,
        userId,
        id,
      ])) === 1
    );
  }
  async revokeInvitation(id: string, at: string) {
    await this.c.run("UPDATE invitations SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [at, id]);
  }
  async insertSsoProvider(row: identity.SsoProviderRow) {
    await this.c.run(
      `INSERT INTO sso_providers (id, org_id, workspace_id, name, issuer, client_id, client_secret, scopes, role_claim, role_mapping, default_role, sso_only, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [row.id, row.org_id, ...ssoProviderSettings(row), row.created_at, row.updated_at],
    );
  }
  async updateSsoProvider(row: identity.SsoProviderRow) {
    await this.c.run(
      `UPDATE sso_providers SET workspace_id = $2, name = $3, issuer = $4, client_id = $5, client_secret = $6, scopes = $7, role_claim = $8,
       role_mapping = $9, default_role = $10, sso_only = $11, updated_at = $12 WHERE id = $1`,
      [row.id, ...ssoProviderSettings(row), row.updated_at],
    );
  }
  async deleteSsoProvider(id: string, orgId: string) {
    await this.c.run("DELETE FROM sso_providers WHERE id = $1 AND org_id = $2", [id, orgId]);
  }
  async ssoProvider(id: string) {
    return ssoRow(await this.c.get<identity.SsoProviderRow>("SELECT * FROM sso_providers WHERE id = $1", [id]));
  }
  async ssoProviders(orgId: string | null) {
    const rows = orgId
      ? await this.c.all<identity.SsoProviderRow>("SELECT * FROM sso_providers WHERE org_id = $1 ORDER BY created_at, name", [orgId])
      : await this.c.all<identity.SsoProviderRow>("SELECT * FROM sso_providers ORDER BY created_at, name");
    return rows.map((row) => ssoRow(row)!);
  }
  ssoLink(issuer: string, subject: string) {
    return this.c.get<identity.SsoLinkRow>("SELECT * FROM sso_links WHERE issuer = $1 AND subject = $2", [issuer, subject]);
  }
  async insertSsoLink(row: identity.SsoLinkRow) {
    await this.c.insert("sso_links", ["issuer", "subject", "user_id", "provider_id", "created_at"], row);
  }
  async insertSsoPending(row: identity.SsoPendingRow) {
    await this.c.insert("sso_pending", ["state_hash", "provider_id", "nonce", "code_verifier", "expires_at"], row);
  }
  async takeSsoPending(stateHash: string, now: string) {
    const row = await this.c.get<identity.SsoPendingRow>("DELETE FROM sso_pending WHERE state_hash = $1 RETURNING *", [stateHash]);
    await this.c.run("DELETE FROM sso_pending WHERE expires_at <= $1", [now]);
    return row && row.expires_at > now ? row : null;
  }
  async insertSsoSession(row: identity.SsoSessionRow) {
    await this.c.insert("sso_sessions", ["session_hash", "provider_id", "id_token", "created_at"], row);
  }
  takeSsoSession(sessionHash: string) {
    return this.c.get<identity.SsoSessionRow>("DELETE FROM sso_sessions WHERE session_hash = $1 RETURNING *", [sessionHash]);
  }
}

/** `sso_only` is stored 0 or 1, as on SQLite (the two schemas keep the same column types). */
const ssoRow = (row: identity.SsoProviderRow | null) => (row ? { ...row, sso_only: Boolean(row.sso_only) } : null);
