/**
 * The whole project (server, pieces, UI, tests, benches) type-checks: a type error fails the build like a failing test.
 * tsc checks incrementally (tsconfig.json's tsBuildInfoFile, under node_modules/.cache): after `npm run typecheck`
 * or an earlier run it re-checks what changed and what depends on it, ~2 s of CPU instead of ~17.
 */
import { expect, test } from "bun:test";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

test("tsc --noEmit reports no errors", () => {
  const result = Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "--noEmit", "-p", ROOT], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const output = `${result.stdout.toString()}${result.stderr.toString()}`;
  expect(
    output
      .split("\n")
      .filter((line) => line.includes("error TS"))
      .slice(0, 20),
  ).toEqual([]);
  expect(result.exitCode).toBe(0);
}, 120_000);
