/**
 * A second factor in a real browser (Debian's chromium, headless, driven by playwright-core) against a real server
 * (docs/teams.md, "Second factor"): the owner turns it on in the profile page (#/profile), reading the secret off the
 * page and computing the code with otpauth as an authenticator app would; after logging out, the password alone
 * opens no session and the login page asks for the code; a recovery code signs in once and is refused the second
 * time; the owner requires a second factor of the workspace, and a member without one sees only its enrolment until
 * theirs is on. A failing step leaves a screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import * as OTPAuth from "otpauth";
import type { Page } from "playwright-core";
import { type Browser, HAS_CHROMIUM, OWNER, announceMissingChromium, browserSteps, createOwnerAccount, launchBrowser } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

let server: ServerHandle;
let browser: Browser;
let page: Page;
let secret = "";
let recoveryCodes: string[] = [];

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

const flowStep = browserSteps("e2e-second-factor", () => page);

/** The code an authenticator app shows, `stepsAhead` periods of thirty seconds from now. */
const codeOf = (stepsAhead: number) => OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp: Date.now() + stepsAhead * 30_000 });

/** Signed in: the shell with its "Log out" is shown (on whatever page the address names). */
const signedIn = () => page.getByRole("button", { name: "Log out" }).waitFor();

const whoAmI = () => page.evaluate(async () => (await fetch("/api/auth/me")).status);

async function logOutAndGivePassword() {
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByRole("heading", { name: "Log in to Weft" }).waitFor();
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Second factor" }).waitFor();
}

describe("second factor, end to end", () => {
  flowStep("the owner turns it on with the app's first code and sees ten recovery codes", async () => {
    await createOwnerAccount(page, server.url);
    await page.goto(`${server.url}/#/profile`);
    await page.getByText("Second factor: off.").waitFor();
    await page.getByRole("button", { name: "Turn on" }).click();
    const secretField = page.getByLabel("Secret");
    await secretField.waitFor();
    secret = await secretField.inputValue();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await page.getByLabel("otpauth:// address").inputValue()).toContain(`secret=${secret}`);
    await page.getByLabel("Code from the app").fill(codeOf(0));
    await page.getByRole("button", { name: "Confirm" }).click();
    const list = page.getByRole("list", { name: "Recovery codes" });
    await list.waitFor();
    recoveryCodes = await list.getByRole("listitem").allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    await page.getByRole("button", { name: "I have saved them" }).click();
    await page.getByText("10 recovery codes left").waitFor();
  });

  flowStep("after logging out, the password alone opens no session: the code of the app does", async () => {
    await logOutAndGivePassword();
    expect(await whoAmI()).toBe(401);
    // The next step's code: the one that confirmed the enrolment was of this step, and a code works once.
    await page.getByLabel("Code").fill(codeOf(1));
    await page.getByRole("button", { name: "Continue" }).click();
    await signedIn();
    expect(await whoAmI()).toBe(200);
  });

  flowStep("a recovery code signs in once, and is refused the second time", async () => {
    await logOutAndGivePassword();
    await page.getByRole("button", { name: "Use a recovery code" }).click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0]!);
    await page.getByRole("button", { name: "Continue" }).click();
    await signedIn();
    expect(await whoAmI()).toBe(200);

    await logOutAndGivePassword();
    await page.getByRole("button", { name: "Use a recovery code" }).click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0]!);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("the recovery code is wrong or used already").waitFor();
    expect(await whoAmI()).toBe(401);
    await page.getByLabel("Recovery code").fill(recoveryCodes[1]!);
    await page.getByRole("button", { name: "Continue" }).click();
    await signedIn();
    await page.goto(`${server.url}/#/profile`);
    await page.getByText("8 recovery codes left").waitFor();
  });

  flowStep("the owner requires a second factor; a member without one sees only its enrolment until theirs is on", async () => {
    const required = page.getByRole("checkbox", { name: /Require a second factor of every member/ });
    await required.check();
    await page.waitForFunction(async () => (await (await fetch("/api/settings/second-factor")).json()).data.required === true);
    const json = { "content-type": "application/json" };
    const invited = await server.fetch("/api/invitations", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ email: "member@example.com", role: "editor" }),
    });
    expect(invited.status).toBe(201);
    const { token } = (await invited.json()).data;
    const accepted = await server.fetch("/api/invitations/accept", {
      method: "POST",
      token: null,
      headers: json,
      body: JSON.stringify({ token, password: "member password" }),
    });
    expect(accepted.status).toBe(201);

    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByLabel("Email").fill("member@example.com");
    await page.getByLabel("Password").fill("member password");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByText("Default workspace requires a second factor: turn yours on to continue.").waitFor();
    await page.goto(`${server.url}/#/workflows`);
    await page.getByRole("button", { name: "Turn on" }).waitFor();
    expect(await page.getByRole("heading", { name: "Workflows" }).count()).toBe(0);
    expect(await page.evaluate(async () => (await fetch("/api/workflows")).status)).toBe(403);

    await page.getByRole("button", { name: "Turn on" }).click();
    const memberSecret = await page.getByLabel("Secret").inputValue();
    await page.getByLabel("Code from the app").fill(OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(memberSecret) }));
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("list", { name: "Recovery codes" }).waitFor();
    await page.getByRole("button", { name: "I have saved them" }).click();
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    expect(await page.evaluate(async () => (await fetch("/api/workflows")).status)).toBe(200);
  });
});
