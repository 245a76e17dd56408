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

/** The fixture piece at `version`; `name` gives it another package name (benchmarks install twenty of it). */
export async function fixturePackage(version: string, name = FIXTURE): Promise<string> {
  return bundlePackage("fixture-piece.ts", name, version, { FIXTURE_VERSION: JSON.stringify(version) });
}

export const OAUTH_FIXTURE = "@weft-test/piece-oauth-fixture";
export const OAUTH_FIXTURE_ID = "ap-weft-test-oauth-fixture";

/** The OAuth2 fixture piece, its authorize and token URLs pointing at a local authorization server. */
export async function oauthFixturePackage(authUrl: string, tokenUrl: string): Promise<string> {
  return bundlePackage("oauth-fixture-piece.ts", OAUTH_FIXTURE, "1.0.0", { AUTH_URL: JSON.stringify(authUrl), TOKEN_URL: JSON.stringify(tokenUrl) });
}

async function bundlePackage(source: string, name: string, version: string, define: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "weft-ap-fixture-"));
  const built = await Bun.build({ entrypoints: [join(ROOT, "test/fixtures/activepieces", source)], target: "node", format: "cjs", define });
  if (!built.success) throw new Error(`fixture build failed: ${built.logs.join("\n")}`);
  const [bundle] = built.outputs;
  if (!bundle) throw new Error("fixture build wrote nothing");
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src/index.js"), await bundle.text());
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version, main: "./src/index.js", dependencies: {}, files: ["src/index.js"] }));
  return dir;
}
