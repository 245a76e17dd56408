/**
 * `weft serve` with a PostgreSQL it cannot use stops at once with a message naming the database (without its
 * password) and what to check, not a stack trace. No PostgreSQL needed: nothing listens on port 1.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

test("a WEFT_DATABASE_URL nothing answers at stops weft serve with a message, its password left out", async () => {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-badurl-")),
      WEFT_PORT: "0",
      WEFT_DATABASE_URL: "postgres://weft:hunter2@127.0.0.1:1/weft",
      WEFT_LOG_LEVEL: "warn",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(2);
  expect(stderr).toContain("weft: cannot use the database WEFT_DATABASE_URL names (postgres://weft:***@127.0.0.1:1/weft)");
  expect(stderr).toContain("check that PostgreSQL listens there");
  expect(stderr).not.toContain("hunter2");
  expect(stderr).not.toContain("    at ");
});
