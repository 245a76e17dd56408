/**
 * Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on"), all of the protocol done by openid-client:
 * discovery of the issuer, the authorization code flow with PKCE, state and nonce, ID token validation, userinfo,
 * RP-initiated logout. Here: which providers exist (Settings → Single sign-on, or WEFT_OIDC_PROVIDERS), the pending
 * sign-ins (server-side, single use, short-lived), just-in-time accounts, roles from a claim, and "SSO only".
 */
import * as oidc from "openid-client";
import { AppError } from "../http/errors";
import { newId, newSecret, sha256 } from "../lib/ids";
import { isStorageError } from "../lib/storage-error";
import { type Clock, systemClock } from "../lib/clock";
import { ASSIGNABLE_ROLES, ROLE_NAMES, type RoleName } from "../schema/roles";
import { nowIso } from "../store/db";
import type { SsoProviderRow, UserRow } from "../store/identity";
import type { Storage } from "../store/port";
import type { SecretBox } from "./crypto";
import { type Identity, ORG_OWNER, type Principal } from "./identity";
import type { EventSink } from "./log-stream/events";

/** A pending sign-in lives this long between the redirect to the provider and its callback. */
const PENDING_MS = 10 * 60_000;
const DEFAULT_SCOPES = "openid email profile";

export interface RoleMapping {
  /** A value of the provider's role claim (e.g. a group name). */
  value: string;
  role: RoleName;
  /** The workspace it gives the role in; the provider's own workspace when absent. */
  workspaceId?: string;
}

/** A provider as the API writes it (POST/PUT /api/sso/providers) and as WEFT_OIDC_PROVIDERS lists them. */
export interface SsoProviderInput {
  name: string;
  issuer: string;
  clientId: string;
  /** Omitted on update: the stored one is kept. Absent for public clients (PKCE only). */
  clientSecret?: string | null;
  scopes?: string;
  roleClaim?: string | null;
  roleMapping?: RoleMapping[];
  defaultRole?: string;
  ssoOnly?: boolean;
  workspaceId?: string;
}

export const providerView = (row: SsoProviderRow) => ({
  id: row.id,
  name: row.name,
  issuer: row.issuer,
  clientId: row.client_id,
  hasClientSecret: row.client_secret !== null,
  scopes: row.scopes,
  roleClaim: row.role_claim,
  roleMapping: JSON.parse(row.role_mapping) as RoleMapping[],
  defaultRole: row.default_role,
  ssoOnly: row.sso_only,
  workspaceId: row.workspace_id,
  redirectPath: `/api/auth/sso/${row.id}/callback`,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface SingleSignOnOptions {
  storage: Storage;
  identity: Identity;
  secrets: SecretBox;
  /** WEFT_PUBLIC_URL: the redirect URI registered at the provider is `<publicUrl>/api/auth/sso/<id>/callback`. */
  publicUrl: string;
  /** Parsed WEFT_OIDC_PROVIDERS: written into the first org's providers (by name) before the first use. */
  fromEnvironment?: SsoProviderInput[];
  events?: EventSink;
  /** When a pending sign-in expires (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

export class SingleSignOn {
  private readonly configurations = new Map<string, { updatedAt: string; config: Promise<oidc.Configuration> }>();
  private synced: Promise<void> | undefined;

  constructor(private readonly options: SingleSignOnOptions) {}

  private get storage() {
    return this.options.storage;
  }

  /** Writes WEFT_OIDC_PROVIDERS into the first org once per process (headless installs, docs/teams.md). */
  private ready(): Promise<void> {
    this.synced ??= (async () => {
      const wanted = this.options.fromEnvironment ?? [];
      if (wanted.length === 0) return;
      const { orgId, workspaceId } = await this.options.identity.ensureOrg();
      const existing = await this.storage.identity.ssoProviders(orgId);
      for (const input of wanted) {
        const found = existing.find((row) => row.name === input.name);
        try {
          if (found) await this.write(found, input);
          else await this.createOrTakeOver(orgId, { workspaceId, ...input });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          throw new AppError(error.code, `WEFT_OIDC_PROVIDERS, provider "${input.name}": ${error.message}`, error.details);
        }
      }
    })().catch((error) => {
      // Tried again at the next call (a database hiccup at start must not leave SSO off until a restart).
      this.synced = undefined;
      throw error;
    });
    return this.synced;
  }

  /** For the login page: only ids and names. */
  async listPublic() {
    await this.ready();
    return (await this.storage.identity.ssoProviders(null)).map((row) => ({ id: row.id, name: row.name, startPath: `/api/auth/sso/${row.id}/start` }));
  }

  async list(orgId: string) {
    await this.ready();
    return (await this.storage.identity.ssoProviders(orgId)).map(providerView);
  }

  private async providerOf(id: string, orgId?: string) {
    await this.ready();
    const row = await this.storage.identity.ssoProvider(id);
    if (!row || (orgId && row.org_id !== orgId)) throw new AppError("NOT_FOUND", `single sign-on provider ${id} not found; GET /api/sso/providers lists them`);
    return row;
  }

  async get(orgId: string, id: string) {
    return providerView(await this.providerOf(id, orgId));
  }

  /** Adds a provider for the caller's org (the owner only), signing people into `input.workspaceId` or the caller's workspace. */
  async create(caller: Principal, input: SsoProviderInput & { workspaceId?: string }) {
    this.assertOwner(caller);
    return this.insert(caller.orgId, { ...input, workspaceId: input.workspaceId ?? caller.workspaceId });
  }

  private async insert(orgId: string, input: SsoProviderInput & { workspaceId: string }) {
    const at = nowIso();
    const row = this.validated(
      {
        id: newId(),
        org_id: orgId,
        workspace_id: input.workspaceId,
        name: "",
        issuer: "",
        client_id: "",
        client_secret: null,
        scopes: DEFAULT_SCOPES,
        role_claim: null,
        role_mapping: "[]",
        default_role: "viewer",
        sso_only: false,
        created_at: at,
        updated_at: at,
      },
      input,
    );
    try {
      await this.storage.identity.insertSsoProvider(row);
    } catch (error) {
      if (isStorageError(error, "unique")) await this.assertNameFree(orgId, row.name);
      throw error;
    }
    return providerView(row);
  }

  /**
   * WEFT_OIDC_PROVIDERS' provider `input.name`, created; or, when another instance started with the same environment
   * created it first (names are unique in an org), that one written with these settings.
   */
  private async createOrTakeOver(orgId: string, input: SsoProviderInput & { workspaceId: string }) {
    try {
      return await this.insert(orgId, input);
    } catch (error) {
      const taken = error instanceof AppError && error.code === "CONFLICT" ? await this.byName(orgId, input.name) : undefined;
      if (!taken) throw error;
      return this.write(taken, input);
    }
  }

  private async byName(orgId: string, name: string) {
    return (await this.storage.identity.ssoProviders(orgId)).find((row) => row.name === name);
  }

  /** A provider's name is unique in its org: the login page lists providers by name. */
  private async assertNameFree(orgId: string, name: string, except?: string) {
    const clash = await this.byName(orgId, name);
    if (clash && clash.id !== except)
      throw new AppError(
        "CONFLICT",
        `a single sign-on provider named "${name}" already exists (${clash.id}); choose another name, or change that one with PUT`,
      );
  }

  /** Changes a provider of the caller's org (the owner only); an omitted client secret keeps the stored one. */
  async update(caller: Principal, id: string, input: SsoProviderInput) {
    this.assertOwner(caller);
    return this.write(await this.providerOf(id, caller.orgId), input);
  }

  private async write(current: SsoProviderRow, input: SsoProviderInput) {
    const row = this.validated({ ...current, updated_at: nowIso() }, input);
    try {
      await this.storage.identity.updateSsoProvider(row);
    } catch (error) {
      if (isStorageError(error, "unique")) await this.assertNameFree(row.org_id, row.name, row.id);
      throw error;
    }
    this.configurations.delete(row.id);
    return providerView(row);
  }

  /** Removes a provider of the caller's org (the owner only). */
  async remove(caller: Principal, id: string) {
    this.assertOwner(caller);
    const row = await this.providerOf(id, caller.orgId);
    await this.storage.identity.deleteSsoProvider(id, caller.orgId);
    this.configurations.delete(id);
    return providerView(row);
  }

  /** Only the workspace owner (or a token no user minted) configures how people sign in. */
  private assertOwner(principal: Principal) {
    if (principal.role && principal.role !== "owner")
      throw new AppError("FORBIDDEN", `only the workspace owner configures single sign-on; your role is ${principal.role}`, { role: principal.role });
  }

  private validated(row: SsoProviderRow, input: SsoProviderInput): SsoProviderRow {
    const wrong = (message: string) => new AppError("VALIDATION_FAILED", message);
    let issuer: URL;
    try {
      issuer = new URL(input.issuer);
    } catch {
      throw wrong(`issuer "${input.issuer}" is not a URL; give the provider's issuer, e.g. https://auth.example.com/application/o/weft/`);
    }
    if (issuer.protocol !== "https:" && !isLoopback(issuer)) throw wrong(`issuer must be https (http only on loopback addresses): ${input.issuer}`);
    const defaultRole = input.defaultRole ?? row.default_role;
    const assignable = ASSIGNABLE_ROLES as readonly string[];
    if (!assignable.includes(defaultRole)) throw wrong(`defaultRole "${defaultRole}" is not one of ${ASSIGNABLE_ROLES.join(", ")}`);
    const mapping = input.roleMapping ?? (JSON.parse(row.role_mapping) as RoleMapping[]);
    for (const entry of mapping) {
      if (!assignable.includes(entry.role)) throw wrong(`roleMapping role "${entry.role}" is not one of ${ASSIGNABLE_ROLES.join(", ")}`);
    }
    const scopes = (input.scopes ?? row.scopes).split(/\s+/).filter(Boolean);
    if (!scopes.includes("openid")) scopes.unshift("openid");
    return {
      ...row,
      name: input.name,
      issuer: input.issuer,
      client_id: input.clientId,
      client_secret: input.clientSecret === undefined ? row.client_secret : input.clientSecret ? this.options.secrets.encrypt(input.clientSecret) : null,
      scopes: scopes.join(" "),
      role_claim: input.roleClaim === undefined ? row.role_claim : input.roleClaim || null,
      role_mapping: JSON.stringify(mapping),
      default_role: defaultRole,
      sso_only: input.ssoOnly ?? row.sso_only,
      workspace_id: input.workspaceId ?? row.workspace_id,
    };
  }

  /** openid-client's discovered configuration of a provider, fetched once per provider version. */
  private configuration(row: SsoProviderRow): Promise<oidc.Configuration> {
    const cached = this.configurations.get(row.id);
    if (cached && cached.updatedAt === row.updated_at) return cached.config;
    const secret = row.client_secret ? this.options.secrets.decrypt(row.client_secret) : undefined;
    const issuer = new URL(row.issuer);
    const config = oidc
      .discovery(issuer, row.client_id, secret, secret ? oidc.ClientSecretPost(secret) : oidc.None(), {
        // Plain http is allowed only for an issuer on this machine (a test's provider, a local IdP).
        ...(isLoopback(issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
      })
      .catch((error: Error) => {
        this.configurations.delete(row.id);
        throw new AppError("SERVICE_UNAVAILABLE", `the provider ${row.name} (${row.issuer}) could not be discovered: ${error.message}`);
      });
    this.configurations.set(row.id, { updatedAt: row.updated_at, config });
    return config;
  }

  private redirectUri(row: SsoProviderRow) {
    return `${this.options.publicUrl.replace(/\/$/, "")}/api/auth/sso/${row.id}/callback`;
  }

  /** Where to send the browser: the provider's authorization endpoint with state, nonce and a PKCE challenge. */
  async start(id: string): Promise<URL> {
    const row = await this.providerOf(id);
    const config = await this.configuration(row);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await this.storage.identity.insertSsoPending({
      state_hash: sha256(state),
      provider_id: row.id,
      nonce,
      code_verifier: codeVerifier,
      expires_at: new Date((this.options.clock ?? systemClock).now() + PENDING_MS).toISOString(),
    });
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(row),
      scope: row.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
    });
  }

  /**
   * The provider's redirect back: takes the pending sign-in of its state (once), redeems the code with the PKCE
   * verifier, validates the ID token (signature, issuer, audience, expiry, nonce), reads userinfo, then finds or
   * creates the user, applies the mapped roles and opens a session.
   */
  async callback(id: string, query: URLSearchParams) {
    const row = await this.providerOf(id);
    const refused = (why: string) => {
      this.options.events?.emit("login.failed", { provider: row.name, reason: why }, "warning");
      return new AppError("UNAUTHORIZED", `single sign-on with ${row.name} failed: ${why}`);
    };
    const error = query.get("error");
    if (error) throw refused(`the provider answered ${error}${query.get("error_description") ? `: ${query.get("error_description")}` : ""}`);
    const state = query.get("state");
    const pending = state ? await this.storage.identity.takeSsoPending(sha256(state), nowIso()) : null;
    if (!state || !pending || pending.provider_id !== row.id)
      throw refused("this sign-in is unknown, expired or already used; start again from the login page");
    const config = await this.configuration(row);
    const currentUrl = new URL(`${this.redirectUri(row)}?${query}`);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (cause) {
      throw refused(grantFailure(cause));
    }
    const claims = tokens.claims()!;
    const userinfo = config.serverMetadata().userinfo_endpoint ? await oidc.fetchUserInfo(config, tokens.access_token, claims.sub).catch(() => ({})) : {};
    const all: Record<string, unknown> = { ...userinfo, ...claims };
    const user = await this.accountFor(row, claims.iss, claims.sub, all);
    await this.applyRoles(row, user, all);
    const session = await this.options.identity.openSession(user, row.workspace_id);
    if (tokens.id_token)
      await this.storage.identity.insertSsoSession({
        session_hash: sha256(session.sessionId),
        provider_id: row.id,
        id_token: tokens.id_token,
        created_at: nowIso(),
      });
    // The route records the login in the audit log, which tells the log stream (docs/teams.md, "Audit log").
    return session;
  }

  /** The user linked to (issuer, subject); else the user of that verified e-mail, linked now; else a new one. */
  private async accountFor(row: SsoProviderRow, issuer: string, subject: string, claims: Record<string, unknown>): Promise<UserRow> {
    const link = await this.storage.identity.ssoLink(issuer, subject);
    if (link) {
      const user = await this.storage.identity.user(link.user_id);
      if (user) return user;
    }
    const email = typeof claims.email === "string" ? claims.email : null;
    if (!email) throw new AppError("UNAUTHORIZED", `the provider ${row.name} gave no e-mail address; add the "email" scope to the provider (docs/teams.md)`);
    const existing = await this.storage.identity.userByEmail(email);
    if (existing && claims.email_verified !== true)
      throw new AppError(
        "UNAUTHORIZED",
        `an account with ${email} exists and the provider ${row.name} does not say the address is verified; verify it at the provider, then sign in again`,
      );
    // A password nobody knows: the account signs in through its provider (or is given a password by reset later).
    const passwordHash = existing ? null : await Bun.password.hash(newSecret("", 32), { algorithm: "argon2id" });
    return this.storage.atomically(async (unit) => {
      let user = existing;
      if (!user) {
        const name = [claims.name, claims.preferred_username].find((v) => typeof v === "string") as string | undefined;
        user = {
          id: newId(),
          org_id: row.org_id,
          email,
          name: name ?? email.split("@")[0]!,
          password_hash: passwordHash!,
          role: "member",
          default_workspace_id: row.workspace_id,
          created_at: nowIso(),
        };
        await unit.identity.insertUser(user);
        this.options.events?.emit("user.created", { userId: user.id, email, provider: row.name }, "notice");
      }
      await unit.identity.insertSsoLink({ issuer, subject, user_id: user.id, provider_id: row.id, created_at: nowIso() });
      return user;
    });
  }

  /**
   * The role claim's values give roles per workspace (the strongest mapped role wins); at every sign-in a mapped
   * role replaces the member's role, except an owner's or a deactivated member's. A first sign-in with no mapped
   * role in the provider's workspace joins it with the default role.
   */
  private async applyRoles(row: SsoProviderRow, user: UserRow, claims: Record<string, unknown>) {
    const raw = row.role_claim ? claims[row.role_claim] : undefined;
    const values = new Set((Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String));
    const wanted = new Map<string, RoleName>();
    for (const entry of JSON.parse(row.role_mapping) as RoleMapping[]) {
      if (!values.has(entry.value)) continue;
      const workspaceId = entry.workspaceId ?? row.workspace_id;
      const held = wanted.get(workspaceId);
      if (!held || ROLE_NAMES.indexOf(entry.role) < ROLE_NAMES.indexOf(held)) wanted.set(workspaceId, entry.role);
    }
    let changed = false;
    await this.storage.atomically(async (unit) => {
      if (!wanted.has(row.workspace_id) && !(await unit.identity.member(row.workspace_id, user.id))) wanted.set(row.workspace_id, row.default_role as RoleName);
      for (const [workspaceId, role] of wanted) {
        if (!(await unit.identity.workspace(workspaceId, row.org_id))) continue;
        const member = await unit.identity.member(workspaceId, user.id);
        if (!member) {
          await unit.identity.insertMember({ workspace_id: workspaceId, user_id: user.id, role, deactivated_at: null, created_at: nowIso() });
        } else if (member.role !== role && member.role !== "owner" && member.deactivated_at === null) {
          await unit.identity.setMemberRole(workspaceId, user.id, role);
          changed = true;
        }
      }
    });
    if (changed) this.options.identity.credentialsChanged();
  }

  /**
   * Refuses a password login while a provider of the org is "SSO only", except the org's owner's with the right
   * password (break-glass, docs/teams.md, "SSO only"). `user` is the account whose password was just verified, or
   * null when none was (unknown e-mail, wrong password, joining by invitation): every refusal is the same 403,
   * given after the password check, so the answer does not tell which e-mail is the owner's or which accounts exist.
   */
  async assertPasswordAllowed(user: Pick<UserRow, "role" | "org_id"> | null) {
    const strict = (await this.storage.identity.ssoProviders(null)).filter((row) => row.sso_only);
    if (strict.length === 0) return;
    if (user?.role === ORG_OWNER && strict.every((row) => row.org_id === user.org_id)) return;
    throw new AppError(
      "FORBIDDEN",
      `password sign-in is turned off here: sign in with ${strict.map((row) => row.name).join(" or ")} (docs/teams.md, "SSO only")`,
      { providers: strict.map((row) => ({ id: row.id, name: row.name })) },
    );
  }

  /**
   * Ends the SSO part of a session being logged out: the provider's end-session URL (RP-initiated logout) with
   * the ID token as hint, or null when the session did not come from a provider or the provider offers none.
   */
  async endSession(rawSession: string): Promise<string | null> {
    const link = await this.storage.identity.takeSsoSession(sha256(rawSession));
    if (!link) return null;
    const row = await this.storage.identity.ssoProvider(link.provider_id);
    if (!row) return null;
    const config = await this.configuration(row).catch(() => null);
    if (!config?.serverMetadata().end_session_endpoint) return null;
    return oidc
      .buildEndSessionUrl(config, { id_token_hint: link.id_token, post_logout_redirect_uri: `${this.options.publicUrl.replace(/\/$/, "")}/` })
      .toString();
  }
}

/** openid-client's refusal in words: the provider's OAuth error, or which ID token claim did not match. */
function grantFailure(cause: unknown): string {
  const error = cause as Error & { error?: string; error_description?: string; cause?: unknown };
  if (typeof error.error === "string") return `the provider refused the code: ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`;
  // openid-client wraps oauth4webapi's check, whose message names the claim (e.g. 'unexpected ID Token "nonce" claim value').
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

function isLoopback(url: URL): boolean {
  return url.hostname === "localhost" || url.hostname === "[::1]" || /^127\./.test(url.hostname);
}
