/**
 * Settings → Network in a real browser (Debian's chromium, headless, driven by playwright-core) against a
 * real server with no WEFT_ALLOW_CIDRS: a step calling a server on 127.0.0.1 is refused, and its error on the
 * run page links to Settings → Network → the owner sees that no range is allowed, is told what is wrong
 * with a bad range, allows 127.0.0.0/8 and sees it listed with who allowed it → the same workflow reaches
 * the server without a restart → the owner removes the range, and after a reload it is still gone and the
 * step is refused again. A failing step leaves a screenshot in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Browser, createOwnerAccount, HAS_CHROMIUM, launchBrowser, OWNER, announceMissingChromium, browserSteps } from "../support/browser";
import { type ServerHandle, startServer } from "../support/server";
import { definition, httpGet } from "../engine/support";

announceMissingChromium();

// Without a browser the suite is skipped; test/e2e/builder.test.ts prints the one line naming the package.
let server: ServerHandle;
let target: ReturnType<typeof Bun.serve>;
let browser: Browser;
let page: Page;
let workflowId = "";

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ reached: true }) });
  server = await startServer();
  browser = await launchBrowser(15_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  target?.stop(true);
});

/** One step of the flow: a failure leaves a screenshot. */
const flowStep = browserSteps("e2e-settings-network", () => page);

/** Runs the workflow (its http step GETs the loopback server) and answers the finished run. */
async function runWorkflow(): Promise<{ id: string; status: string; steps: Array<{ status: string; errorMessage: string | null }> }> {
  const res = await server.fetch(`/api/workflows/${workflowId}/run?environment=test&wait=20`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: never }).data;
}

const allowedRows = () => page.getByRole("table", { name: "Allowed ranges" }).locator("tbody tr");

describe("Settings → Network, end to end", () => {
  flowStep("a step calling 127.0.0.1 is refused, and its error links to Settings → Network", async () => {
    await createOwnerAccount(page, server.url);
    const created = await server.fetch("/api/workflows", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "reach the LAN", definition: definition(httpGet(`http://127.0.0.1:${target.port}/`)) }),
    });
    expect(created.status).toBe(201);
    workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    const run = await runWorkflow();
    expect(run.status).toBe("failed");

    await page.goto(`${server.url}/#/runs/${run.id}`);
    const error = page.locator(".run-steps .error-text").first();
    await error.filter({ hasText: "refused to connect to 127.0.0.1" }).waitFor();
    await error.getByRole("link", { name: "Settings → Network" }).click();
    await page.getByRole("heading", { name: "Network", exact: true }).waitFor();
    expect(page.url()).toEndWith("#/settings/network");
    expect(await page.getByRole("navigation", { name: "Settings sections" }).getByRole("link", { name: "Network" }).getAttribute("aria-current")).toBe("page");
  });

  flowStep("shows the policy and the trade-off, and that no range is allowed", async () => {
    await page.getByText("No range is allowed: steps reach public addresses only.").waitFor();
    expect(await page.getByRole("note").textContent()).toContain("anyone who can edit a workflow can reach every host in an allowed range");
    expect(await page.getByText("loopback: the Weft machine itself").textContent()).toContain("127.0.0.0/8");
    expect(await page.getByText("even inside an allowed range").textContent()).toContain("169.254.169.254");
  });

  flowStep("a bad range is refused with what to write instead", async () => {
    await page.getByLabel("Range (CIDR)").fill("127.0.0.1/8");
    await page.getByRole("button", { name: "Allow range" }).click();
    await page.getByRole("alert").filter({ hasText: "the range is 127.0.0.0/8" }).waitFor();
    expect(await allowedRows().count()).toBe(0);
  });

  flowStep("the owner allows 127.0.0.0/8 and sees it listed with who allowed it", async () => {
    await page.getByLabel("Range (CIDR)").fill("127.0.0.0/8");
    await page.getByRole("button", { name: "Allow range" }).click();
    await page.getByRole("status").filter({ hasText: "Allowed 127.0.0.0/8" }).waitFor();
    expect(await allowedRows().count()).toBe(1);
    const cells = (await allowedRows().first().locator("td").allTextContents()).map((text) => text.trim());
    expect(cells.slice(0, 2)).toEqual(["127.0.0.0/8", OWNER.email]);
    expect(await page.getByLabel("Range (CIDR)").inputValue()).toBe("");
    expect(await page.getByRole("alert").count()).toBe(0);
  });

  flowStep("the same workflow now reaches the server, without a restart", async () => {
    const run = await runWorkflow();
    expect({ status: run.status, error: run.steps[0]?.errorMessage ?? null }).toEqual({ status: "completed", error: null });
  });

  flowStep("the owner removes the range; after a reload it is still gone and the step is refused again", async () => {
    await page.getByRole("button", { name: "Remove 127.0.0.0/8" }).click();
    await page.getByRole("status").filter({ hasText: "Removed 127.0.0.0/8" }).waitFor();
    await page.getByText("No range is allowed: steps reach public addresses only.").waitFor();
    await page.reload();
    await page.getByRole("heading", { name: "Network", exact: true }).waitFor();
    await page.getByText("No range is allowed: steps reach public addresses only.").waitFor();
    expect(await allowedRows().count()).toBe(0);
    const run = await runWorkflow();
    expect(run.status).toBe("failed");
    expect(run.steps[0]?.errorMessage).toContain("refused to connect to 127.0.0.1");
  });
});
