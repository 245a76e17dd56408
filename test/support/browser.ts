/**
 * Shared by the browser suites (test/e2e/): Debian's chromium (or WEFT_CHROMIUM), headless, driven by
 * playwright-core; a step that fails leaves a screenshot in test/artifacts/.
 *   const browser = await launchBrowser(); ... await browser.close();
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { announceOnce } from "./announce";

export const CHROMIUM = process.env.WEFT_CHROMIUM ?? "/usr/bin/chromium";
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Says once per test run that the browser suites are skipped, however many files have one. */
export function announceMissingChromium(): void {
  if (HAS_CHROMIUM) return;
  announceOnce(
    "chromium",
    `browser tests skipped: ${CHROMIUM} is missing (enable them with \`apt-get install chromium\`, or point WEFT_CHROMIUM at a Chromium)`,
  );
}
const ARTIFACTS = resolve(import.meta.dir, "../artifacts");

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(defaultTimeoutMs = 10_000): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "weft-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1366, height: 800 },
  });
  context.setDefaultTimeout(defaultTimeoutMs);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Runs `fn`; when it fails, saves a screenshot of `page` named after `name` and says where. */
/** The owner account the browser suites sign up with. */
export const OWNER = { email: "owner@example.com", password: "correct horse battery staple" };

/** First start: fills in the owner form at `baseUrl` and waits for the workflow list. */
export async function createOwnerAccount(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByRole("heading", { name: "Welcome to Weft" }).waitFor();
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel(/^Password/).fill(OWNER.password);
  await page.getByRole("button", { name: "Create owner account" }).click();
  await page.getByRole("heading", { name: "Workflows" }).waitFor();
}

export async function withScreenshot(page: Page | undefined, name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, `${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.png`);
    await page?.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    throw new Error(`${(error as Error).message}\n(screenshot: ${file})`, { cause: error });
  }
}

/**
 * The test function of a browser suite: each step is skipped without chromium and, when it fails, leaves a
 * screenshot of `page()` named after `prefix` and the step.
 *   const flowStep = browserSteps("e2e-integrations", () => page);
 */
export function browserSteps(prefix: string, page: () => Page | undefined) {
  return (name: string, fn: () => Promise<void>, timeout = 30_000) =>
    test.skipIf(!HAS_CHROMIUM)(name, () => withScreenshot(page(), `${prefix}-${name}`, fn), timeout);
}

/** Waits until `read()` equals `expected` (deeply), for what a page fills in on its own. */
export async function eventually<T>(read: () => Promise<T>, expected: Awaited<T>, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    try {
      expect(value).toEqual(expected);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await Bun.sleep(100);
  }
}
