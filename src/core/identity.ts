/**
 * Who is calling: API tokens (bearer) and UI sessions (cookie), the org → workspace → user model,
 * first-owner setup and the bootstrap token. No HTTP here; the auth layer calls these.
 * A user acts in a workspace through their membership (docs/teams.md): a session has its role's scopes, a token
 * a member minted the scopes it was given that the role still has, computed at each call; a deactivated or
 * removed member's sessions and tokens stop working at once.
 */
import type { Static } from "@sinclair/typebox";
import { LRUCache } from "lru-cache";
import { AppError } from "../http/errors";
import { nowIso } from "../store/db";
import type { MemberRow, SessionRow, TokenRow, UserRow, WorkspaceRow } from "../store/identity";
import type { Storage } from "../store/port";
import { newId, newSecret, safeEqual, sha256 } from "../lib/ids";
import { type Clock, systemClock } from "../lib/clock";
import type { Session } from "../schema/identity";
import { SCOPES, parseScopes, type Scope } from "../schema/scopes";
import { isRole, roleScopes, rolesWith, type RoleName } from "../schema/roles";
import type { ClusterChanges } from "./cluster-changes";

export interface Principal {
  kind: "token" | "session";
  /** Token id or session hash: the rate-limit and idempotency bucket. */
  credentialId: string;
  orgId: string;
  workspaceId: string;
  userId: string | null;
  scopes: ReadonlySet<Scope>;
  /**
   * The caller's role in `workspaceId`: for a session, and for a token a user minted. Absent for tokens no user
   * minted (the bootstrap token and those it minted), which keep the scopes they were given.
   */
  role?: RoleName;
  /** Present for sessions: cookie-authenticated writes must echo it in X-CSRF-Token. */
  csrfToken?: string;
  /**
   * A session in a workspace that requires a second factor, of a user who has none, not from single sign-on: it may
   * only enrol (docs/teams.md, "Second factor"; src/api/middleware/security.ts lets it reach those routes only).
   */
  secondFactorMissing?: true;
}

/**
 * The refusal for a call whose scope the principal lacks (403 FORBIDDEN, same for the HTTP API and MCP): names the
 * scope, and when the caller's role is what stops it, the role, the workspace and the roles that would allow it.
 */
export function scopeRefusal(principal: Principal, scope: Scope): AppError {
  const allowing = rolesWith(scope);
  const details = { scope, role: principal.role ?? null, workspaceId: principal.workspaceId, rolesAllowing: allowing };
  const head = `this operation requires the scope "${scope}"`;
  if (principal.role && !roleScopes(principal.role).has(scope)) {
    return new AppError(
      "FORBIDDEN",
      `${head}; your role ${principal.role} in workspace ${principal.workspaceId} does not have it; roles that do: ${allowing.join(", ")}`,
      details,
    );
  }
  const held = [...principal.scopes].join(", ") || "none";
  const hint = principal.role ? `; your role ${principal.role} has it: mint a token that holds it` : "";
  return new AppError("FORBIDDEN", `${head}; the credential has: ${held}${hint}`, details);
}

/** Whether `given` is the session's CSRF token, compared in constant time (docs/teams.md, "Sessions"). */
export function csrfMatches(principal: Principal, given: string | null): boolean {
  return given !== null && principal.csrfToken !== undefined && safeEqual(given, principal.csrfToken);
}

/** The member's effective scopes: what the credential holds that the role has; none while deactivated. */
function clamp(scopes: Iterable<Scope>, member: MemberRow | null): { scopes: Set<Scope>; role: RoleName } | null {
  if (!member || member.deactivated_at !== null || !isRole(member.role)) return null;
  const allowed = roleScopes(member.role);
  return { scopes: new Set([...scopes].filter((scope) => allowed.has(scope))), role: member.role };
}

/** Where a session is used from: the client's address (as src/net/client-address.ts resolves it) and browser. */
export interface SessionClient {
  address: string | null;
  userAgent: string | null;
}

/** A session as its user sees it in the list of their sessions (docs/teams.md, "Sessions"): the route's schema. */
export type SessionView = Static<typeof Session>;

const sessionView = (row: SessionRow, currentHash: string): SessionView => ({
  id: row.id,
  current: row.id_hash === currentHash,
  workspaceId: row.workspace_id,
  createdAt: row.created_at,
  lastSeenAt: row.last_seen_at ?? row.created_at,
  expiresAt: row.expires_at,
  address: row.address,
  userAgent: row.user_agent,
});

/** What the session routes refuse to API tokens: a token must not change the password or the sessions of its user. */
const ONLY_SESSIONS = 'only a browser session can see and revoke sessions or change the password; an API token cannot (docs/teams.md, "Sessions")';

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
/** Expired sessions deleted per sweep at most, so one sweep stays short however many piled up (docs/teams.md, "Sessions"). */
const SWEEP_BATCH = 1_000;

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

/** The org-wide role of the user who set the installation up; invited users are `member`s of the org. */
export const ORG_OWNER = "owner";

export class Identity {
  // Hot path: a bearer call hashes the token and reads one cached row; revocation evicts at once (in a cluster,
  // on every instance: `changes`). Made by the first call that needs it: lru-cache allocates all its slots at
  // once (~4 ms of start-up for this one).
  private tokens: LRUCache<string, { row: TokenRow; principal: Principal }> | undefined;
  private readonly touched = new Map<string, number>();

  /**
   * `changes`: where a revocation is announced to the other instances of a cluster, and heard from them.
   * Tokens minted and revoked and logins are told to the audit log by their routes (./audit.ts).
   */
  constructor(
    private readonly storage: Storage,
    private readonly changes?: ClusterChanges,
    /** Sessions' expiry and token touches are read from it (docs/architecture.md, "Time"). */
    private readonly clock: Clock = systemClock,
  ) {
    changes?.follow(
      "tokens",
      () => this.forgetTokens(),
      () => this.forgetTokens(),
    );
  }

  private sweepTimer: ReturnType<typeof setInterval> | undefined;

  /**
   * Deletes expired sessions, at most `limit` of them, with the single sign-on links of sessions gone and the
   * pending sign-ins expired (docs/teams.md, "Sessions"); answers how many sessions went.
   */
  sweepExpired(now = new Date(this.clock.now()).toISOString(), limit = SWEEP_BATCH): Promise<number> {
    return this.storage.identity.deleteExpiredSessions(now, limit);
  }

  /** Sweeps every `intervalMs` (the run retention's interval) until stopSweep. */
  startSweep(intervalMs: number, onError: (error: Error) => void): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => void this.sweepExpired().catch(onError), intervalMs);
    this.sweepTimer.unref?.();
  }

  stopSweep(): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
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
   * A token was revoked or a membership changed (role, deactivated, removed): every cached bearer principal is
   * dropped here and, in a cluster, on every instance (the same announcement a revocation makes; an instance
   * that missed it re-reads within ClusterChanges' recheck). Sessions read their membership at every call.
   */
  credentialsChanged(): void {
    this.forgetTokens();
    this.changes?.announce({ what: "tokens" });
  }

  /**
   * Creates org + workspace + all-scopes token with exactly `raw` when the database has no tokens. Instances
   * of a cluster starting together all call it: the check and the inserts are one unit, so one of them
   * creates and the others find its token.
   */
  bootstrap(raw: string): Promise<boolean> {
    return this.storage.atomically(async (unit) => {
      if ((await unit.identity.countTokens()) > 0) return false;
      const { orgId, workspaceId } = await this.ensureOrg(undefined, unit);
      await this.insertToken(unit, orgId, workspaceId, "bootstrap", [...SCOPES], null, raw);
      return true;
    });
  }

  /** The first org and its first workspace, created when missing (one unit: never two "Default org"s). */
  ensureOrg(orgName = "Default org", storage: Storage = this.storage): Promise<{ orgId: string; workspaceId: string }> {
    return storage.atomically(async (unit) => {
      const org = await unit.identity.firstOrg();
      if (org) return { orgId: org.id, workspaceId: (await unit.identity.firstWorkspace(org.id))!.id };
      const orgId = newId();
      const workspaceId = newId();
      const at = nowIso();
      await unit.identity.insertOrg({ id: orgId, name: orgName, created_at: at });
      await unit.identity.insertWorkspace({ id: workspaceId, org_id: orgId, name: "Default workspace", created_at: at });
      return { orgId, workspaceId };
    });
  }

  /** Its creator becomes its owner; made by a token no user minted, the org's owner does. */
  async createWorkspace(orgId: string, name: string, createdBy: string | null = null) {
    const row: WorkspaceRow = { id: newId(), org_id: orgId, name, created_at: nowIso() };
    await this.storage.atomically(async (unit) => {
      await unit.identity.insertWorkspace(row);
      const owners = createdBy ? [createdBy] : (await unit.identity.usersOfOrgWithRole(orgId, ORG_OWNER)).map((user) => user.id);
      for (const userId of owners) {
        await unit.identity.insertMember({ workspace_id: row.id, user_id: userId, role: "owner", deactivated_at: null, created_at: row.created_at });
      }
    });
    return workspaceView(row);
  }

  /** The org's workspaces; for a user, those they are an active member of. */
  async listWorkspaces(orgId: string, userId: string | null = null) {
    const all = await this.storage.identity.workspacesOfOrg(orgId);
    if (!userId) return all.map(workspaceView);
    const active = new Set((await this.storage.identity.membershipsOfUser(userId)).filter((m) => m.deactivated_at === null).map((m) => m.workspace_id));
    return all.filter((workspace) => active.has(workspace.id)).map(workspaceView);
  }

  /** The user's membership of a workspace, or null. */
  member(workspaceId: string, userId: string): Promise<MemberRow | null> {
    return this.storage.identity.member(workspaceId, userId);
  }

  async workspaceOf(orgId: string, workspaceId: string) {
    const row = await this.storage.identity.workspace(workspaceId, orgId);
    if (!row) throw new AppError("NOT_FOUND", `workspace ${workspaceId} not found in this org`);
    return row;
  }

  // ---- API tokens ----

  private async insertToken(
    storage: Storage,
    orgId: string,
    workspaceId: string,
    name: string,
    scopes: Scope[],
    createdBy: string | null,
    raw = newSecret("weft_"),
  ) {
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
    await storage.identity.insertToken(row);
    return { raw, view: tokenView({ ...row, last_used_at: null, revoked_at: null }) };
  }

  /** Mints a token; the raw value is returned here once and never again. */
  async createToken(input: {
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
    const workspace = await this.workspaceOf(input.orgId, input.workspaceId);
    if (input.createdBy) {
      // A member's token may hold only what their role has in the token's workspace (and is clamped to it at each call).
      const member = await this.storage.identity.member(workspace.id, input.createdBy);
      const role = clamp(scopes, member);
      if (!role)
        throw new AppError("FORBIDDEN", `you are not an active member of workspace ${workspace.id}; a token can only act where its creator is a member`);
      const beyond = scopes.filter((s) => !role.scopes.has(s));
      if (beyond.length > 0) {
        const allowed = [...roleScopes(role.role)];
        throw new AppError(
          "FORBIDDEN",
          `a token cannot hold scopes your role ${role.role} in workspace ${workspace.id} lacks: ${beyond.join(", ")}; your role has: ${allowed.join(", ")}`,
          { role: role.role, workspaceId: workspace.id, lacking: beyond, roleScopes: allowed },
        );
      }
    }
    const { raw, view } = await this.insertToken(this.storage, input.orgId, workspace.id, input.name, scopes, input.createdBy);
    return { ...view, token: raw };
  }

  async listTokens(workspaceId: string): Promise<TokenView[]> {
    return (await this.storage.identity.tokensOfWorkspace(workspaceId)).map(tokenView);
  }

  async revokeToken(workspaceId: string, id: string) {
    const row = await this.storage.identity.token(id, workspaceId);
    if (!row || row.revoked_at) throw new AppError("NOT_FOUND", `token ${id} not found`);
    await this.storage.identity.revokeToken(id, nowIso());
    this.tokenCache().delete(row.token_hash);
    this.changes?.announce({ what: "tokens" });
    return tokenView(row);
  }

  /** Resolves a raw bearer token, or null when it is unknown or revoked. */
  async authenticateToken(raw: string): Promise<Principal | null> {
    const hash = sha256(raw);
    let hit = this.tokenCache().get(hash);
    if (!hit) {
      const row = await this.storage.identity.tokenByHash(hash);
      if (!row || row.revoked_at) return null;
      let scopes = new Set(row.scopes.split(" ") as Scope[]);
      let role: RoleName | undefined;
      if (row.created_by) {
        // One primary-key read per cache miss; a membership change empties the cache (credentialsChanged).
        const effective = clamp(scopes, await this.storage.identity.member(row.workspace_id, row.created_by));
        if (!effective) return null;
        scopes = effective.scopes;
        role = effective.role;
      }
      hit = {
        row,
        principal: {
          kind: "token",
          credentialId: row.id,
          orgId: row.org_id,
          workspaceId: row.workspace_id,
          userId: row.created_by,
          scopes,
          ...(role ? { role } : {}),
        },
      };
      this.tokenCache().set(hash, hit);
    }
    const now = this.clock.now();
    if ((this.touched.get(hit.row.id) ?? 0) + TOUCH_INTERVAL_MS < now) {
      this.touched.set(hit.row.id, now);
      // Not waited for: the call goes on; a failure only leaves "last used" a minute older.
      this.storage.identity.touchToken(hit.row.id, new Date(now).toISOString()).catch(() => {});
    }
    return hit.principal;
  }

  // ---- users and sessions ----

  async needsSetup(storage: Storage = this.storage): Promise<boolean> {
    return (await storage.identity.countUsers()) === 0;
  }

  /**
   * Creates the first owner; refused once any user exists. Returns a new session. The check that decides is
   * the one inside the unit: two setups sent to two instances at once both pass the first while they hash.
   */
  async setupOwner(input: { email: string; password: string; name?: string }) {
    if (!(await this.needsSetup())) throw new AppError("CONFLICT", SETUP_DONE);
    const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
    const user = await this.storage.atomically(async (unit) => {
      if (!(await this.needsSetup(unit))) throw new AppError("CONFLICT", SETUP_DONE);
      const { orgId, workspaceId } = await this.ensureOrg(undefined, unit);
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
      await unit.identity.insertUser(row);
      // Owner of every workspace: the bootstrap token may have made more than the first before setup.
      for (const workspace of await unit.identity.workspacesOfOrg(orgId)) {
        await unit.identity.insertMember({ workspace_id: workspace.id, user_id: row.id, role: "owner", deactivated_at: null, created_at: row.created_at });
      }
      return row;
    });
    return this.openSession(user);
  }

  async login(email: string, password: string, client?: SessionClient) {
    return this.openSession(await this.checkPassword(email, password), undefined, client);
  }

  /** The user of a right e-mail and password; refused alike for an unknown e-mail and a wrong password. */
  async checkPassword(email: string, password: string): Promise<UserRow> {
    const user = await this.storage.identity.userByEmail(email);
    // Verify against a dummy hash when the user is unknown so timing does not reveal which emails exist.
    const ok = await Bun.password.verify(password, user?.password_hash ?? (await dummyHash()));
    if (!user || !ok) {
      throw new AppError("UNAUTHORIZED", "email or password is wrong");
    }
    return user;
  }

  /** Verifies a known user's password (accepting an invitation as an existing user). */
  async verifyPassword(user: UserRow, password: string): Promise<boolean> {
    return Bun.password.verify(password, user.password_hash);
  }

  /** A session in the user's default workspace, or the first one they are an active member of. */
  async openSession(user: UserRow, workspaceId?: string, client?: SessionClient) {
    const memberships = (await this.storage.identity.membershipsOfUser(user.id)).filter((m) => m.deactivated_at === null);
    const chosen =
      memberships.find((m) => m.workspace_id === workspaceId) ?? memberships.find((m) => m.workspace_id === user.default_workspace_id) ?? memberships[0];
    if (!chosen)
      throw new AppError("UNAUTHORIZED", "this account is not an active member of any workspace; ask a workspace admin to re-activate or invite you");
    return this.sessionIn(user, chosen.workspace_id, client);
  }

  private async sessionIn(user: UserRow, workspaceId: string, client?: SessionClient) {
    const raw = newSecret("", 32);
    const csrfToken = newSecret("", 24);
    const expires = new Date(this.clock.now() + SESSION_DAYS * 86_400_000).toISOString();
    const at = nowIso();
    await this.storage.identity.insertSession({
      id_hash: sha256(raw),
      id: newId(),
      user_id: user.id,
      workspace_id: workspaceId,
      csrf_token: csrfToken,
      expires_at: expires,
      created_at: at,
      last_seen_at: at,
      user_agent: client?.userAgent ?? null,
      address: client?.address ?? null,
    });
    return { sessionId: raw, csrfToken, expiresAt: expires, user: userView(user), workspaceId };
  }

  /**
   * The session's principal, or null. Read from the database at every call (no cache), so a session revoked or
   * logged out on any instance of a cluster is refused from the next call on. `client` updates when and where
   * it was last used, at most once a minute.
   */
  async authenticateSession(raw: string, client?: SessionClient): Promise<Principal | null> {
    const idHash = sha256(raw);
    const session = await this.storage.identity.session(idHash);
    const now = this.clock.now();
    if (!session || Date.parse(session.expires_at) < now) return null;
    const user = await this.storage.identity.user(session.user_id);
    if (!user) return null;
    // Read at every call, so a deactivation or a role change holds from the next request on.
    const effective = clamp(SCOPES, await this.storage.identity.member(session.workspace_id, user.id));
    if (!effective) return null;
    const stale = Date.parse(session.last_seen_at ?? session.created_at) + TOUCH_INTERVAL_MS <= now;
    // A session opened without knowing its client (single sign-on, an invitation) learns it on its first call.
    if (client && (stale || (session.address === null && client.address !== null))) {
      // Not waited for, as for tokens: a failure only leaves "last seen" a minute older.
      this.storage.identity.touchSession(idHash, new Date(now).toISOString(), client.address, client.userAgent).catch(() => {});
    }
    // Also read at every call: enrolling (or the owner lifting the requirement) frees the session at its next call.
    const missing = await this.storage.secondFactor.mustEnrol(session.workspace_id, user.id, idHash);
    return {
      kind: "session",
      credentialId: idHash,
      orgId: user.org_id,
      workspaceId: session.workspace_id,
      userId: user.id,
      scopes: effective.scopes,
      role: effective.role,
      csrfToken: session.csrf_token,
      ...(missing ? { secondFactorMissing: true as const } : {}),
    };
  }

  async logout(raw: string) {
    await this.storage.identity.deleteSession(sha256(raw));
  }

  private sessionUser(principal: Principal): string {
    if (principal.kind !== "session" || !principal.userId) throw new AppError("FORBIDDEN", ONLY_SESSIONS);
    return principal.userId;
  }

  /** The caller's sessions not expired, most recently used first; the one this call came with is `current`. */
  async listSessions(principal: Principal): Promise<SessionView[]> {
    const rows = await this.storage.identity.sessionsOfUser(this.sessionUser(principal), nowIso());
    return rows.map((row) => sessionView(row, principal.credentialId));
  }

  /**
   * Ends one of the caller's sessions at once (the next call made with it is refused, on every instance: sessions
   * are not cached). The current one may be revoked too (as logging out does).
   */
  async revokeSession(principal: Principal, id: string): Promise<SessionView> {
    const userId = this.sessionUser(principal);
    const row = (await this.storage.identity.sessionsOfUser(userId, nowIso())).find((session) => session.id === id);
    if (!row || !(await this.storage.identity.deleteSessionOfUser(userId, id)))
      throw new AppError("NOT_FOUND", `session ${id} not found among your sessions; GET /api/auth/sessions lists them`);
    return sessionView(row, principal.credentialId);
  }

  /** Ends every session of the caller but the current one; answers how many ended. */
  async revokeOtherSessions(principal: Principal): Promise<number> {
    return this.storage.identity.deleteSessionsOfUser(this.sessionUser(principal), principal.credentialId);
  }

  /**
   * Changes the caller's password after checking the current one; every other session of theirs ends (someone
   * who knew the old password may hold one). Answers how many ended.
   */
  async changePassword(principal: Principal, currentPassword: string, newPassword: string): Promise<{ user: UserRow; sessionsRevoked: number }> {
    const user = await this.storage.identity.user(this.sessionUser(principal));
    if (!user) throw new AppError("UNAUTHORIZED", "your account no longer exists");
    if (!(await Bun.password.verify(currentPassword, user.password_hash)))
      throw new AppError("FORBIDDEN", "the current password is wrong; the password is unchanged", { field: "currentPassword" });
    const hash = await Bun.password.hash(newPassword, { algorithm: "argon2id" });
    const sessionsRevoked = await this.storage.atomically(async (unit) => {
      await unit.identity.setPasswordHash(user.id, hash);
      return unit.identity.deleteSessionsOfUser(user.id, principal.credentialId);
    });
    return { user, sessionsRevoked };
  }

  async switchWorkspace(principal: Principal, workspaceId: string) {
    if (principal.kind !== "session") throw new AppError("FORBIDDEN", "only a browser session can switch workspace; an API token is bound to its workspace");
    const workspace = await this.workspaceOf(principal.orgId, workspaceId);
    const member = principal.userId ? await this.storage.identity.member(workspace.id, principal.userId) : null;
    if (!member || member.deactivated_at !== null) {
      throw new AppError("FORBIDDEN", `you are not an active member of workspace ${workspace.id}; GET /api/workspaces lists yours`);
    }
    await this.storage.identity.setSessionWorkspace(principal.credentialId, workspace.id);
    return workspaceView(workspace);
  }

  /** A user of this installation. */
  user(id: string): Promise<UserRow | null> {
    return this.storage.identity.user(id);
  }

  /** A token of a workspace, revoked ones included. */
  token(id: string, workspaceId: string): Promise<TokenRow | null> {
    return this.storage.identity.token(id, workspaceId);
  }

  private async membershipsOf(user: UserRow) {
    const workspaces = new Map((await this.storage.identity.workspacesOfOrg(user.org_id)).map((w) => [w.id, w]));
    return (await this.storage.identity.membershipsOfUser(user.id))
      .filter((m) => m.deactivated_at === null && workspaces.has(m.workspace_id))
      .map((m) => ({ workspaceId: m.workspace_id, workspaceName: workspaces.get(m.workspace_id)!.name, role: m.role }));
  }

  async me(principal: Principal) {
    const user = principal.userId ? await this.storage.identity.user(principal.userId) : null;
    const workspace = (await this.storage.identity.workspace(principal.workspaceId, principal.orgId))!;
    return {
      kind: principal.kind,
      user: user ? userView(user) : null,
      workspace: workspaceView(workspace),
      scopes: [...principal.scopes],
      role: principal.role ?? null,
      // Where the user may switch to (POST /api/auth/workspace), with their role in each.
      memberships: user ? await this.membershipsOf(user) : [],
      // The session may only enrol a second factor until it has one (docs/teams.md, "Second factor").
      secondFactorMissing: principal.secondFactorMissing === true,
      ...(principal.csrfToken ? { csrfToken: principal.csrfToken } : {}),
    };
  }
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= Bun.password.hash("weft-dummy-password", { algorithm: "argon2id" }));
