/**
 * Single sign-on in a real browser (Debian's chromium, headless, driven by playwright-core) against a real server
 * and a real OpenID provider (the certified oidc-provider on loopback, test/support/oidc-provider.ts; its
 * development login page takes any account id): the owner sees, adds and removes providers in Settings → Single
 * sign-on; the login page offers "Sign in with Test IdP"; Alice signs in at
 * the provider's page and her first sign-in creates her account as admin (her group); logging out ends the session
 * here and, through RP-initiated logout, at the provider; a forged callback comes back to the login page saying
 * why; Bob, in another group, signs in as editor
 * (docs/teams.md, "Single sign-on"). A failing step leaves a screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Browser, HAS_CHROMIUM, announceMissingChromium, browserSteps, createOwnerAccount, launchBrowser } from "../support/browser";
import { OIDC_CLIENT, type OidcProviderHandle, startOidcProvider } from "../support/oidc-provider";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

let server: ServerHandle;
let idp: OidcProviderHandle;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  server = await startServer();
  // The redirect URI names the provider's id: the row first, then the provider registered with it, then its issuer.
  const created = await server.fetch("/api/sso/providers", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Test IdP", issuer: "http://127.0.0.1:1/", clientId: OIDC_CLIENT.id, clientSecret: OIDC_CLIENT.secret }),
  });
  expect(created.status).toBe(201);
  const provider = (await created.json()).data;
  idp = await startOidcProvider({ redirectUris: [`${server.url}${provider.redirectPath}`], postLogoutRedirectUris: [`${server.url}/`] });
  const updated = await server.fetch(`/api/sso/providers/${provider.id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      name: "Test IdP",
      issuer: idp.issuer,
      clientId: OIDC_CLIENT.id,
      scopes: "openid email profile groups",
      roleClaim: "groups",
      roleMapping: [
        { value: "weft-admins", role: "admin" },
        { value: "weft-editors", role: "editor" },
      ],
    }),
  });
  expect(updated.status).toBe(200);
  browser = await launchBrowser(15_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await server?.stop();
});

const flowStep = browserSteps("e2e-sso", () => page);

/** The caller as the server sees the page's session. */
const whoAmI = () =>
  page.evaluate(async () => {
    const res = await fetch("/api/auth/me");
    if (res.status !== 200) return { status: res.status, email: null, role: null };
    const body = await res.json();
    return { status: res.status, email: body.data.user.email as string, role: body.data.role as string };
  });

/** From Weft's login page through the provider's login page and back into the workflow list. */
async function signInAtProvider(account: string) {
  await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
  await page.waitForURL(`${idp.issuer}/**`);
  await page.locator('input[name="login"]').fill(account);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("heading", { name: "Workflows" }).waitFor();
}

describe("single sign-on, end to end", () => {
  flowStep("the owner sees the provider in Settings → Single sign-on, adds one and removes it", async () => {
    await createOwnerAccount(page, server.url);
    await page.goto(`${server.url}/#/settings/sso`);
    const table = page.getByRole("table", { name: "Single sign-on providers" });
    await table.getByText(idp.issuer).waitFor();
    await table.getByText(`${server.url}/api/auth/sso/`).waitFor();
    const form = page.getByRole("form", { name: "Add provider" });
    await form.getByLabel(/^Name/).fill("Second IdP");
    await form.getByLabel("Issuer URL").fill("https://idp.example.com");
    await form.getByLabel("Client ID").fill("weft");
    await form.getByLabel(/^Role mapping/).fill("ops = operator");
    await form.getByRole("button", { name: "Add provider" }).click();
    await table.getByText("ops → operator").waitFor();
    await page.getByRole("button", { name: "Remove Second IdP" }).click();
    await table.getByText("Second IdP").waitFor({ state: "detached" });
  });

  flowStep("the login page offers the provider", async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("heading", { name: "Log in to Weft" }).waitFor();
    await page.getByRole("link", { name: "Sign in with Test IdP" }).waitFor();
  });

  flowStep("a first sign-in at the provider creates the account with its group's role", async () => {
    await signInAtProvider("alice");
    expect(await whoAmI()).toEqual({ status: 200, email: "alice@example.com", role: "admin" });
  });

  flowStep("logout ends the session here and at the provider", async () => {
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(`${idp.issuer}/**`);
    await page.getByRole("button", { name: "Yes, sign me out" }).click();
    await page.getByRole("heading", { name: "Log in to Weft" }).waitFor();
    expect(page.url()).toStartWith(server.url);
    expect((await whoAmI()).status).toBe(401);
  });

  flowStep("a refused sign-in (a tampered state) comes back to the login page saying why", async () => {
    const { data } = await (await server.fetch("/api/auth/sso", { token: null })).json();
    await page.goto(`${server.url}${data[0].startPath.replace("/start", "/callback")}?code=forged&state=forged`);
    await page.getByRole("heading", { name: "Log in to Weft" }).waitFor();
    await page.getByRole("alert").getByText("unknown, expired or already used").waitFor();
    expect(page.url()).not.toContain("ssoError");
    expect((await whoAmI()).status).toBe(401);
  });

  flowStep("a second user in another group signs in with another role", async () => {
    // The provider's own session ended too: it asks who is signing in again.
    await signInAtProvider("bob");
    expect(await whoAmI()).toEqual({ status: 200, email: "bob@example.com", role: "editor" });
  });
});
