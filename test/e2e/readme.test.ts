/**
 * The README, followed as a newcomer would in a real browser: its "Your first workflow" UI path
 * (every label it names is clicked by that name) builds, publishes and calls a webhook workflow;
 * and every "Settings → <tab>" path that README.md or docs/ name leads to that tab in the UI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { type Browser, createOwnerAccount, HAS_CHROMIUM, launchBrowser, withScreenshot, announceMissingChromium } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

const ROOT = resolve(import.meta.dir, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** README.md and every page under docs/, as [file, text]. */
function documents(): [string, string][] {
  const pages: [string, string][] = [["README.md", README]];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) pages.push([path, readFileSync(join(ROOT, path), "utf8")]);
    }
  };
  walk("docs");
  return pages;
}

/**
 * Every Weft UI path of the form "Settings → Tab" in the docs, with where it was found. A path that
 * names another product's settings (a provider's developer console) is preceded by its name and a
 * colon, as in "GitHub: Settings → Developer settings", and is not Weft's.
 */
function settingsPaths(pages: [string, string][]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const [file, text] of pages) {
    for (const match of text.matchAll(/(\w+:\s*)?\*{0,2}Settings\s*→\s*([A-Z][\w-]*(?: [a-z][\w-]*)*)/g)) {
      if (match[1]) continue;
      const tab = match[2]!;
      found.set(tab, [...(found.get(tab) ?? []), file]);
    }
  }
  return found;
}

let server: ServerHandle;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  server = await startServer();
  browser = await launchBrowser();
  page = browser.page;
  await createOwnerAccount(page, server.url);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const saved = () => page.locator(".save-state").filter({ hasText: "All changes saved" }).first().waitFor();

/** In the step picker: the button named `entry` under the piece or group headed `group`. */
async function pick(group: string, entry: string) {
  const dialog = page.getByRole("dialog");
  const section = dialog.locator(".picker-group").filter({ has: page.getByRole("heading", { name: new RegExp(`^${group} `) }) });
  await section.getByRole("button", { name: new RegExp(`^${entry}`) }).click();
}

describe("the README's first workflow, in the UI", () => {
  test.skipIf(!HAS_CHROMIUM)(
    "builds, publishes and calls the greeting webhook by the README's own words",
    () =>
      withScreenshot(page, "readme-first-workflow", async () => {
        // The values the README tells the user to type: reading them from it keeps the two in step.
        const greeting = /a field\s+`greeting` = `([^`]+)`/.exec(README)?.[1];
        const body = /Webhook → \*Respond\*, body\s+`([^`]+)`/.exec(README)?.[1];
        expect(greeting).toBe('{{ "hello " & trigger.body.name }}');
        expect(body).toBeDefined();
        for (const words of [
          "Workflows → **New workflow**",
          "**Create**",
          "**Change trigger** →\nWebhook → *Catch webhook*",
          "**Add a step after** the trigger → Data → *Set fields*",
          "**Publish**",
          "**Copy**",
        ])
          expect(README.replace(/\s+/g, " ")).toContain(words.replace(/\s+/g, " "));

        // Workflows → New workflow, name it, Create.
        await page.getByRole("link", { name: "Workflows" }).click();
        await page.getByRole("button", { name: "New workflow" }).click();
        await page.getByRole("dialog").getByLabel("Name").fill("Hello webhook");
        await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
        await page.locator("[data-step=trigger]").waitFor();
        const workflowId = /#\/workflows\/([0-9a-f-]+)/.exec(page.url())![1]!;

        // Change trigger → Webhook → Catch webhook.
        await page.locator("[data-step=trigger]").click();
        await page.getByRole("button", { name: "Change trigger" }).click();
        await pick("Webhook", "Catch webhook");
        await saved();

        // Add a step after the trigger → Data → Set fields, with a field greeting = the expression.
        await page.getByRole("button", { name: "Add a step after the trigger" }).click();
        await pick("Data", "Set fields");
        const stepName = await page.getByLabel("Step name").inputValue();
        await page.getByRole("button", { name: "Add field" }).click();
        await page.getByLabel("Fields: name 1").fill("greeting");
        await page.getByLabel("Fields: name 1").press("Tab");
        await page.getByLabel("Fields: value of greeting").fill(greeting!);
        await page.getByLabel("Fields: value of greeting").press("Tab");
        await saved();

        // Add a step after it → Webhook → Respond, with the body the README gives.
        expect(body).toBe(`{{${stepName}.output}}`);
        await page.getByRole("button", { name: /^Add a step after Set fields/ }).click();
        await pick("Webhook", "Respond");
        await page.getByLabel(/^Body/).fill(body!);
        await page.getByLabel(/^Body/).press("Tab");
        await saved();

        // Publish, then Copy the webhook URL and call it as the README's curl does.
        await page.getByRole("button", { name: "Publish", exact: true }).click();
        await page.getByText("Webhook URL (live)").waitFor();
        await page.getByRole("button", { name: "Copy" }).waitFor();
        const url = await page.locator("#webhook-url").inputValue();
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Ada" }) });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ greeting: "hello Ada" });

        // "Every call appears on the Runs page with each step's input and output."
        await page.getByRole("link", { name: "Runs" }).click();
        const row = page.locator("tr[data-run]").filter({ hasText: "Hello webhook" }).filter({ hasText: "completed" });
        await row.first().waitFor({ timeout: 15_000 });
        await row.first().getByRole("link").first().click();
        await page.locator(`.run-steps [data-step=${stepName}]`).getByLabel(`Output of ${stepName}`).filter({ hasText: "hello Ada" }).waitFor();
        const stored = await (await server.fetch(`/api/workflows/${workflowId}`)).json();
        expect(stored.data.status).toBe("active");
      }),
    60_000,
  );
});

describe("UI paths named in the docs", () => {
  const paths = settingsPaths(documents());

  test("the docs name Settings paths (so this check checks something)", () => {
    expect(paths.size).toBeGreaterThan(1);
    expect([...paths.keys()].some((words) => words.startsWith("API tokens"))).toBe(true);
  });

  test.skipIf(!HAS_CHROMIUM)("every “Settings → …” path in README.md and docs/ opens that tab", () =>
    withScreenshot(page, "docs-settings-paths", async () => {
      await page.goto(`${server.url}/#/settings`);
      const nav = page.getByRole("navigation", { name: "Settings sections" });
      await nav.waitFor();
      const tabs = await nav.getByRole("link").allTextContents();
      for (const [words, files] of paths) {
        // Prose runs on after the label ("Settings → API tokens in the UI"): the tab is the label the words start with.
        const tab = tabs.find((label) => words === label || words.startsWith(`${label} `));
        if (!tab) throw new Error(`"Settings → ${words}" (in ${files.join(", ")}) names no tab of Settings; its tabs are ${tabs.join(", ")}`);
        await nav.getByRole("link", { name: tab, exact: true }).click();
        await page.getByRole("heading", { name: tab, exact: true }).waitFor();
      }
    }),
  );
});
