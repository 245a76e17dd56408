/**
 * The API reference at /api/docs in a real browser (Debian's chromium through playwright-core)
 * against a real server: search for an operation, open GET /api/runs, send it with Try it before and
 * after entering a token (401, then 200 and the envelope), and check that the page never asked
 * another origin for anything and that the builder at / never downloads it.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Browser, HAS_CHROMIUM, launchBrowser, announceMissingChromium, browserSteps } from "../support/browser";
import { startServer, type ServerHandle } from "../support/server";

announceMissingChromium();

let server: ServerHandle;
let browser: Browser;
let page: Page;
const requested: string[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  server = await startServer();
  browser = await launchBrowser();
  page = browser.page;
  page.on("request", (request) => requested.push(request.url()));
  // A script or style the Content-Security-Policy blocked shows up here.
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const step = browserSteps("api-docs", () => page);

const row = (method: string, path: string) =>
  page
    .locator(".op-head")
    .filter({ has: page.locator("code.path", { hasText: new RegExp(`^${path}$`) }) })
    .filter({ hasText: method });

describe("API reference, in a browser", () => {
  step("search narrows the operations to those matching", async () => {
    await page.goto(`${server.url}/api/docs`);
    await page.getByRole("heading", { name: /Weft API/ }).waitFor();
    const all = await page.locator(".op-head").count();
    expect(all).toBeGreaterThan(50);
    await page.getByLabel("Search operations").fill("runs");
    await row("GET", "/api/runs").waitFor();
    const shown = await page.locator(".op-head").count();
    expect(shown).toBeLessThan(all);
    expect(await row("GET", "/api/tokens").count()).toBe(0);
    expect(await page.getByText(`${shown} operations`).count()).toBe(1);
  });

  step("an operation's row shows its scope on the same line", async () => {
    const head = row("GET", "/api/runs");
    const scope = head.locator(".scope");
    expect(await scope.textContent()).toBe("run:read");
    const headBox = (await head.boundingBox())!;
    const scopeBox = (await scope.boundingBox())!;
    expect(scopeBox.y).toBeGreaterThanOrEqual(headBox.y);
    expect(scopeBox.y + scopeBox.height).toBeLessThanOrEqual(headBox.y + headBox.height);
    expect(scopeBox.x).toBeGreaterThan(headBox.x + headBox.width / 2);
  });

  step("opening GET /api/runs shows its parameters, an example response and Try it", async () => {
    await row("GET", "/api/runs").click();
    const body = page.locator("#op-get-api-runs-body");
    await body.waitFor();
    expect(await body.locator("table.params").getByText("workflowId", { exact: true }).count()).toBe(1);
    const example = JSON.parse((await body.getByRole("figure", { name: "Example 200 response" }).textContent())!);
    expect(Array.isArray(example.data)).toBe(true);
    expect(example.data[0].status).toBeDefined();
    expect(await body.getByRole("form", { name: "Try GET /api/runs" }).count()).toBe(1);
    expect(page.url()).toEndWith("#op-get-api-runs");
  });

  step("Try it without a token answers 401, with the token 200 and the envelope", async () => {
    const form = page.getByRole("form", { name: "Try GET /api/runs" });
    await form.getByLabel(/^limit/).fill("5");
    await form.getByRole("button", { name: "Send" }).click();
    const result = form.getByRole("region", { name: "Response" });
    await result.locator(".status", { hasText: "401" }).waitFor();

    await page.getByLabel("API token").fill(server.token);
    await page.getByRole("button", { name: "Use token" }).click();
    await page.getByText("Token set:").waitFor();
    await form.getByRole("button", { name: "Send" }).click();
    await result.locator(".status", { hasText: "200" }).waitFor();
    const answer = JSON.parse((await result.getByRole("figure", { name: "Response body" }).textContent())!);
    expect(answer.data).toEqual([]);
    expect(answer.pagination).toMatchObject({ page: 1, limit: 5, total: 0 });
    await form.getByText("As curl").click();
    expect(await form.getByText(`curl -X GET '${server.url}/api/runs?limit=5' -H "Authorization: Bearer $WEFT_TOKEN"`).count()).toBe(1);
  });

  step("the token survives a reload of the tab, and Forget token removes it", async () => {
    await page.reload();
    await page.getByText("Token set:").waitFor();
    // The reload kept the open operation (its address is in the hash).
    await page.locator("#op-get-api-runs-body").waitFor();
    await page.getByRole("button", { name: "Forget token" }).click();
    await page.getByLabel("API token").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  step("the page asked nothing of another origin and the CSP blocked nothing", async () => {
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => new URL(url).origin !== server.url)).toEqual([]);
    expect(consoleErrors.filter((text) => /Content Security Policy|Refused/.test(text))).toEqual([]);
  });

  step("the builder at / does not download the reference", async () => {
    requested.length = 0;
    await page.goto(`${server.url}/`);
    await page.getByRole("heading", { name: "Welcome to Weft" }).waitFor();
    expect(requested.some((url) => url.endsWith("/"))).toBe(true);
    expect(requested.filter((url) => url.includes("/api/docs") || url.includes("/api/openapi.json"))).toEqual([]);
  });
});
