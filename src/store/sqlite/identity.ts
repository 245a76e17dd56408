/** Orgs, workspaces, users, sessions and API tokens on SQLite (../identity.ts says what each answers). */
import { countOf } from "./db";
import type { IdentityRepository, OrgRow, SessionRow, TokenRow, UserRow, WorkspaceRow } from "../identity";
import type { SqliteConnection } from "./connection";

export class SqliteIdentity implements IdentityRepository {
  private readonly q;
  constructor(private readonly c: SqliteConnection) {
    const db = c.db;
    this.q = {
      insertOrg: db.query<null, [string, string, string]>("INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)"),
      firstOrg: db.query<OrgRow, []>("SELECT * FROM orgs ORDER BY created_at LIMIT 1"),
      insertWorkspace: db.query<null, [string, string, string, string]>("INSERT INTO workspaces (id, org_id, name, created_at) VALUES (?, ?, ?, ?)"),
      workspace: db.query<WorkspaceRow, [string, string]>("SELECT * FROM workspaces WHERE id = ? AND org_id = ?"),
      workspacesOfOrg: db.query<WorkspaceRow, [string]>("SELECT * FROM workspaces WHERE org_id = ? ORDER BY created_at"),
      firstWorkspace: db.query<WorkspaceRow, [string]>("SELECT * FROM workspaces WHERE org_id = ? ORDER BY created_at LIMIT 1"),
      countUsers: db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM users"),
      insertUser: db.query<null, [string, string, string, string, string, string, string, string]>(
        "INSERT INTO users (id, org_id, email, name, password_hash, role, default_workspace_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      // The column is declared COLLATE NOCASE: the comparison ignores case.
      userByEmail: db.query<UserRow, [string]>("SELECT * FROM users WHERE email = ?"),
      user: db.query<UserRow, [string]>("SELECT * FROM users WHERE id = ?"),
      insertSession: db.query<null, [string, string, string, string, string, string]>(
        "INSERT INTO sessions (id_hash, user_id, workspace_id, csrf_token, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      session: db.query<SessionRow, [string]>("SELECT * FROM sessions WHERE id_hash = ?"),
      deleteSession: db.query<null, [string]>("DELETE FROM sessions WHERE id_hash = ?"),
      setSessionWorkspace: db.query<null, [string, string]>("UPDATE sessions SET workspace_id = ? WHERE id_hash = ?"),
      countTokens: db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM api_tokens"),
      insertToken: db.query<null, [string, string, string, string, string, string, string, string | null, string]>(
        "INSERT INTO api_tokens (id, org_id, workspace_id, name, prefix, token_hash, scopes, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      tokenByHash: db.query<TokenRow, [string]>("SELECT * FROM api_tokens WHERE token_hash = ?"),
      tokensOfWorkspace: db.query<TokenRow, [string]>("SELECT * FROM api_tokens WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY created_at"),
      token: db.query<TokenRow, [string, string]>("SELECT * FROM api_tokens WHERE id = ? AND workspace_id = ?"),
      revokeToken: db.query<null, [string, string]>("UPDATE api_tokens SET revoked_at = ? WHERE id = ?"),
      touchToken: db.query<null, [string, string]>("UPDATE api_tokens SET last_used_at = ? WHERE id = ?"),
    };
  }

  insertOrg(row: OrgRow) {
    return this.c.do(() => void this.q.insertOrg.run(row.id, row.name, row.created_at));
  }
  firstOrg() {
    return this.c.do(() => this.q.firstOrg.get());
  }
  insertWorkspace(row: WorkspaceRow) {
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
  insertUser(row: UserRow) {
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
  insertSession(row: SessionRow) {
    return this.c.do(() => void this.q.insertSession.run(row.id_hash, row.user_id, row.workspace_id, row.csrf_token, row.expires_at, row.created_at));
  }
  session(idHash: string) {
    return this.c.do(() => this.q.session.get(idHash));
  }
  deleteSession(idHash: string) {
    return this.c.do(() => void this.q.deleteSession.run(idHash));
  }
  setSessionWorkspace(idHash: string, workspaceId: string) {
    return this.c.do(() => void this.q.setSessionWorkspace.run(workspaceId, idHash));
  }
  countTokens() {
    return this.c.do(() => countOf(this.q.countTokens.get()));
  }
  insertToken(row: Omit<TokenRow, "last_used_at" | "revoked_at">) {
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
}
