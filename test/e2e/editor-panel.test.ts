/**
 * The step panel in a real browser (Debian's chromium, headless, driven by playwright-core) against a
 * real server: a set_fields step holding a long expression shows it whole at 1280×720 and 1024×700
 * (nothing cut off, no sideways overflow of the panel); the wide expression editor shows it whole,
 * its data picker inserts at the cursor, and Save lands in the draft; after publishing, a call to the
 * webhook shows up by itself in the step's "Last production run" tab, and a test run in "Last test",
 * each with its own output. Screenshots of the panel at both sizes are written to test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Locator, Page } from "playwright-core";
import { type Browser, createOwnerAccount, HAS_CHROMIUM, launchBrowser, announceMissingChromium, browserSteps } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

// Without a browser the suite is skipped; test/e2e/builder.test.ts prints the one line naming the package.
const ARTIFACTS = resolve(import.meta.dir, "../artifacts");
const LONG = '{{ "Hello " & trigger.body.name & ", this greeting is one long expression that never fits on a single line of the step panel" }}';
/** What the expression editor makes of LONG: a reference picked at the start, then typed text. */
const EDITED = `{{trigger.body.hello}}: ${LONG}`;

let server: ServerHandle;
let browser: Browser;
let page: Page;
let workflowId = "";
let webhookUrl = "";

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

const flowStep = browserSteps("e2e-editor-panel", () => page);

async function saved() {
  await page.locator(".save-state").filter({ hasText: "All changes saved" }).first().waitFor();
}

/** The element's text is all on screen: no scrolling needed in either direction. */
async function showsWhole(locator: Locator) {
  // The field grows after the layout that changed its width (a ResizeObserver): give it a moment.
  const measure = () => locator.evaluate((el) => ({ sh: el.scrollHeight, ch: el.clientHeight, sw: el.scrollWidth, cw: el.clientWidth }));
  let box = await measure();
  for (const deadline = Date.now() + 2_000; box.sh > box.ch + 1 && Date.now() < deadline; box = await measure()) await Bun.sleep(50);
  expect(box.sh).toBeLessThanOrEqual(box.ch + 1);
  expect(box.sw).toBeLessThanOrEqual(box.cw + 1);
}

/** The side panel does not overflow sideways, and the page itself does not either. */
async function panelFits() {
  const side = await page.locator("aside.side").evaluate((el) => ({ sw: el.scrollWidth, cw: el.clientWidth }));
  expect(side.sw).toBeLessThanOrEqual(side.cw);
  const doc = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth }));
  expect(doc.sw).toBeLessThanOrEqual(doc.cw);
}

async function snapshot(name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: resolve(ARTIFACTS, `editor-panel-${name}.png`) });
}

const productionOutput = () => page.getByLabel("Production output of greet");

describe("the step panel, end to end", () => {
  flowStep("a long expression in a key/value field shows whole at 1280×720 and 1024×700", async () => {
    await createOwnerAccount(page, server.url);
    const res = await server.fetch("/api/workflows", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: "Long greeting",
        definition: {
          schemaVersion: 2,
          trigger: {
            name: "trigger",
            type: "webhook",
            pieceId: "webhook",
            actionId: "catch_webhook",
            config: {},
            nextAction: { name: "greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { greeting: LONG } } },
          },
        },
      }),
    });
    expect(res.status).toBe(201);
    const created = (await res.json()).data;
    workflowId = created.id;
    webhookUrl = created.webhookUrl;

    for (const [width, height] of [
      [1280, 720],
      [1024, 700],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/#/workflows/${workflowId}`);
      await page.locator("[data-step=greet]").click();
      const value = page.getByLabel("Fields: value of greeting");
      expect(await value.inputValue()).toBe(LONG);
      await showsWhole(value);
      await page.getByRole("button", { name: "Expand Fields greeting" }).waitFor();
      await panelFits();
    }
  });

  flowStep("the expression editor shows the whole expression, inserts data at the cursor and saves to the draft", async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByRole("button", { name: "Expand Fields greeting" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit Fields greeting" });
    const editor = dialog.getByLabel("Fields greeting (expression editor)");
    expect(await editor.inputValue()).toBe(LONG);
    await showsWhole(editor);
    await snapshot("expression-editor-1280x720");

    // The cursor to the very start, then a reference from the picker, then typing goes on after it.
    await editor.press("Control+Home");
    await dialog.getByLabel("Insert data into Fields greeting").selectOption("trigger.body.hello");
    await page.keyboard.type(": ");
    expect(await editor.inputValue()).toBe(EDITED);
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await page.getByLabel("Fields: value of greeting").inputValue()).toBe(EDITED);
    await saved();
    const draft = (await (await server.fetch(`/api/workflows/${workflowId}`)).json()).data;
    expect(draft.definition.trigger.nextAction.config.fields).toEqual({ greeting: EDITED });
    await showsWhole(page.getByLabel("Fields: value of greeting"));
  });

  flowStep(
    "after publishing, a webhook call shows in the step's Last production run tab by itself",
    async () => {
      await page.getByRole("button", { name: "Publish", exact: true }).click();
      await page.locator(".editor-head .badge").filter({ hasText: "active" }).waitFor();
      await page.getByRole("tab", { name: "Last production run" }).click();
      await page.getByText("No production run has reached this step yet — publish and trigger the workflow.").waitFor();

      const call = await fetch(webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Prod", hello: "prod-call" }),
      });
      expect(call.status).toBe(202);
      // No click: the open tab notices the new production run.
      await productionOutput().filter({ hasText: "prod-call: Hello Prod, this greeting" }).waitFor({ timeout: 20_000 });
      const runs = (await (await server.fetch(`/api/runs?workflowId=${workflowId}&environment=production`)).json()).data;
      expect(runs).toHaveLength(1);
      const region = page.getByRole("region", { name: "Last production run of greet" });
      expect(await region.getByRole("link").getAttribute("href")).toBe(`#/runs/${runs[0].id}`);
      expect(await region.locator(".badge").textContent()).toBe("completed");
    },
    40_000,
  );

  flowStep("a test run shows in Last test, and each tab keeps its own run's output", async () => {
    await page.getByRole("button", { name: "Test run" }).click();
    await page.locator("#test-payload").fill('{"name": "Test", "hello": "test-call"}');
    await page.getByRole("button", { name: "Run test" }).click();
    await page.locator(".test-summary").filter({ hasText: "completed" }).waitFor({ timeout: 20_000 });
    await page.getByRole("tab", { name: "Last test" }).click();
    await page.getByLabel("Output of greet", { exact: true }).filter({ hasText: "test-call: Hello Test, this greeting" }).waitFor();
    expect(await page.getByLabel("Output of greet", { exact: true }).textContent()).not.toContain("prod-call");

    await page.getByRole("tab", { name: "Last production run" }).click();
    await productionOutput().filter({ hasText: "prod-call: Hello Prod" }).waitFor();
    expect(await productionOutput().textContent()).not.toContain("test-call");

    // The panel as a user sees it, at both sizes, for a look by eye.
    for (const [width, height] of [
      [1280, 720],
      [1024, 700],
    ] as const) {
      await page.setViewportSize({ width, height });
      const value = page.getByLabel("Fields: value of greeting");
      await showsWhole(value);
      await panelFits();
      await value.scrollIntoViewIfNeeded();
      await snapshot(`${width}x${height}`);
      await page
        .getByRole("region", { name: "Last production run of greet" })
        .getByRole("button", { name: /^Refresh/ })
        .scrollIntoViewIfNeeded();
      await snapshot(`results-${width}x${height}`);
    }
  });
});
