/**
 * Who is calling: API tokens (bearer) and UI sessions (cookie), the org → workspace → user model,
 * first-owner setup and the bootstrap token. No HTTP here; the auth layer calls these.
 */
import { LRUCache } from "lru-cache";
import { AppError } from "../http/errors";
import { nowIso, type Db, atomically } from "../store/db";
import { IdentityStore, type TokenRow, type UserRow, type WorkspaceRow } from "../store/identity";
import { newId, newSecret, sha256 } from "../lib/ids";
import { SCOPES, parseScopes, type Scope } from "../schema/scopes";
import type { ClusterChanges } from "./cluster-changes";

export interface Principal {
  kind: "token" | "session";
  /** Token id or session hash: the rate-limit and idempotency bucket. */
  credentialId: string;
  orgId: string;
  workspaceId: string;
  userId: string | null;
  scopes: ReadonlySet<Scope>;
  /** Present for sessions: cookie-authenticated writes must echo it in X-CSRF-Token. */
  csrfToken?: string;
}

export interface TokenView {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  workspaceId: string;
  createdAt: string;
  lastUsedAt: string | null;
}

const SESSION_DAYS = 14;
const SETUP_DONE = "setup is already done; log in with POST /api/auth/login";
const TOUCH_INTERVAL_MS = 60_000;

const tokenView = (row: TokenRow): TokenView => ({
  id: row.id,
  name: row.name,
  scopes: row.scopes.split(" ") as Scope[],
  prefix: row.prefix,
  workspaceId: row.workspace_id,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

export const workspaceView = (row: WorkspaceRow) => ({ id: row.id, orgId: row.org_id, name: row.name, createdAt: row.created_at });
export const userView = (row: UserRow) => ({ id: row.id, email: row.email, name: row.name, role: row.role, orgId: row.org_id });

export class Identity {
  readonly store: IdentityStore;
  // Hot path: a bearer call hashes the token and reads one cached row; revocation evicts at once (in a cluster,
  // on every instance: `changes`). Made by the first call that needs it: lru-cache allocates all its slots at
  // once (~4 ms of start-up for this one).
  private tokens: LRUCache<string, { row: TokenRow; principal: Principal }> | undefined;
  private readonly touched = new Map<string, number>();

  /** `changes`: where a revocation is announced to the other instances of a cluster, and heard from them. */
  constructor(
    readonly db: Db,
    private readonly changes?: ClusterChanges,
  ) {
    this.store = new IdentityStore(db);
    changes?.follow(
      "tokens",
      () => this.forgetTokens(),
      () => this.forgetTokens(),
    );
  }

  private tokenCache() {
    if (!this.tokens) this.tokens = new LRUCache({ max: 10_000, ttl: 30_000 });
    return this.tokens;
  }

  /** Tokens are read from the database again (one was revoked, maybe on another instance). */
  forgetTokens(): void {
    this.tokens?.clear();
  }

  /**
   * Creates org + workspace + all-scopes token with exactly `raw` when the database has no tokens. Instances
   * of a cluster starting together all call it: the check and the inserts are one unit, so one of them
   * creates and the others find its token.
   */
  bootstrap(raw: string): boolean {
    return atomically(this.db, () => {
      if (this.store.countTokens() > 0) return false;
      const { orgId, workspaceId } = this.ensureOrg();
      this.insertToken(orgId, workspaceId, "bootstrap", [...SCOPES], null, raw);
      return true;
    });
  }

  /** The first org and its first workspace, created when missing (one unit: never two "Default org"s). */
  ensureOrg(orgName = "Default org"): { orgId: string; workspaceId: string } {
    return atomically(this.db, () => {
      const org = this.store.firstOrg();
      if (org) return { orgId: org.id, workspaceId: this.store.firstWorkspace(org.id)!.id };
      const orgId = newId();
      const workspaceId = newId();
      const at = nowIso();
      this.store.insertOrg({ id: orgId, name: orgName, created_at: at });
      this.store.insertWorkspace({ id: workspaceId, org_id: orgId, name: "Default workspace", created_at: at });
      return { orgId, workspaceId };
    });
  }

  createWorkspace(orgId: string, name: string) {
    const row: WorkspaceRow = { id: newId(), org_id: orgId, name, created_at: nowIso() };
    this.store.insertWorkspace(row);
    return workspaceView(row);
  }

  listWorkspaces(orgId: string) {
    return this.store.workspacesOfOrg(orgId).map(workspaceView);
  }

  workspaceOf(orgId: string, workspaceId: string) {
    const row = this.store.workspace(workspaceId, orgId);
    if (!row) throw new AppError("NOT_FOUND", `workspace ${workspaceId} not found in this org`);
    return row;
  }

  // ---- API tokens ----

  private insertToken(orgId: string, workspaceId: string, name: string, scopes: Scope[], createdBy: string | null, raw = newSecret("weft_")) {
    const row = {
      id: newId(),
      org_id: orgId,
      workspace_id: workspaceId,
      name,
      prefix: raw.slice(0, 12),
      token_hash: sha256(raw),
      scopes: scopes.join(" "),
      created_by: createdBy,
      created_at: nowIso(),
    };
    this.store.insertToken(row);
    return { raw, view: tokenView({ ...row, last_used_at: null, revoked_at: null }) };
  }

  /** Mints a token; the raw value is returned here once and never again. */
  createToken(input: {
    orgId: string;
    workspaceId: string;
    name: string;
    scopes: string[] | string;
    createdBy: string | null;
    grantable?: ReadonlySet<Scope>;
  }) {
    let scopes: Scope[];
    try {
      scopes = parseScopes(input.scopes);
    } catch (error) {
      throw new AppError("VALIDATION_FAILED", (error as Error).message);
    }
    if (input.grantable) {
      const beyond = scopes.filter((s) => !input.grantable!.has(s));
      if (beyond.length > 0)
        throw new AppError("FORBIDDEN", `a token cannot grant scopes its creator lacks: ${beyond.join(", ")}; grantable: ${[...input.grantable].join(", ")}`);
    }
    const workspace = this.workspaceOf(input.orgId, input.workspaceId);
    const { raw, view } = this.insertToken(input.orgId, workspace.id, input.name, scopes, input.createdBy);
    return { ...view, token: raw };
  }

  listTokens(workspaceId: string): TokenView[] {
    return this.store.tokensOfWorkspace(workspaceId).map(tokenView);
  }

  revokeToken(workspaceId: string, id: string) {
    const row = this.store.token(id, workspaceId);
    if (!row || row.revoked_at) throw new AppError("NOT_FOUND", `token ${id} not found`);
    this.store.revokeToken(id, nowIso());
    this.tokenCache().delete(row.token_hash);
    this.changes?.announce({ what: "tokens" });
    return tokenView(row);
  }

  /** Resolves a raw bearer token, or null when it is unknown or revoked. */
  authenticateToken(raw: string): Principal | null {
    const hash = sha256(raw);
    let hit = this.tokenCache().get(hash);
    if (!hit) {
      const row = this.store.tokenByHash(hash);
      if (!row || row.revoked_at) return null;
      hit = {
        row,
        principal: {
          kind: "token",
          credentialId: row.id,
          orgId: row.org_id,
          workspaceId: row.workspace_id,
          userId: row.created_by,
          scopes: new Set(row.scopes.split(" ") as Scope[]),
        },
      };
      this.tokenCache().set(hash, hit);
    }
    const now = Date.now();
    if ((this.touched.get(hit.row.id) ?? 0) + TOUCH_INTERVAL_MS < now) {
      this.touched.set(hit.row.id, now);
      this.store.touchToken(hit.row.id, new Date(now).toISOString());
    }
    return hit.principal;
  }

  // ---- users and sessions ----

  needsSetup(): boolean {
    return this.store.countUsers() === 0;
  }

  /**
   * Creates the first owner; refused once any user exists. Returns a new session. The check that decides is
   * the one inside the unit: two setups sent to two instances at once both pass the first while they hash.
   */
  async setupOwner(input: { email: string; password: string; name?: string }) {
    if (!this.needsSetup()) throw new AppError("CONFLICT", SETUP_DONE);
    const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
    const user = atomically(this.db, () => {
      if (!this.needsSetup()) throw new AppError("CONFLICT", SETUP_DONE);
      const { orgId, workspaceId } = this.ensureOrg();
      const row: UserRow = {
        id: newId(),
        org_id: orgId,
        email: input.email,
        name: input.name ?? input.email.split("@")[0],
        password_hash: passwordHash,
        role: "owner",
        default_workspace_id: workspaceId,
        created_at: nowIso(),
      };
      this.store.insertUser(row);
      return row;
    });
    return this.openSession(user);
  }

  async login(email: string, password: string) {
    const user = this.store.userByEmail(email);
    // Verify against a dummy hash when the user is unknown so timing does not reveal which emails exist.
    const ok = await Bun.password.verify(password, user?.password_hash ?? (await dummyHash()));
    if (!user || !ok) throw new AppError("UNAUTHORIZED", "email or password is wrong");
    return this.openSession(user);
  }

  private openSession(user: UserRow) {
    const raw = newSecret("", 32);
    const csrfToken = newSecret("", 24);
    const expires = new Date(Date.now() + SESSION_DAYS * 86_400_000).toISOString();
    this.store.insertSession({
      id_hash: sha256(raw),
      user_id: user.id,
      workspace_id: user.default_workspace_id,
      csrf_token: csrfToken,
      expires_at: expires,
      created_at: nowIso(),
    });
    return { sessionId: raw, csrfToken, expiresAt: expires, user: userView(user), workspaceId: user.default_workspace_id };
  }

  authenticateSession(raw: string): Principal | null {
    const idHash = sha256(raw);
    const session = this.store.session(idHash);
    if (!session || session.expires_at < nowIso()) return null;
    const user = this.store.user(session.user_id);
    if (!user) return null;
    return {
      kind: "session",
      credentialId: idHash,
      orgId: user.org_id,
      workspaceId: session.workspace_id,
      userId: user.id,
      scopes: new Set(SCOPES),
      csrfToken: session.csrf_token,
    };
  }

  logout(raw: string) {
    this.store.deleteSession(sha256(raw));
  }

  switchWorkspace(principal: Principal, workspaceId: string) {
    if (principal.kind !== "session") throw new AppError("FORBIDDEN", "only a browser session can switch workspace; an API token is bound to its workspace");
    const workspace = this.workspaceOf(principal.orgId, workspaceId);
    this.store.setSessionWorkspace(principal.credentialId, workspace.id);
    return workspaceView(workspace);
  }

  me(principal: Principal) {
    const user = principal.userId ? this.store.user(principal.userId) : null;
    const workspace = this.store.workspace(principal.workspaceId, principal.orgId)!;
    return {
      kind: principal.kind,
      user: user ? userView(user) : null,
      workspace: workspaceView(workspace),
      scopes: [...principal.scopes],
      ...(principal.csrfToken ? { csrfToken: principal.csrfToken } : {}),
    };
  }
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= Bun.password.hash("weft-dummy-password", { algorithm: "argon2id" }));
