/**
 * Settings → Members in a real browser (Debian's chromium, headless, driven by playwright-core) against a real
 * server (docs/teams.md): the owner invites a viewer and is shown the link once → logs out → the link opens the
 * invitation page, which joins with a new password → the viewer sees the members and the roles, with inviting
 * and every action on members disabled and the reason given. A failing step leaves a screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Browser, HAS_CHROMIUM, announceMissingChromium, browserSteps, createOwnerAccount, launchBrowser } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

let server: ServerHandle;
let browser: Browser;
let page: Page;
let link = "";

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

const flowStep = browserSteps("e2e-members", () => page);

describe("Settings → Members, end to end", () => {
  flowStep("the owner invites a viewer and is shown the link once", async () => {
    await createOwnerAccount(page, server.url);
    await page.goto(`${server.url}/#/settings/members`);
    await page.getByRole("heading", { name: "Members", exact: true }).waitFor();
    await page.locator('tr[data-member="owner@example.com"]').getByText("active").waitFor();
    await page.getByLabel("E-mail").fill("vera@example.com");
    await page.getByRole("form", { name: "Invite a member" }).locator("select").selectOption("viewer");
    await page.getByRole("button", { name: "Invite", exact: true }).click();
    const shown = page.getByLabel("Invitation link");
    await shown.waitFor();
    link = await shown.inputValue();
    expect(link).toStartWith(`${server.url}/#/invite/weft_inv_`);
    await page.locator('[data-invitation="vera@example.com"]').waitFor();
  });

  flowStep("the link opens the invitation page, which joins with a new password", async () => {
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("heading", { name: "Log in to Weft" }).waitFor();
    await page.goto(link);
    await page.getByText("is invited to Default workspace as viewer").waitFor();
    await page.getByLabel(/^Password/).fill("vera's own password");
    await page.getByRole("button", { name: "Join Default workspace" }).click();
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
  });

  flowStep("the viewer sees members and roles; what a viewer cannot do is disabled with the reason", async () => {
    await page.goto(`${server.url}/#/settings/members`);
    const owner = page.locator('tr[data-member="owner@example.com"]');
    await owner.waitFor();
    expect(await page.getByText("Your role:").textContent()).toContain("viewer");
    expect(await owner.getByRole("button", { name: "Deactivate" }).isDisabled()).toBe(true);
    expect(await owner.locator(".reason").textContent()).toBe("needs workspace:admin (roles: owner, admin); your role is viewer");
    expect(await page.getByRole("button", { name: "Invite", exact: true }).isDisabled()).toBe(true);
    expect(await page.locator('tr[data-role="viewer"]').textContent()).toContain("workflow:read");
  });
});
