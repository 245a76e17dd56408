/** docs/configuration.md lists every environment variable src/config.ts reads, with its default. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config";

const ROOT = join(import.meta.dir, "../..");

test("every WEFT_ variable config.ts reads has a row in docs/configuration.md", () => {
  const source = readFileSync(join(ROOT, "src/config.ts"), "utf8");
  const doc = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
  const read = [...new Set(source.match(/"WEFT_[A-Z_]+"|env\.WEFT_[A-Z_]+/g)!.map((m) => m.replace(/^env\.|"/g, "")))];
  expect(read.length).toBeGreaterThan(20);
  const missing = read.filter((name) => !doc.includes(`| \`${name}\` |`));
  expect(missing).toEqual([]);
});

test("the documented numeric defaults are the ones loadConfig applies", () => {
  const doc = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
  const documented = (name: string) => doc.match(new RegExp(`\\| \`${name}\` \\| \`([^\`]+)\` \\|`))?.[1];
  const c = loadConfig({});
  expect(documented("WEFT_PORT")).toBe(String(c.port));
  expect(documented("WEFT_BODY_LIMIT")).toBe(String(c.bodyLimit));
  expect(documented("WEFT_RATE_LIMIT")).toBe(String(c.rateLimitPerSecond));
  expect(documented("WEFT_RATE_BURST")).toBe(String(c.rateLimitBurst));
  expect(documented("WEFT_RUN_TIMEOUT_SECONDS")).toBe(String(c.runTimeoutSeconds));
  expect(documented("WEFT_STEP_OUTPUT_LIMIT")).toBe(String(c.stepOutputLimit));
  expect(documented("WEFT_RUN_MEMORY_MB")).toBe(String(c.runMemoryMb));
  expect(documented("WEFT_RUN_WRITER")).toBe(c.runWriter);
  expect(documented("WEFT_RUN_RETENTION_DAYS")).toBe(String(c.runRetentionDays));
  expect(documented("WEFT_SANDBOX_TIMEOUT_MS")).toBe(String(c.sandbox.timeoutMs));
  expect(documented("WEFT_WEBHOOK_REPLY_TIMEOUT")).toBe(String(c.triggers.webhookReplyTimeoutMs / 1000));
  expect(documented("WEFT_POLL_INTERVAL")).toBe(String(c.triggers.pollIntervalSeconds));
});
