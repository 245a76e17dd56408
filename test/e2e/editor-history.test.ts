/**
 * Undo/redo and copy/duplicate/paste in a real browser (Debian's chromium, headless) against a real
 * server: a step deleted and brought back with Ctrl+Z (and the saved draft on the server has it
 * again), Ctrl+Shift+Z takes it away again; Ctrl+Z in a text field stays the field's own undo; a
 * duplicated step gets a new name; a step copied in one workflow is pasted into another in a second
 * tab through the system clipboard; text that holds no steps is refused with a message.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import {
  type Browser,
  createOwnerAccount,
  eventually,
  HAS_CHROMIUM,
  launchBrowser,
  withScreenshot,
  announceMissingChromium,
  browserSteps,
} from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

let server: ServerHandle;
let browser: Browser;
let page: Page;
let first = "";
let second = "";

const template = (name: string, text: string) => ({ name, type: "PIECE", pieceId: "text", actionId: "template", config: { template: text } });

async function createWorkflow(name: string, nextAction: unknown): Promise<string> {
  const res = await server.fetch("/api/workflows", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, definition: { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {}, nextAction } } }),
  });
  expect(res.status).toBe(201);
  return (await res.json()).data.id;
}

/** The step names of a workflow's saved draft, in order along its main chain. */
async function savedSteps(id: string): Promise<string[]> {
  const def = (await (await server.fetch(`/api/workflows/${id}`)).json()).data.definition;
  const names: string[] = [];
  for (let node = def.trigger; node; node = node.nextAction) names.push(node.name);
  return names;
}

const shownSteps = (on: Page) => on.locator("[data-step]").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-step")));

async function saved(on: Page = page) {
  await on.locator(".save-state").filter({ hasText: "All changes saved" }).waitFor();
}

const flowStep = browserSteps("editor-history", () => page);

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  server = await startServer();
  browser = await launchBrowser();
  page = browser.page;
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  first = await createWorkflow("First", template("greet", "Hello {{trigger.body.name}}"));
  second = await createWorkflow("Second", template("greet", "Good day"));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("editor undo/redo and copy/paste, end to end", () => {
  flowStep("a step added in the editor, deleted, comes back with Ctrl+Z and goes again with Ctrl+Shift+Z", async () => {
    await createOwnerAccount(page, server.url);
    await page.goto(`${server.url}/#/workflows/${first}`);
    await page.locator("[data-step=greet]").waitFor();
    expect(await page.getByRole("button", { name: "Undo" }).isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Undo" }).getAttribute("title")).toBe("Undo (Ctrl+Z)");

    // Build: a second template step after greet that reads greet's output.
    await page.getByRole("button", { name: "Add a step after greet" }).click();
    await page
      .getByRole("dialog")
      .getByLabel(/^Search/)
      .fill("template");
    await page.locator('[data-pick="text.template"]').click();
    await page.locator("#cfg-template-template").fill("{{greet.output}}!");
    await page.locator("#cfg-template-template").press("Tab");
    await saved();
    expect(await savedSteps(first)).toEqual(["trigger", "greet", "template"]);

    await page.locator("[data-step=template]").click();
    await page.getByRole("button", { name: "Delete step" }).click();
    await page.locator("[data-step=template]").waitFor({ state: "detached" });
    await saved();
    expect(await savedSteps(first)).toEqual(["trigger", "greet"]);

    await page.keyboard.press("Control+z");
    await page.locator("[data-step=template]").waitFor();
    await saved();
    await eventually(() => savedSteps(first), ["trigger", "greet", "template"]);
    const restored = (await (await server.fetch(`/api/workflows/${first}`)).json()).data.definition.trigger.nextAction.nextAction;
    expect(restored.config).toEqual({ template: "{{greet.output}}!" });

    await page.keyboard.press("Control+Shift+Z");
    await page.locator("[data-step=template]").waitFor({ state: "detached" });
    await saved();
    expect(await savedSteps(first)).toEqual(["trigger", "greet"]);

    // The toolbar does the same.
    await page.getByRole("button", { name: "Undo" }).click();
    await page.locator("[data-step=template]").waitFor();
    await saved();
    expect(await savedSteps(first)).toEqual(["trigger", "greet", "template"]);
  });

  flowStep("Ctrl+Z in a text field undoes the typing there, not a step", async () => {
    const title = page.getByLabel("Workflow name");
    await title.click();
    await title.press("End");
    await page.keyboard.type(" draft");
    expect(await title.inputValue()).toBe("First draft");
    await page.keyboard.press("Control+z");
    expect(await title.inputValue()).toBe("First");
    expect(await shownSteps(page)).toEqual(["trigger", "greet", "template"]);
    await title.press("Escape");
    await page.locator("[data-step=greet]").click();
  });

  flowStep("Duplicate puts a renamed copy after the step, saved", async () => {
    await page.getByRole("button", { name: "Actions of step greet", exact: true }).click();
    await page.getByRole("menuitem", { name: "Duplicate" }).click();
    await page.locator("[data-step=greet_2]").waitFor();
    await page.getByRole("status").filter({ hasText: "Duplicated 1 step (renamed: greet → greet_2)" }).waitFor();
    await saved();
    expect(await savedSteps(first)).toEqual(["trigger", "greet", "greet_2", "template"]);
    const copy = (await (await server.fetch(`/api/workflows/${first}`)).json()).data.definition.trigger.nextAction.nextAction;
    expect(copy.config).toEqual({ template: "Hello {{trigger.body.name}}" });
  });

  flowStep("a step copied with Ctrl+C in one workflow is pasted with Ctrl+V into another, in another tab", async () => {
    await page.locator("[data-step=greet_2]").click();
    await page.keyboard.press("Control+c");
    await page.getByRole("status").filter({ hasText: "Copied greet_2" }).waitFor();
    const clipboard = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
    expect(clipboard).toMatchObject({ weft: "steps", version: 1, steps: [{ name: "greet_2", config: { template: "Hello {{trigger.body.name}}" } }] });

    const other = await browser.context.newPage();
    await withScreenshot(other, "editor-history-paste-in-second-tab", async () => {
      await other.goto(`${server.url}/#/workflows/${second}`);
      await other.locator("[data-step=greet]").click();
      await other.keyboard.press("Control+v");
      // greet_2 is free in the second workflow, so it keeps its name.
      await other.locator("[data-step=greet_2]").waitFor();
      await saved(other);
      expect(await savedSteps(second)).toEqual(["trigger", "greet", "greet_2"]);

      // Pasting once more from the step's menu: the name is taken now, so the copy is renamed.
      await other.getByRole("button", { name: "Actions of step greet_2", exact: true }).click();
      await other.getByRole("menuitem", { name: "Paste after" }).click();
      await other.getByRole("status").filter({ hasText: "renamed: greet_2 → greet_3" }).waitFor();
      await saved(other);
      expect(await savedSteps(second)).toEqual(["trigger", "greet", "greet_2", "greet_3"]);

      // One paste is one undo.
      await other.getByRole("button", { name: "Undo" }).click();
      await other.locator("[data-step=greet_3]").waitFor({ state: "detached" });
      await saved(other);
      expect(await savedSteps(second)).toEqual(["trigger", "greet", "greet_2"]);
    });
    await other.close();
  });

  flowStep("pasting text that holds no steps says why and changes nothing", async () => {
    await page.evaluate(() => navigator.clipboard.writeText("just a sentence"));
    await page.locator("[data-step=greet]").click();
    await page.keyboard.press("Control+v");
    await page.getByRole("alert").filter({ hasText: "The clipboard holds no Weft steps: its text is not JSON" }).waitFor();
    expect(await shownSteps(page)).toEqual(["trigger", "greet", "greet_2", "template"]);
    expect(await savedSteps(first)).toEqual(["trigger", "greet", "greet_2", "template"]);
  });
});
