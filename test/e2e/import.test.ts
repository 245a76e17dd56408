/**
 * The Import dialog in a real browser (Debian's chromium, headless, driven by playwright-core) against a real
 * server (docs/import.md, "The Import dialog"): an n8n workflow file chosen in the dialog shows what was detected
 * and each node's outcome before anything is saved; Import makes the draft and the editor opens it. Then the round
 * trip: "Export all (zip)" downloads the folder export, and a second server's fresh workspace imports that zip,
 * its plan all creates. A failing step leaves a screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { type Browser, HAS_CHROMIUM, announceMissingChromium, browserSteps, createOwnerAccount, launchBrowser } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

const fixture = JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/import/n8n/if-merge.json"), "utf8"));

let server: ServerHandle;
let fresh: ServerHandle;
let browser: Browser;
let page: Page;
let zipPath = "";

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  server = await startServer({ timeoutMs: 60_000 });
  fresh = await startServer({ timeoutMs: 60_000 });
  browser = await launchBrowser(30_000);
  page = browser.page;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await fresh?.stop();
});

const flowStep = browserSteps("e2e-import", () => page);
const LONG = 120_000;

describe("the Import dialog, end to end", () => {
  flowStep(
    "an n8n workflow: the report before anything is saved, then Import opens the draft",
    async () => {
      await createOwnerAccount(page, server.url);
      await page.getByRole("button", { name: "Import", exact: true }).click();
      const dialog = page.getByRole("dialog", { name: "Import" });
      await dialog.locator('input[type="file"]').setInputFiles({
        name: "if-merge.json",
        mimeType: "application/json",
        buffer: Buffer.from(JSON.stringify(fixture.workflow)),
      });
      await dialog.getByText("Detected: n8n workflow").waitFor();
      const rows = dialog.locator("tr[data-outcome]");
      await rows.first().waitFor();
      const report: string[][] = [];
      for (const row of await rows.all())
        report.push([(await row.locator("td").first().innerText()).split("\n")[0]!, (await row.getAttribute("data-outcome"))!]);
      expect(report).toEqual(fixture.expectedReport);
      expect(await dialog.locator(".import-counts").innerText()).toBe("5 mapped, 1 approximated, 0 not mapped");
      expect(await dialog.locator('tr[data-outcome="approximated"]').innerText()).toContain("the output of the branch that ran");
      // Nothing saved yet: the list behind the dialog is still empty.
      expect(await page.getByText("No workflows here yet").isVisible()).toBe(true);

      await dialog.getByRole("button", { name: "Import", exact: true }).click();
      await page.waitForURL(/#\/workflows\/[0-9a-f-]{36}$/);
      expect(await page.getByLabel("Workflow name").inputValue()).toBe("If and merge");
    },
    LONG,
  );

  flowStep(
    "Export all (zip), then a fresh workspace imports the zip: its plan is all creates",
    async () => {
      await page.goto(`${server.url}/#/`);
      await page.getByRole("link", { name: "If and merge" }).waitFor();
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export all (zip)" }).click()]);
      expect(download.suggestedFilename()).toMatch(/^weft-workflows-\d{4}-\d{2}-\d{2}\.zip$/);
      zipPath = join(mkdtempSync(join(tmpdir(), "weft-e2e-zip-")), download.suggestedFilename());
      await download.saveAs(zipPath);

      await createOwnerAccount(page, fresh.url);
      await page.getByRole("button", { name: "Import", exact: true }).click();
      const dialog = page.getByRole("dialog", { name: "Import" });
      await dialog.locator('input[type="file"]').setInputFiles(zipPath);
      await dialog.getByText("Detected: Weft folder export (zip)").waitFor();
      const plan = dialog.locator("tr[data-plan]");
      await plan.first().waitFor();
      const rows: string[][] = [];
      for (const row of await plan.all()) rows.push((await row.locator("td").allInnerTexts()).slice(0, 3));
      expect(rows).toEqual([["create", "workflow", "If and merge"]]);

      await dialog.getByRole("button", { name: "Import", exact: true }).click();
      await page.waitForURL(/#\/workflows\/[0-9a-f-]{36}$/);
      expect(await page.getByLabel("Workflow name").inputValue()).toBe("If and merge");
    },
    LONG,
  );
});
