/**
 * Single sign-on with OpenID Connect against a real provider (docs/teams.md, "Single sign-on"): the certified
 * oidc-provider on loopback (test/support/oidc-provider.ts), its login page driven with fetch. First sign-ins create
 * accounts with the role their group maps to, logout answers the provider's end-session URL, and a tampered state,
 * a replayed code and a wrong nonce are each refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { createLogger } from "../../src/http/logger";
import { openPostgres } from "../../src/store/postgres/db";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { OIDC_CLIENT, startOidcProvider, type OidcProviderHandle } from "../support/oidc-provider";
import { setUpOwner, type Person } from "./support";

const WEFT = "http://127.0.0.1:8999";
let t: TestApp;
let idp: OidcProviderHandle;
let owner: Person;
let providerId: string;

beforeAll(async () => {
  t = await testApp({ WEFT_PUBLIC_URL: WEFT });
  owner = await setUpOwner(t);
  // The redirect URI names the provider's id: the row is made first (issuer not yet known), then the provider is
  // started with that URI registered, then the row gets the provider's issuer.
  const created = await t.req("POST", "/api/sso/providers", {
    body: { name: "Test IdP", issuer: "http://127.0.0.1:1/", clientId: OIDC_CLIENT.id, clientSecret: OIDC_CLIENT.secret },
  });
  expect(created.status).toBe(201);
  providerId = created.body.data.id;
  idp = await startOidcProvider({ redirectUris: [`${WEFT}${created.body.data.redirectPath}`], postLogoutRedirectUris: [`${WEFT}/`] });
  const updated = await t.req("PUT", `/api/sso/providers/${providerId}`, {
    body: {
      name: "Test IdP",
      issuer: idp.issuer,
      clientId: OIDC_CLIENT.id,
      scopes: "openid email profile groups",
      roleClaim: "groups",
      roleMapping: [
        { value: "weft-admins", role: "admin" },
        { value: "weft-editors", role: "editor" },
      ],
      defaultRole: "viewer",
    },
  });
  expect(updated.status).toBe(200);
});

afterAll(async () => {
  await idp?.stop();
});

/** Start → the provider's login page as `account` → Weft's callback; answers the callback's response. */
async function signIn(account: string, tamper: (authorizationUrl: URL) => void = () => {}) {
  const start = await t.req("GET", `/api/auth/sso/${providerId}/start`, { token: null });
  expect(start.status).toBe(302);
  const authorizationUrl = new URL(start.headers.get("location")!);
  tamper(authorizationUrl);
  const callback = await idp.signIn(authorizationUrl.toString(), account);
  expect(callback.pathname).toBe(`/api/auth/sso/${providerId}/callback`);
  return { callback, authorizationUrl };
}

async function callback(url: URL) {
  return t.req("GET", `${url.pathname}${url.search}`, { token: null });
}

async function me(cookie: string) {
  return t.req("GET", "/api/auth/me", { token: null, headers: { cookie } });
}

const cookieOf = (res: { headers: Headers }) => res.headers.get("set-cookie")!.split(";")[0]!;

describe("single sign-on with a real OpenID provider", () => {
  test("the client secret is stored encrypted and never answered", async () => {
    const row = await t.deps.storage.identity.ssoProvider(providerId);
    expect(row!.client_secret).toStartWith("v1:");
    expect(row!.client_secret).not.toContain(OIDC_CLIENT.secret);
    const listed = await t.req("GET", "/api/sso/providers");
    expect(listed.status).toBe(200);
    expect(listed.body.data[0].hasClientSecret).toBe(true);
    expect(listed.text).not.toContain(OIDC_CLIENT.secret);
  });

  test("the login page's list is public and names the provider", async () => {
    const res = await t.req("GET", "/api/auth/sso", { token: null });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ id: providerId, name: "Test IdP", startPath: `/api/auth/sso/${providerId}/start` }]);
  });

  test("the authorization request carries state, nonce and an S256 PKCE challenge", async () => {
    const start = await t.req("GET", `/api/auth/sso/${providerId}/start`, { token: null });
    const url = new URL(start.headers.get("location")!);
    expect(url.origin).toBe(idp.issuer);
    for (const name of ["state", "nonce", "code_challenge"]) expect(url.searchParams.get(name)?.length).toBeGreaterThan(20);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("redirect_uri")).toBe(`${WEFT}/api/auth/sso/${providerId}/callback`);
  });

  test("a first sign-in creates the account with its group's role; another group gets another role", async () => {
    const alice = await callback((await signIn("alice")).callback);
    expect(alice.status).toBe(200);
    const aliceMe = await me(cookieOf(alice));
    expect(aliceMe.status).toBe(200);
    expect(aliceMe.body.data.user.email).toBe("alice@example.com");
    expect(aliceMe.body.data.user.name).toBe("Alice Admin");
    expect(aliceMe.body.data.role).toBe("admin");

    const bob = await callback((await signIn("bob")).callback);
    expect((await me(cookieOf(bob))).body.data.role).toBe("editor");
    const carol = await callback((await signIn("carol")).callback);
    expect((await me(cookieOf(carol))).body.data.role).toBe("viewer");

    const members = await t.req("GET", "/api/members");
    const byEmail = Object.fromEntries(members.body.data.map((m: any) => [m.email, m.role]));
    expect(byEmail).toMatchObject({ "owner@example.com": "owner", "alice@example.com": "admin", "bob@example.com": "editor", "carol@example.com": "viewer" });

    // A second sign-in is the same account (linked by issuer and subject), not a new one.
    const again = await callback((await signIn("alice")).callback);
    expect((await me(cookieOf(again))).body.data.user.id).toBe(aliceMe.body.data.user.id);
  });

  test("an admin who signed in by SSO may not change the providers: only the owner may", async () => {
    const alice = await callback((await signIn("alice")).callback);
    const cookie = cookieOf(alice);
    const csrf = (await me(cookie)).body.data.csrfToken;
    const headers = { cookie, "x-csrf-token": csrf };
    const res = await t.req("DELETE", `/api/sso/providers/${providerId}`, { token: null, headers });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("owner");
    // Adding and changing one are the owner's too; the provider stays as it was.
    const before = (await t.req("GET", `/api/sso/providers/${providerId}`)).body.data;
    const body = { name: "Alice's own", issuer: before.issuer, clientId: "alice" };
    for (const [method, path] of [
      ["POST", "/api/sso/providers"],
      ["PUT", `/api/sso/providers/${providerId}`],
    ] as const) {
      const refused = await t.req(method, path, { token: null, headers, body });
      expect({ method, status: refused.status, owner: refused.body.error?.message.includes("owner") }).toEqual({ method, status: 403, owner: true });
    }
    expect((await t.req("GET", "/api/sso/providers")).body.data.map((p: { name: string }) => p.name)).toEqual([before.name]);
    expect((await t.req("GET", `/api/sso/providers/${providerId}`)).body.data).toEqual(before);
  });

  test("logout ends the session and answers the provider's end-session URL", async () => {
    const bob = await callback((await signIn("bob")).callback);
    const cookie = cookieOf(bob);
    const csrf = (await me(cookie)).body.data.csrfToken;
    const out = await t.req("POST", "/api/auth/logout", { token: null, headers: { cookie, "x-csrf-token": csrf } });
    expect(out.status).toBe(200);
    const logoutUrl = new URL(out.body.data.logoutUrl);
    expect(logoutUrl.origin).toBe(idp.issuer);
    expect(logoutUrl.searchParams.get("id_token_hint")).toBeTruthy();
    expect(logoutUrl.searchParams.get("post_logout_redirect_uri")).toBe(`${WEFT}/`);
    expect((await me(cookie)).status).toBe(401);
    // The provider accepts it: its logout confirmation page, not an error.
    const page = await fetch(logoutUrl, { redirect: "manual" });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("logout");
  });

  test("a tampered state is refused, and the untampered callback still works", async () => {
    const { callback: url } = await signIn("alice");
    const tampered = new URL(url);
    tampered.searchParams.set("state", `${url.searchParams.get("state")}x`);
    const refused = await callback(tampered);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain("unknown, expired or already used");
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect((await callback(url)).status).toBe(200);
  });

  test("a replayed code is refused: with its used state, and with a fresh one", async () => {
    const { callback: url } = await signIn("alice");
    expect((await callback(url)).status).toBe(200);
    const replay = await callback(url);
    expect(replay.status).toBe(401);
    expect(replay.headers.get("set-cookie")).toBeNull();
    // The same code under the state of a new sign-in: the provider refuses the code (used, and not for this PKCE verifier).
    const fresh = await t.req("GET", `/api/auth/sso/${providerId}/start`, { token: null });
    const state = new URL(fresh.headers.get("location")!).searchParams.get("state")!;
    const swapped = new URL(url);
    swapped.searchParams.set("state", state);
    const refused = await callback(swapped);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain("invalid_grant");
  });

  test("an ID token with a wrong nonce is refused", async () => {
    const { callback: url } = await signIn("alice", (authorizationUrl) => authorizationUrl.searchParams.set("nonce", "a-nonce-weft-never-issued-0123456789"));
    const refused = await callback(url);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain("nonce");
    expect(refused.headers.get("set-cookie")).toBeNull();
  });

  test("SSO only: password logins are refused except the owner's (break-glass)", async () => {
    const current = (await t.req("GET", `/api/sso/providers/${providerId}`)).body.data;
    const on = await t.req("PUT", `/api/sso/providers/${providerId}`, {
      body: { name: current.name, issuer: current.issuer, clientId: current.clientId, ssoOnly: true },
    });
    expect(on.status).toBe(200);
    expect(on.body.data.ssoOnly).toBe(true);
    expect(on.body.data.hasClientSecret).toBe(true);
    const member = await t.req("POST", "/api/auth/login", { token: null, body: { email: "carol@example.com", password: "whatever it is" } });
    expect(member.status).toBe(403);
    expect(member.body.error.message).toContain("sign in with Test IdP");
    const ownerLogin = await t.req("POST", "/api/auth/login", { token: null, body: { email: owner.email, password: "owner password" } });
    expect(ownerLogin.status).toBe(200);
    // The answer does not tell which e-mail is the owner's: a wrong owner password, a member's, an unknown e-mail, all alike.
    const wrongOwner = await t.req("POST", "/api/auth/login", { token: null, body: { email: owner.email, password: "not the owner password" } });
    const unknown = await t.req("POST", "/api/auth/login", { token: null, body: { email: "nobody@example.com", password: "whatever it is" } });
    expect(wrongOwner.status).toBe(403);
    expect(wrongOwner.body).toEqual(member.body);
    expect(unknown.status).toBe(403);
    expect(unknown.body).toEqual(member.body);
    // Accepting an invitation with a password is a password login too.
    const invitation = await t.req("POST", "/api/invitations", { body: { email: "dave@example.com", role: "editor" } });
    expect(invitation.status).toBe(201);
    const accepted = await t.req("POST", "/api/invitations/accept", { token: null, body: { token: invitation.body.data.token, password: "dave's password" } });
    expect(accepted.status).toBe(403);
    expect(accepted.body.error.message).toContain("sign in with Test IdP");
    // Sign-in through the provider still works.
    expect((await callback((await signIn("bob")).callback)).status).toBe(200);
  });

  test("bad provider settings are refused naming what is allowed", async () => {
    const bad = await t.req("POST", "/api/sso/providers", { body: { name: "x", issuer: "http://idp.example.com", clientId: "weft" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("https");
    const owner = await t.req("POST", "/api/sso/providers", { body: { name: "x", issuer: "https://idp.example.com", clientId: "weft", defaultRole: "owner" } });
    expect(owner.status).toBe(400);
  });
});

describe("WEFT_OIDC_PROVIDERS (headless installs)", () => {
  test("its providers are written at start, matched by name, their secrets encrypted", async () => {
    const providers = [
      {
        name: "Headless IdP",
        issuer: "https://idp.example.com/realms/weft",
        clientId: "weft",
        clientSecret: "a-secret-from-the-environment",
        roleClaim: "groups",
        roleMapping: [{ value: "ops", role: "operator" }],
      },
    ];
    const headless = await testApp({ WEFT_OIDC_PROVIDERS: JSON.stringify(providers) });
    const listed = await headless.req("GET", "/api/auth/sso", { token: null });
    expect(listed.body.data.map((p: any) => p.name)).toEqual(["Headless IdP"]);
    const full = await headless.req("GET", "/api/sso/providers");
    expect(full.body.data[0]).toMatchObject({
      issuer: "https://idp.example.com/realms/weft",
      hasClientSecret: true,
      roleMapping: [{ value: "ops", role: "operator" }],
    });
    expect(full.text).not.toContain("a-secret-from-the-environment");
    const row = await headless.deps.storage.identity.ssoProvider(full.body.data[0].id);
    expect(headless.deps.secrets.decrypt(row!.client_secret!)).toBe("a-secret-from-the-environment");
  });
});

describe("a provider's name is unique in its org", () => {
  test("adding or renaming a provider to a name in use answers 409 naming the provider that has it", async () => {
    const t = await testApp();
    const body = (name: string) => ({ name, issuer: "https://idp.example.com", clientId: "weft" });
    const first = await t.req("POST", "/api/sso/providers", { body: body("Company IdP") });
    expect(first.status).toBe(201);
    const again = await t.req("POST", "/api/sso/providers", { body: body("Company IdP") });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain(`a single sign-on provider named "Company IdP" already exists (${first.body.data.id})`);
    const other = await t.req("POST", "/api/sso/providers", { body: body("Other IdP") });
    const renamed = await t.req("PUT", `/api/sso/providers/${other.body.data.id}`, { body: body("Company IdP") });
    expect(renamed.status).toBe(409);
    // Changing a provider while keeping its own name is no clash.
    expect((await t.req("PUT", `/api/sso/providers/${first.body.data.id}`, { body: { ...body("Company IdP"), clientId: "weft-2" } })).status).toBe(200);
    expect((await t.req("GET", "/api/sso/providers")).body.data.map((p: any) => p.name).sort()).toEqual(["Company IdP", "Other IdP"]);
  });

  test("an upgraded database whose names repeat keeps the oldest as it is and names each later one after its id", async () => {
    const t = await testApp();
    const { orgId, workspaceId } = await t.deps.identity.ensureOrg();
    const sql = appSql(t);
    // Back to the schema before the names were unique (migration 33), as a database written then is.
    await sql.run("DROP INDEX sso_providers_name");
    await sql.run("DROP INDEX sessions_expires");
    if (t.databaseUrl) await sql.run("DELETE FROM weft_schema_migrations WHERE version >= 33");
    else await sql.run("PRAGMA user_version = 32");
    const ids = ["0190a000-0000-7000-8000-000000000001", "0190a000-0000-7000-8000-000000000002", "0190a000-0000-7000-8000-000000000003"];
    for (const [i, id] of ids.entries())
      await sql.run(
        `INSERT INTO sso_providers (id, org_id, workspace_id, name, issuer, client_id, scopes, role_mapping, default_role, sso_only, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'https://idp.example.com', 'weft', 'openid', '[]', 'viewer', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
        [id, orgId, workspaceId, i < 2 ? "Twice" : "Once"],
      );
    // The upgraded server migrates as it opens the store: SQLite's openDatabase does itself, PostgreSQL's at start-up.
    if (t.databaseUrl) await (await openPostgres(t.databaseUrl, { max: 1 })).close();
    const upgraded = createApp({ config: t.config, db: t.reopen(), log: createLogger("error", () => {}) });
    const rows = await upgraded.deps.storage.identity.ssoProviders(orgId);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.name]))).toEqual({
      [ids[0]!]: "Twice",
      [ids[1]!]: `Twice (${ids[1]})`,
      [ids[2]!]: "Once",
    });
  });
});
