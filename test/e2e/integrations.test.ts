/**
 * Settings → Integrations in a real browser (Debian's chromium, headless, driven by playwright-core)
 * against a real server and a throwaway npm registry on 127.0.0.1: the UI can add a piece, configure a
 * step with a dynamic dropdown, and run it. First-start setup → the owner adds an Activepieces piece
 * package by name and sees the progress and the installed version → makes a connection for it (custom
 * auth: a secret token and a region) in Settings → Connections → a new workflow (manual trigger) gets a
 * step of the piece, picked in the step picker without a restart, with that connection, a static
 * dropdown and a dynamic dropdown whose choices the piece host computes live from the connection and the
 * static dropdown → a test run completes and shows the step's output. A failing step leaves a
 * screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Browser, createOwnerAccount, eventually, HAS_CHROMIUM, launchBrowser, OWNER, announceMissingChromium, browserSteps } from "../support/browser";
import { FIXTURE, FIXTURE_ID, fixturePackage } from "../support/activepieces-fixture";
import { type NpmRegistry, startNpmRegistry } from "../support/npm-registry";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

// Without a browser the suite is skipped; test/e2e/builder.test.ts prints the one line naming the package.
const CONNECTION = "fixture account";

let registry: NpmRegistry;
let server: ServerHandle;
let browser: Browser;
let page: Page;
let workflowId = "";

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  registry = await startNpmRegistry();
  await registry.publish(await fixturePackage("1.0.0"));
  // The registry listens on loopback, which the SSRF guard refuses unless allowed.
  server = await startServer({ env: { WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
  browser = await launchBrowser(15_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  registry?.stop();
});

/** One step of the flow: a failure leaves a screenshot. */
const flowStep = browserSteps("e2e-integrations", () => page);

async function saved() {
  await page.locator(".save-state").filter({ hasText: "All changes saved" }).first().waitFor();
}

describe("Settings → Integrations, end to end", () => {
  flowStep("first start asks for the owner account and logs in", async () => {
    await createOwnerAccount(page, server.url);
    expect(await page.getByText(OWNER.email).count()).toBe(1);
  });

  flowStep(
    "adds a piece package by name and sees it installed",
    async () => {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
      await page.getByRole("navigation", { name: "Settings sections" }).getByRole("link", { name: "Integrations" }).click();
      await page.getByRole("heading", { name: "Integrations" }).waitFor();
      expect(page.url()).toEndWith("#/settings/integrations");
      await page.getByText("No piece packages are installed.").waitFor();
      // The fleet line: the server answering is registered and alive.
      await page
        .getByRole("list", { name: "Weft instances" })
        .getByText(/^This instance on .*: alive, last heartbeat/)
        .waitFor();

      await page.getByLabel("npm package").fill(`${FIXTURE}@1.0.0`);
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page
        .getByRole("status")
        .filter({ hasText: `Installed ${FIXTURE} 1.0.0 as ${FIXTURE_ID}.` })
        .waitFor({ timeout: 30_000 });
      const rows = page.locator("table tbody tr");
      await rows.filter({ hasText: FIXTURE_ID }).waitFor();
      expect(await rows.count()).toBe(1);
      const cells = (await rows.first().locator("td").allTextContents()).map((text) => text.trim());
      expect(cells.slice(0, 3)).toEqual([`Weft Fixture ${FIXTURE_ID}`, FIXTURE, "1.0.0"]);
      expect(await page.getByLabel("npm package").inputValue()).toBe("");

      const listed = await (await server.fetch("/api/pieces/packages")).json();
      expect(listed.data.map((p: { pieceId: string; version: string }) => [p.pieceId, p.version])).toEqual([[FIXTURE_ID, "1.0.0"]]);
    },
    45_000,
  );

  flowStep("creates a connection for the piece in Settings → Connections", async () => {
    await page.getByRole("navigation", { name: "Settings sections" }).getByRole("link", { name: "Connections" }).click();
    await page.getByRole("heading", { name: "Connections" }).waitFor();
    await page.getByText("No connections yet.").waitFor();
    await page.getByRole("button", { name: "New connection" }).click();
    const dialog = page.getByRole("dialog");
    // The piece just installed is among the pieces that take a connection.
    await dialog.getByRole("button", { name: /Weft Fixture/ }).click();
    const form = dialog.getByRole("form", { name: "New Weft Fixture connection" });
    await form.getByLabel("Connection name").fill(CONNECTION);
    // Custom auth: exactly the fields the piece declares, the token a secret.
    expect(await form.getByLabel("Token").getAttribute("type")).toBe("password");
    await form.getByLabel("Region").fill("eu");
    // The piece's own credential check (its auth's validate(), run in the piece host) refuses a bad token…
    await form.getByLabel("Token").fill("bad-token");
    await form.getByRole("button", { name: "Save connection" }).click();
    await form.getByText("the fixture service refused this token").waitFor({ timeout: 20_000 });
    // …and accepts a good one.
    await form.getByLabel("Token").fill("good-token");
    await form.getByRole("button", { name: "Save connection" }).click();
    await dialog.waitFor({ state: "detached", timeout: 20_000 });

    const row = page.locator("table tbody tr").filter({ hasText: CONNECTION });
    await row.waitFor();
    expect(await row.textContent()).toContain(FIXTURE_ID);
    expect(await row.textContent()).toContain("active");

    const stored = await (await server.fetch("/api/connections")).json();
    expect(stored.data.map((c: { name: string; pieceId: string }) => [c.name, c.pieceId])).toEqual([[CONNECTION, FIXTURE_ID]]);
  });

  flowStep(
    "a new workflow gets a step of the piece with the connection, a static and a dynamic dropdown, and dependent fields",
    async () => {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workflows" }).click();
      await page.getByRole("button", { name: "New workflow" }).click();
      await page.getByRole("dialog").getByLabel("Name").fill("Echoes through a piece package");
      await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await page.locator("[data-step=trigger]").waitFor();
      workflowId = /#\/workflows\/([0-9a-f-]+)/.exec(page.url())![1]!;

      // The installed piece's actions are in the step picker, without a restart.
      await page.getByRole("button", { name: "Add a step after the trigger" }).click();
      await page
        .getByRole("dialog")
        .getByLabel(/^Search/)
        .fill("Weft Fixture");
      await page.locator(`[data-pick="${FIXTURE_ID}.echo"]`).click();
      await page.locator("[data-step=echo]").waitFor();

      // The connection made in Settings is offered for this piece.
      const connection = page.locator(`#conn-${FIXTURE_ID}-echo`);
      await connection.locator("option", { hasText: CONNECTION }).waitFor({ state: "attached" });
      await connection.selectOption({ label: CONNECTION });

      await page.locator("#cfg-echo-text").fill("hello");
      await page.locator("#cfg-echo-text").press("Tab");
      const colour = page.locator("#cfg-echo-colour");
      expect(await colour.locator("option").allTextContents()).toEqual(expect.arrayContaining(["Red", "Blue"]));
      await colour.selectOption({ label: "Blue" });

      // The item's choices come live from the piece host, computed from the colour and the connection's region.
      const item = page.locator("#cfg-echo-item");
      const choices = () => item.locator('option:not([value="null"])').allTextContents();
      await eventually(choices, ["blue item 1 (eu)", "blue item 2 (eu)"], 20_000);
      expect(await item.getAttribute("aria-busy")).toBeNull();
      await item.selectOption({ label: "blue item 2 (eu)" });
      await saved();
      expect(await item.locator("option:checked").textContent()).toBe("blue item 2 (eu)");

      // Details is a DYNAMIC property: its fields come from the piece for the chosen colour (blue: shade and depth).
      await page.locator("#cfg-echo-details-shade").fill("navy");
      await page.locator("#cfg-echo-details-shade").press("Tab");
      expect(await page.locator("#cfg-echo-details-depth").count()).toBe(1);
      expect(await page.locator("#cfg-echo-details-note").count()).toBe(0);
      await saved();

      // What the UI saved is what the API holds: the step pins the installed piece version.
      const connections = (await (await server.fetch("/api/connections")).json()).data as Array<{ id: string; name: string }>;
      const stored = await (await server.fetch(`/api/workflows/${workflowId}`)).json();
      const trigger = stored.data.definition.trigger;
      expect(trigger.type).toBe("manual");
      expect(trigger.nextAction).toMatchObject({
        type: "PIECE",
        pieceId: FIXTURE_ID,
        actionId: "echo",
        pieceVersion: "1.0.0",
        connectionId: connections.find((c) => c.name === CONNECTION)!.id,
        config: { text: "hello", colour: "blue", item: 2, details: { shade: "navy" } },
      });
    },
    45_000,
  );

  flowStep(
    "a test run completes and shows the step's output",
    async () => {
      await page.getByRole("button", { name: "Test run" }).click();
      await page.getByRole("button", { name: "Run test" }).click();
      await page.locator(".test-summary").filter({ hasText: "completed" }).waitFor({ timeout: 30_000 });
      await page.locator("[data-step=echo] .badge").filter({ hasText: "completed" }).waitFor();
      await page.locator("[data-step=echo]").click();
      const output = page.getByRole("region", { name: "Test result of echo" }).getByLabel("Output of echo");
      await output.filter({ hasText: "hello" }).waitFor();
      expect(JSON.parse((await output.textContent())!)).toMatchObject({
        text: "hello",
        colour: "blue",
        region: "eu",
        version: "1.0.0",
        details: { shade: "navy" },
      });
    },
    45_000,
  );
});
