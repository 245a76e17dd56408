/**
 * "HA state changed → call service" built in a real browser (Debian's chromium, headless, driven by
 * playwright-core) against a real server and a loopback Home Assistant (test/support/home-assistant.ts,
 * speaking HA's documented WebSocket and REST messages; HA itself cannot be installed here): the owner
 * makes a Home Assistant connection in Settings → Connections, picks the "State changed" trigger and a
 * "Call a service" step in the step picker, chooses domain, service and entity from dropdowns loaded live
 * from the instance, publishes, and the door opening turns the porch light on. A failing step leaves a
 * screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { announceMissingChromium, type Browser, browserSteps, createOwnerAccount, eventually, HAS_CHROMIUM, launchBrowser } from "../support/browser";
import { type HomeAssistantFixture, startHomeAssistant } from "../support/home-assistant";
import { type ServerHandle, startServer } from "../support/server";

announceMissingChromium();

const CONNECTION = "my house";

let ha: HomeAssistantFixture;
let server: ServerHandle;
let browser: Browser;
let page: Page;
let workflowId = "";

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  ha = startHomeAssistant();
  // The instance listens on loopback, which the SSRF guard refuses unless allowed.
  server = await startServer({ env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
  browser = await launchBrowser(15_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  ha?.stop();
});

const flowStep = browserSteps("e2e-home-assistant", () => page);

async function saved() {
  await page.locator(".save-state").filter({ hasText: "All changes saved" }).first().waitFor();
}

/** The labels of a dropdown's choices, without its empty choice. */
const choices = (selector: string) => () => page.locator(`${selector} option:not([value="null"]):not([value=""])`).allTextContents();

describe("Home Assistant in the builder, end to end", () => {
  flowStep("the owner makes a Home Assistant connection", async () => {
    await createOwnerAccount(page, server.url);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("navigation", { name: "Settings sections" }).getByRole("link", { name: "Connections" }).click();
    await page.getByRole("button", { name: "New connection" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: /Home Assistant/ }).click();
    const form = dialog.getByRole("form", { name: "New Home Assistant connection" });
    await form.getByLabel("Connection name").fill(CONNECTION);
    // The form labels a built-in piece's custom auth fields by their keys.
    await form.getByLabel("url", { exact: true }).fill(ha.url);
    await form.getByLabel("token", { exact: true }).fill(ha.token);
    await form.getByRole("button", { name: "Save connection" }).click();
    await dialog.waitFor({ state: "detached", timeout: 20_000 });
    await page.locator("table tbody tr").filter({ hasText: CONNECTION }).waitFor();
  });

  flowStep(
    "picks the State changed trigger and a Call a service step whose dropdowns load from the instance",
    async () => {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workflows" }).click();
      await page.getByRole("button", { name: "New workflow" }).click();
      await page.getByRole("dialog").getByLabel("Name").fill("Door → porch light");
      await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await page.locator("[data-step=trigger]").waitFor();
      workflowId = /#\/workflows\/([0-9a-f-]+)/.exec(page.url())![1]!;

      await page.locator("[data-step=trigger]").click();
      await page.getByRole("button", { name: "Change trigger" }).click();
      await page
        .getByRole("dialog")
        .getByLabel(/^Search/)
        .fill("Home Assistant");
      await page.locator('[data-pick="home-assistant.state_changed"]').click();
      const triggerConnection = page.locator("#conn-home-assistant-state_changed");
      await triggerConnection.locator("option", { hasText: CONNECTION }).waitFor({ state: "attached" });
      await triggerConnection.selectOption({ label: CONNECTION });
      await page.locator("#cfg-trigger-entity_id").fill("binary_sensor.door");
      await page.locator("#cfg-trigger-to").fill("on");
      await page.locator("#cfg-trigger-to").press("Tab");
      await saved();

      await page.getByRole("button", { name: "Add a step after the trigger" }).click();
      await page
        .getByRole("dialog")
        .getByLabel(/^Search/)
        .fill("Call a service");
      await page.locator('[data-pick="home-assistant.call_service"]').click();
      await page.locator("[data-step=call_service]").waitFor();
      const connection = page.locator("#conn-home-assistant-call_service");
      await connection.locator("option", { hasText: CONNECTION }).waitFor({ state: "attached" });
      await connection.selectOption({ label: CONNECTION });

      // Live from the instance: its domains, then the chosen domain's services and entities.
      await eventually(choices("#cfg-call_service-domain"), ["homeassistant", "light", "notify"], 20_000);
      await page.locator("#cfg-call_service-domain").selectOption({ label: "light" });
      await eventually(choices("#cfg-call_service-service"), ["Toggle (toggle)", "Turn off (turn_off)", "Turn on (turn_on)"], 20_000);
      await page.locator("#cfg-call_service-service").selectOption({ label: "Turn on (turn_on)" });
      await eventually(choices("#cfg-call_service-entity_id"), ["Kitchen light (light.kitchen)", "Porch light (light.porch)"], 20_000);
      await page.locator("#cfg-call_service-entity_id").selectOption({ label: "Porch light (light.porch)" });
      await saved();

      const connections = (await (await server.fetch("/api/connections")).json()).data as Array<{ id: string; name: string }>;
      const connectionId = connections.find((c) => c.name === CONNECTION)!.id;
      const trigger = (await (await server.fetch(`/api/workflows/${workflowId}`)).json()).data.definition.trigger;
      expect(trigger).toMatchObject({
        type: "subscription",
        pieceId: "home-assistant",
        actionId: "state_changed",
        connectionId,
        config: { entity_id: "binary_sensor.door", to: "on" },
      });
      expect(trigger.nextAction).toMatchObject({
        type: "PIECE",
        pieceId: "home-assistant",
        actionId: "call_service",
        connectionId,
        config: { domain: "light", service: "turn_on", entity_id: "light.porch" },
      });
    },
    60_000,
  );

  flowStep(
    "publishes, and the door opening turns the porch light on",
    async () => {
      await page.getByRole("button", { name: "Publish", exact: true }).click();
      await page.getByRole("button", { name: "Published" }).and(page.locator(":disabled")).waitFor();
      const open = async () => (await (await server.fetch(`/api/workflows/${workflowId}/trigger`)).json()).data.subscription?.open === true;
      await eventually(open, true, 20_000);
      ha.setState("binary_sensor.door", "on");
      await eventually(async () => ha.states.get("light.porch")!.state, "on", 20_000);
      expect(ha.calls.at(-1)).toMatchObject({ domain: "light", service: "turn_on", target: { entity_id: "light.porch" } });
    },
    45_000,
  );
});
