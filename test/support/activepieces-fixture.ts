/**
 * The fixture Activepieces piece (test/fixtures/activepieces/fixture-piece.ts, written with the published
 * @activepieces/pieces-framework) bundled into a package folder the way Activepieces publishes theirs: one
 * CommonJS file, no dependencies. Publish it to the test registry, or pack it into a tarball.
 *   const dir = await fixturePackage("1.0.0");
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
export const FIXTURE = "@weft-test/piece-fixture";
export const FIXTURE_ID = "ap-weft-test-fixture";

export async function fixturePackage(version: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "weft-ap-fixture-"));
  const built = await Bun.build({
    entrypoints: [join(ROOT, "test/fixtures/activepieces/fixture-piece.ts")],
    target: "node",
    format: "cjs",
    define: { FIXTURE_VERSION: JSON.stringify(version) },
  });
  if (!built.success) throw new Error(`fixture build failed: ${built.logs.join("\n")}`);
  const [bundle] = built.outputs;
  if (!bundle) throw new Error("fixture build wrote nothing");
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src/index.js"), await bundle.text());
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: FIXTURE, version, main: "./src/index.js", dependencies: {}, files: ["src/index.js"] }));
  return dir;
}
