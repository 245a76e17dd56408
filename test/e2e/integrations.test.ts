/**
 * Settings → Integrations in a real browser (Debian's chromium, headless, playwright-core) against a real
 * server and a throwaway npm registry on 127.0.0.1: the owner adds an Activepieces piece package by name,
 * sees the progress and the installed version, its actions appear in the editor's step picker without a
 * restart, and a step of it is configured — a new connection, a static and a dynamic dropdown whose
 * choices the piece computes from the connection — and test-run. A failing step leaves a screenshot in
 * test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { FIXTURE, FIXTURE_ID, fixturePackage } from "../support/activepieces-fixture";
import { type NpmRegistry, startNpmRegistry } from "../support/npm-registry";
import { type ServerHandle, startServer } from "../support/server";

const CHROMIUM = process.env.WEFT_CHROMIUM ?? "/usr/bin/chromium";
const HAS_CHROMIUM = existsSync(CHROMIUM);
// The builder suite prints the one line about a missing chromium; this one stays quiet.
const ARTIFACTS = resolve(import.meta.dir, "../artifacts");
const OWNER = { email: "owner@example.com", password: "correct horse battery staple" };

let registry: NpmRegistry;
let server: ServerHandle;
let context: BrowserContext;
let page: Page;
let profile: string;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  registry = await startNpmRegistry();
  await registry.publish(await fixturePackage("1.0.0"));
  server = await startServer({ env: { WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
  profile = mkdtempSync(join(tmpdir(), "weft-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1366, height: 800 },
  });
  context.setDefaultTimeout(15_000);
  page = context.pages()[0] ?? (await context.newPage());
}, 60_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await server?.stop();
  registry?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** One step of the flow; a failure leaves a screenshot. */
function flowStep(name: string, fn: () => Promise<void>, timeout = 30_000) {
  test.skipIf(!HAS_CHROMIUM)(
    name,
    async () => {
      try {
        await fn();
      } catch (error) {
        mkdirSync(ARTIFACTS, { recursive: true });
        const file = join(ARTIFACTS, `e2e-integrations-${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.png`);
        await page?.screenshot({ path: file, fullPage: true }).catch(() => undefined);
        throw new Error(`${(error as Error).message}\n(screenshot: ${file})`, { cause: error });
      }
    },
    timeout,
  );
}

describe("Settings → Integrations", () => {
  flowStep("the owner signs in", async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole("heading", { name: "Welcome to Weft" }).waitFor();
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel(/^Password/).fill(OWNER.password);
    await page.getByRole("button", { name: "Create owner account" }).click();
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
  });

  flowStep("adds a piece package by name and sees it installed", async () => {
    await page.goto(`${server.url}/#/settings/integrations`);
    await page.getByRole("heading", { name: "Integrations" }).waitFor();
    await page.getByText("No piece packages are installed.").waitFor();
    await page.getByLabel("npm package").fill(`${FIXTURE}@1.0.0`);
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Installed ${FIXTURE} 1.0.0 as ${FIXTURE_ID}.` })
      .waitFor({ timeout: 30_000 });
    const row = page.locator("table tbody tr").filter({ hasText: FIXTURE_ID });
    await row.waitFor();
    expect(await row.textContent()).toContain("1.0.0");
    const listed = await (await server.fetch("/api/pieces/packages")).json();
    expect(listed.data.map((p: { pieceId: string }) => p.pieceId)).toEqual([FIXTURE_ID]);
  });

  flowStep("its actions are in the step picker without a restart", async () => {
    await page.goto(`${server.url}/#/workflows`);
    await page.getByRole("button", { name: "New workflow" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("Uses a piece package");
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
    await page.locator("[data-step=trigger]").waitFor();
    await page.getByRole("button", { name: "Add a step after the trigger" }).click();
    await page
      .getByRole("dialog")
      .getByLabel(/^Search/)
      .fill("Weft Fixture");
    await page.locator(`[data-pick="${FIXTURE_ID}.echo"]`).waitFor();
    expect(await page.locator(`[data-pick^="${FIXTURE_ID}."]`).count()).toBe(6);
  });

  flowStep(
    "configures the step with a new connection and a dynamic dropdown, and a test run completes",
    async () => {
      await page.locator(`[data-pick="${FIXTURE_ID}.echo"]`).click();
      await page.getByRole("button", { name: "New connection" }).click();
      const form = page.getByRole("form", { name: "New Weft Fixture connection" });
      await form.getByLabel("Connection name").fill("fixture account");
      await form.getByLabel("Token").fill("good-token");
      await form.getByLabel("Region").fill("eu");
      await form.getByRole("button", { name: "Save connection" }).click();
      await form.waitFor({ state: "detached" });

      await page.locator("#cfg-echo-text").fill("hello");
      await page.locator("#cfg-echo-text").press("Tab");
      await page.locator("#cfg-echo-colour").selectOption({ label: "Blue" });
      // The item's choices come from the piece, computed from the colour and the connection's region.
      const item = page.locator("#cfg-echo-item");
      await item.locator("option", { hasText: "blue item 2 (eu)" }).waitFor({ state: "attached" });
      expect(await item.locator("option").allTextContents()).toContain("blue item 1 (eu)");
      await item.selectOption({ label: "blue item 2 (eu)" });
      await page.locator(".save-state").filter({ hasText: "All changes saved" }).waitFor();

      await page.getByRole("button", { name: "Test run" }).click();
      await page.getByRole("button", { name: "Run test" }).click();
      await page.locator(".test-summary").filter({ hasText: "completed" }).waitFor({ timeout: 20_000 });
      await page.locator("[data-step=echo]").click();
      const output = page.getByRole("region", { name: "Test result of echo" }).getByLabel("Output of echo");
      await output.filter({ hasText: "hello" }).waitFor();
      expect(await output.textContent()).toContain("blue");

      const workflowId = /#\/workflows\/([0-9a-f-]+)/.exec(page.url())?.[1];
      const stored = await (await server.fetch(`/api/workflows/${workflowId}`)).json();
      const step = stored.data.definition.trigger.nextAction;
      expect(step).toMatchObject({ pieceId: FIXTURE_ID, actionId: "echo", pieceVersion: "1.0.0", config: { text: "hello", colour: "blue", item: 2 } });
    },
    60_000,
  );
});
