/**
 * The piece catalog in a real browser (Debian's chromium, headless, driven by playwright-core) against a
 * real server and a loopback npm registry that speaks the registry's documented protocol (packuments,
 * tarballs and the `/-/v1/search` API: test/support/npm-registry.ts). Settings → Integrations shows the
 * registry's pieces page by page → a search finds one → one click installs it (progress, then its counts
 * and auth) → a newer version published to the registry shows as an update, which one click installs →
 * the step picker's "More integrations" opens the catalog searching for what was typed, and step cards
 * carry icons → with the registry gone, the bundled index answers and says how old it is. Screenshots at
 * 1280×720 and 1024×700 are written to test/artifacts/ (catalog-*.png) for a person to look at.
 * Logos of Activepieces' CDN are refused here (no network in tests): cards show the pieces' initials.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { fixturePackage } from "../support/activepieces-fixture";
import { announceMissingChromium, type Browser, browserSteps, createOwnerAccount, HAS_CHROMIUM, launchBrowser } from "../support/browser";
import { type NpmRegistry, startNpmRegistry } from "../support/npm-registry";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

const FIXTURE = "@activepieces/piece-weft-fixture";
const ARTIFACTS = resolve(import.meta.dir, "../artifacts");
// Thirteen more pieces: with the fixture, two pages of twelve.
const OTHERS = ["airtable", "asana", "discord", "dropbox", "gmail", "hubspot", "mailchimp", "notion", "openai", "stripe", "telegram-bot", "trello", "zoom"];

let registry: NpmRegistry;
let server: ServerHandle;
let browser: Browser;
let page: Page;

/** The same bundled fixture under another package name (one build for all of them). */
function renamed(dir: string, name: string): string {
  const copy = mkdtempSync(join(tmpdir(), "weft-catalog-piece-"));
  cpSync(dir, copy, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(copy, "package.json"), "utf8"));
  writeFileSync(join(copy, "package.json"), JSON.stringify({ ...manifest, name }));
  return copy;
}

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  registry = await startNpmRegistry();
  const built = await fixturePackage("1.0.0", FIXTURE);
  await registry.publish(built);
  registry.describe(FIXTURE, "Echoes what it is given, for Weft's tests");
  for (const short of OTHERS) {
    await registry.publish(renamed(built, `@activepieces/piece-${short}`));
    registry.describe(`@activepieces/piece-${short}`, `Automate ${short.replace("-", " ")}: records, messages and events.`);
  }
  server = await startServer({
    env: { WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_CATALOG_TTL_SECONDS: "1" },
  });
  browser = await launchBrowser(15_000);
  page = browser.page;
  await browser.context.route("https://cdn.activepieces.com/**", (route) => route.abort());
  await browser.context.route("https://example.invalid/**", (route) => route.abort());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  registry?.stop();
});

const step = browserSteps("e2e-catalog", () => page);

const cards = () => page.getByRole("list", { name: "Catalog pieces" }).getByRole("listitem");
const card = (name: string) => page.locator(`.catalog-card[data-piece="${name}"]`);

async function screenshot(name: string, width: number, height: number) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.setViewportSize({ width, height });
  await page.screenshot({ path: join(ARTIFACTS, `catalog-${name}-${width}x${height}.png`) });
}

async function openCatalog() {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
  await page.getByRole("navigation", { name: "Settings sections" }).getByRole("link", { name: "Integrations" }).click();
  await page.getByRole("heading", { name: "Catalog" }).waitFor();
}

describe("The piece catalog, end to end", () => {
  step("the catalog lists the registry's pieces, page by page", async () => {
    await createOwnerAccount(page, server.url);
    await openCatalog();
    await page.getByText("14 pieces").waitFor();
    expect(await cards().count()).toBe(12);
    expect(await card("@activepieces/piece-airtable").locator("strong").textContent()).toBe("Airtable");
    expect(await card("@activepieces/piece-airtable").textContent()).toContain("Automate airtable");
    // Not installed: counts and auth are not known yet; the logo falls back to the initials.
    expect(await card("@activepieces/piece-airtable").textContent()).toContain("Counts and auth: known once installed");
    expect(await card("@activepieces/piece-telegram-bot").locator(".piece-logo-letters").textContent()).toBe("TB");
    await page.getByText("Page 1 of 2").waitFor();
    await screenshot("registry", 1280, 720);
    await screenshot("registry", 1024, 700);
    await page.setViewportSize({ width: 1366, height: 800 });
    await page.getByRole("navigation", { name: "Catalog pages" }).getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2 of 2").waitFor();
    await card("@activepieces/piece-zoom").waitFor();
    expect(await cards().count()).toBe(2);
  });

  step(
    "a search finds a piece, and one click installs it with progress",
    async () => {
      await page.getByLabel("Search the catalog").fill("echoes");
      await page.getByText("1 piece", { exact: true }).waitFor();
      const fixture = card(FIXTURE);
      expect(await fixture.textContent()).toContain("Not installed");
      await fixture.getByRole("button", { name: "Install Weft Fixture" }).click();
      await page
        .getByRole("status")
        .filter({ hasText: `Installed ${FIXTURE} 1.0.0 as ap-weft-fixture.` })
        .waitFor({ timeout: 30_000 });
      await fixture.getByText("Installed 1.0.0").waitFor();
      // What the installed piece tells of itself replaces the unknowns.
      expect(await fixture.textContent()).toContain("8 actions · 1 trigger · auth: custom fields");
      expect(await fixture.textContent()).toContain("Developer tools");
      expect(await fixture.getByRole("button").count()).toBe(0);
      // The installed-packages table lists it too.
      await page.locator("table tbody tr").filter({ hasText: "ap-weft-fixture" }).waitFor();
    },
    60_000,
  );

  step(
    "a newer version in the registry shows as an update, which one click installs",
    async () => {
      await registry.publish(await fixturePackage("1.1.0", FIXTURE));
      const fixture = card(FIXTURE);
      // The server keeps a registry page for WEFT_CATALOG_TTL_SECONDS (1 here): search again until it asks anew.
      for (let i = 0; i < 50 && (await fixture.getByText("Update available: 1.1.0").count()) === 0; i++) {
        await page.getByLabel("Search the catalog").fill(i % 2 ? "echoes" : "weft");
        await Bun.sleep(400);
      }
      await fixture.getByText("Update available: 1.1.0").waitFor();
      await fixture.getByRole("button", { name: "Update Weft Fixture" }).click();
      await page
        .getByRole("status")
        .filter({ hasText: `Installed ${FIXTURE} 1.1.0 as ap-weft-fixture.` })
        .waitFor({ timeout: 30_000 });
      await fixture.getByText("Installed 1.1.0").waitFor();
      expect(await fixture.getByText("Update available").count()).toBe(0);
    },
    60_000,
  );

  step("the step picker's More integrations opens the catalog searching for what was typed; step cards show icons", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("button", { name: "New workflow" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("Icons at a glance");
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
    await page.locator("[data-step=trigger]").waitFor();
    // The manual trigger has a drawing of its own.
    await page.locator("[data-step=trigger] [data-icon=manual]").waitFor();

    await page.getByRole("button", { name: "Add a step after the trigger" }).click();
    const picker = page.getByRole("dialog");
    await picker.locator("[data-icon=http]").first().waitFor();
    // Some built-in pieces, each with its drawing.
    await picker.getByLabel(/^Search/).fill("send");
    await screenshot("picker", 1280, 720);
    await picker.getByLabel(/^Search/).fill("Weft Fixture");
    await page.locator(`[data-pick="ap-weft-fixture.echo"]`).click();
    await page.locator("[data-step=echo]").waitFor();
    // Its logo does not load here: the card shows the piece's initials in its place.
    expect(await page.locator("[data-step=echo] .piece-logo-letters").textContent()).toBe("WF");
    await screenshot("editor", 1280, 720);
    await page.setViewportSize({ width: 1366, height: 800 });

    await page.getByRole("button", { name: "Add a step after echo" }).click();
    await page
      .getByRole("dialog")
      .getByLabel(/^Search/)
      .fill("stripe");
    await page.getByRole("dialog").getByRole("button", { name: "More integrations for “stripe”" }).click();
    await page.getByRole("heading", { name: "Catalog" }).waitFor();
    expect(page.url()).toEndWith("#/settings/integrations?q=stripe");
    expect(await page.getByLabel("Search the catalog").inputValue()).toBe("stripe");
    await page.getByText("1 piece", { exact: true }).waitFor();
    await card("@activepieces/piece-stripe").waitFor();
  });

  step("with the registry gone, the bundled index answers and says how old it is", async () => {
    const registryUrl = registry.url;
    registry.stop();
    await page.getByLabel("Search the catalog").fill("");
    const note = page.locator(".catalog-offline");
    for (let i = 0; i < 50 && (await note.count()) === 0; i++) {
      await page.getByLabel("Search the catalog").fill(i % 2 ? "" : "e");
      await Bun.sleep(400);
    }
    await note.waitFor();
    const text = (await note.textContent()) ?? "";
    expect(text).toContain(`Offline: the npm registry ${registryUrl} could not be reached`);
    expect(text).toMatch(/showing the bundled index, made (today|1 day ago|\d+ days ago) \(\d{4}-\d{2}-\d{2}\)\./);
    // The bundled index's real pieces, with the counts its census measured.
    await page.getByLabel("Search the catalog").fill("mysql");
    await card("@activepieces/piece-mysql").waitFor();
    expect(await card("@activepieces/piece-mysql").textContent()).toContain("6 actions · 0 triggers · auth: custom fields");
    await page.getByLabel("Search the catalog").fill("");
    await card("@activepieces/piece-airtable").waitFor();
    await screenshot("offline", 1280, 720);
    await screenshot("offline", 1024, 700);
  });
});
