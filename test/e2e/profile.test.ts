/**
 * The profile page in a real browser (Debian's chromium, headless, driven by playwright-core) against a real
 * server (docs/teams.md, "Sessions"): the owner, also signed in elsewhere, opens Profile from the e-mail in the
 * top bar, sees both sessions with this one marked, ends the other one — whose cookie is refused at once — and
 * changes the password. A failing step leaves a screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Browser, HAS_CHROMIUM, OWNER, announceMissingChromium, browserSteps, createOwnerAccount, launchBrowser } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

let server: ServerHandle;
let browser: Browser;
let page: Page;
/** The cookie of the owner's other session, opened outside the browser. */
let elsewhere = "";

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  server = await startServer();
  browser = await launchBrowser(15_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const me = (cookie: string) => server.fetch("/api/auth/me", { token: null, headers: { cookie } });
const flowStep = browserSteps("e2e-profile", () => page);

describe("Profile, end to end", () => {
  flowStep("the owner, signed in on another device too, opens Profile from the top bar and sees both sessions", async () => {
    await createOwnerAccount(page, server.url);
    const login = await server.fetch("/api/auth/login", {
      method: "POST",
      token: null,
      headers: { "content-type": "application/json", "user-agent": "other-device/1.0" },
      body: JSON.stringify(OWNER),
    });
    expect(login.status).toBe(200);
    elsewhere = login.headers.get("set-cookie")!.split(";")[0]!;
    expect((await me(elsewhere)).status).toBe(200);

    await page.getByRole("link", { name: OWNER.email }).click();
    await page.getByRole("heading", { name: "Profile", exact: true }).waitFor();
    const rows = page.getByRole("table", { name: "Your sessions" }).locator("tbody tr");
    await rows.nth(1).waitFor();
    expect(await rows.count()).toBe(2);
    expect(await page.locator('tr[data-current="true"]').textContent()).toContain("(this session)");
  });

  flowStep("ending the other session signs that device out at once; this one stays", async () => {
    const other = page.locator("tbody tr", { hasText: "other-device/1.0" });
    await other.getByRole("button", { name: /^End session/ }).click();
    await other.waitFor({ state: "detached" });
    expect((await me(elsewhere)).status).toBe(401);
    expect(await page.getByRole("table", { name: "Your sessions" }).locator("tbody tr").count()).toBe(1);
    expect(await page.getByRole("button", { name: "End all other sessions" }).isDisabled()).toBe(true);
  });

  flowStep("changing the password needs the current one and says so when it is wrong", async () => {
    await page.getByLabel("Current password").fill("not my password");
    await page.getByLabel(/^New password/).fill("a brand new password");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("the current password is wrong").waitFor();
    await page.getByLabel("Current password").fill(OWNER.password);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Password changed.").waitFor();
    const login = await server.fetch("/api/auth/login", {
      method: "POST",
      token: null,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: OWNER.email, password: "a brand new password" }),
    });
    expect(login.status).toBe(200);
  });
});
