/** Orgs, workspaces, users, sessions and API tokens. Prepared statements are held once. */
import { bindRow, countOf, type Db } from "./db";

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

export class IdentityStore {
  private readonly q;
  constructor(readonly db: Db) {
    this.q = {
      insertOrg: db.query("INSERT INTO orgs (id, name, created_at) VALUES ($id, $name, $created_at)"),
      firstOrg: db.query<OrgRow, []>("SELECT * FROM orgs ORDER BY created_at LIMIT 1"),
      insertWorkspace: db.query("INSERT INTO workspaces (id, org_id, name, created_at) VALUES ($id, $org_id, $name, $created_at)"),
      workspace: db.query<WorkspaceRow, [string, string]>("SELECT * FROM workspaces WHERE id = ? AND org_id = ?"),
      workspacesOfOrg: db.query<WorkspaceRow, [string]>("SELECT * FROM workspaces WHERE org_id = ? ORDER BY created_at"),
      firstWorkspace: db.query<WorkspaceRow, [string]>("SELECT * FROM workspaces WHERE org_id = ? ORDER BY created_at LIMIT 1"),
      countUsers: db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM users"),
      insertUser: db.query(
        "INSERT INTO users (id, org_id, email, name, password_hash, role, default_workspace_id, created_at) VALUES ($id, $org_id, $email, $name, $password_hash, $role, $default_workspace_id, $created_at)",
      ),
      userByEmail: db.query<UserRow, [string]>("SELECT * FROM users WHERE email = ?"),
      user: db.query<UserRow, [string]>("SELECT * FROM users WHERE id = ?"),
      insertSession: db.query(
        "INSERT INTO sessions (id_hash, user_id, workspace_id, csrf_token, expires_at, created_at) VALUES ($id_hash, $user_id, $workspace_id, $csrf_token, $expires_at, $created_at)",
      ),
      session: db.query<SessionRow, [string]>("SELECT * FROM sessions WHERE id_hash = ?"),
      deleteSession: db.query("DELETE FROM sessions WHERE id_hash = ?"),
      setSessionWorkspace: db.query("UPDATE sessions SET workspace_id = ? WHERE id_hash = ?"),
      countTokens: db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM api_tokens"),
      insertToken: db.query(
        "INSERT INTO api_tokens (id, org_id, workspace_id, name, prefix, token_hash, scopes, created_by, created_at) VALUES ($id, $org_id, $workspace_id, $name, $prefix, $token_hash, $scopes, $created_by, $created_at)",
      ),
      tokenByHash: db.query<TokenRow, [string]>("SELECT * FROM api_tokens WHERE token_hash = ?"),
      tokensOfWorkspace: db.query<TokenRow, [string]>("SELECT * FROM api_tokens WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY created_at"),
      token: db.query<TokenRow, [string, string]>("SELECT * FROM api_tokens WHERE id = ? AND workspace_id = ?"),
      revokeToken: db.query("UPDATE api_tokens SET revoked_at = ? WHERE id = ?"),
      touchToken: db.query("UPDATE api_tokens SET last_used_at = ? WHERE id = ?"),
    };
  }

  insertOrg(row: OrgRow) {
    this.q.insertOrg.run(bindRow(row));
  }
  firstOrg() {
    return this.q.firstOrg.get();
  }
  insertWorkspace(row: WorkspaceRow) {
    this.q.insertWorkspace.run(bindRow(row));
  }
  workspace(id: string, orgId: string) {
    return this.q.workspace.get(id, orgId);
  }
  workspacesOfOrg(orgId: string) {
    return this.q.workspacesOfOrg.all(orgId);
  }
  firstWorkspace(orgId: string) {
    return this.q.firstWorkspace.get(orgId);
  }
  countUsers() {
    return countOf(this.q.countUsers.get());
  }
  insertUser(row: UserRow) {
    this.q.insertUser.run(bindRow(row));
  }
  userByEmail(email: string) {
    return this.q.userByEmail.get(email);
  }
  user(id: string) {
    return this.q.user.get(id);
  }
  insertSession(row: SessionRow) {
    this.q.insertSession.run(bindRow(row));
  }
  session(idHash: string) {
    return this.q.session.get(idHash);
  }
  deleteSession(idHash: string) {
    this.q.deleteSession.run(idHash);
  }
  setSessionWorkspace(idHash: string, workspaceId: string) {
    this.q.setSessionWorkspace.run(workspaceId, idHash);
  }
  countTokens() {
    return countOf(this.q.countTokens.get());
  }
  insertToken(row: Omit<TokenRow, "last_used_at" | "revoked_at">) {
    this.q.insertToken.run(bindRow(row));
  }
  tokenByHash(hash: string) {
    return this.q.tokenByHash.get(hash);
  }
  tokensOfWorkspace(workspaceId: string) {
    return this.q.tokensOfWorkspace.all(workspaceId);
  }
  token(id: string, workspaceId: string) {
    return this.q.token.get(id, workspaceId);
  }
  revokeToken(id: string, at: string) {
    this.q.revokeToken.run(at, id);
  }
  touchToken(id: string, at: string) {
    this.q.touchToken.run(at, id);
  }
}
