/**
 * The piece catalog (docs/activepieces.md, "The catalog"): what the configured npm registry serves,
 * browsed through its search API. The registry is a loopback fixture speaking the npm registry's
 * documented protocol (test/support/npm-registry.ts: packuments, tarballs and `/-/v1/search`), so
 * install, search and paging run for real with no network. The cache's TTL runs on a fake clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "../../src/lib/clock";
import { type CatalogIndex, loadCatalogIndex, PieceCatalog } from "../../src/pieces-runtime/activepieces";
import { fixturePackage } from "../support/activepieces-fixture";
import { testApp, type TestApp } from "../support/app";
import { type NpmRegistry, startNpmRegistry } from "../support/npm-registry";
import { httpClient } from "../mcp/client";

const FIXTURE = "@activepieces/piece-weft-fixture";
const OTHERS = ["@activepieces/piece-alpha", "@activepieces/piece-beta", "@activepieces/piece-gamma", "@activepieces/piece-delta"];

let registry: NpmRegistry;
let t: TestApp;

beforeAll(async () => {
  registry = await startNpmRegistry();
  await registry.publish(await fixturePackage("1.0.0", FIXTURE));
  await registry.publish(await fixturePackage("1.1.0", FIXTURE));
  registry.describe(FIXTURE, "Echoes what it is given, for Weft's tests", ["activepieces", "testing"]);
  for (const name of OTHERS) {
    await registry.publish(await fixturePackage("2.0.0", name));
    registry.describe(name, `The ${name.slice(20)} service`);
  }
  // Not a piece package: a search may find it, the catalog never lists it.
  await registry.publish(await fixturePackage("1.0.0", "@activepieces/pieces-framework-like"));
  t = await testApp({ WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
}, 90_000);

afterAll(() => {
  t?.deps.piecePackages.stop();
  registry?.stop();
});

describe("GET /api/pieces/catalog", () => {
  test("lists the registry's pieces, one search request per page, with paging", async () => {
    const before = registry.searches().length;
    const first = await t.req("GET", "/api/pieces/catalog?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.source).toBe("registry");
    // The registry's count of what its search found: the framework-like package is counted but never listed.
    expect(first.body.total).toBe(6);
    expect(first.body.data.map((p: { name: string }) => p.name)).toEqual(["@activepieces/piece-alpha", "@activepieces/piece-beta"]);
    const third = await t.req("GET", "/api/pieces/catalog?limit=2&page=3");
    expect(third.body.data.map((p: { name: string }) => p.name)).toEqual([FIXTURE]);
    const asked = registry.searches().slice(before);
    expect(asked).toHaveLength(2);
    expect(new URLSearchParams(asked[1]).get("from")).toBe("4");
    expect(new URLSearchParams(asked[1]).get("size")).toBe("2");
    // The same page again comes from the cache.
    await t.req("GET", "/api/pieces/catalog?limit=2");
    expect(registry.searches().length - before).toBe(2);
  });

  test("searches names and descriptions; a piece not installed shows no counts until it is", async () => {
    const res = await t.req("GET", "/api/pieces/catalog?q=echoes");
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toEqual({
      name: FIXTURE,
      pieceId: "ap-weft-fixture",
      displayName: "Weft Fixture",
      description: "Echoes what it is given, for Weft's tests",
      version: "1.1.0",
      logoUrl: "https://cdn.activepieces.com/pieces/weft-fixture.png",
      categories: [],
      actions: null,
      triggers: null,
      authKind: null,
      installedVersions: [],
      updateAvailable: false,
    });
    expect((await t.req("GET", "/api/pieces/catalog?q=nothing-like-this")).body).toMatchObject({ data: [], total: 0 });
  });

  test("installing from the catalog uses the install route; an older version installed shows the update", async () => {
    const installed = await t.req("POST", "/api/pieces/packages", { body: { package: `${FIXTURE}@1.0.0` } });
    expect(installed.status).toBe(201);
    const res = await t.req("GET", "/api/pieces/catalog?q=weft");
    expect(res.body.data[0]).toMatchObject({
      name: FIXTURE,
      version: "1.1.0",
      installedVersions: ["1.0.0"],
      updateAvailable: true,
      // What the installed piece told about itself.
      logoUrl: "https://example.invalid/logo.png",
      categories: ["DEVELOPER_TOOLS"],
      actions: 8,
      triggers: 1,
      authKind: "CUSTOM_AUTH",
    });
    // The page's categories: the installed piece's and those of the bundled index (the pieces' own words).
    const indexed = (loadCatalogIndex()?.pieces ?? []).flatMap((piece) => piece.categories ?? []);
    expect(res.body.categories).toEqual([...new Set([...indexed, "DEVELOPER_TOOLS"])].sort());
    const upgraded = await t.req("POST", "/api/pieces/packages/ap-weft-fixture/upgrade");
    expect(upgraded.body.data.version).toBe("1.1.0");
    const after = await t.req("GET", "/api/pieces/catalog?q=weft");
    expect(after.body.data[0]).toMatchObject({ installedVersions: ["1.1.0", "1.0.0"], updateAvailable: false });
    // A category is Activepieces' own: the installed pieces (and the index) know it.
    const byCategory = await t.req("GET", "/api/pieces/catalog?category=DEVELOPER_TOOLS");
    const indexedTools = (loadCatalogIndex()?.pieces ?? []).filter((p) => p.categories?.includes("DEVELOPER_TOOLS")).map((p) => p.name);
    expect(byCategory.body.data.map((p: { name: string }) => p.name).sort()).toEqual([...indexedTools, FIXTURE].sort());
  }, 60_000);

  test("browsing takes piece:read; bad input answers 400 naming it", async () => {
    const reader = await t.token(["piece:read"]);
    expect((await t.req("GET", "/api/pieces/catalog", { token: reader })).status).toBe(200);
    // Installing stays workspace:admin.
    expect((await t.req("POST", "/api/pieces/packages", { token: reader, body: { package: FIXTURE } })).status).toBe(403);
    const none = await t.token(["workflow:read"]);
    expect((await t.req("GET", "/api/pieces/catalog", { token: none })).status).toBe(403);
    const bad = await t.req("GET", "/api/pieces/catalog?category=not%20a%20category");
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("category");
  });
});

describe("MCP: search_catalog and install_piece", () => {
  test("an agent searches the catalog (piece:read) and installs from it (workspace:admin)", async () => {
    const reader = await httpClient("http://localhost/mcp", await t.token(["piece:read"]), (r) => t.app.handle(r));
    try {
      const found = await reader.call("search_catalog", { q: "gamma" });
      expect(found.isError).toBe(false);
      expect(found.body).toEqual((await t.req("GET", "/api/pieces/catalog?q=gamma")).body);
      expect(found.body.data.map((p: { name: string }) => p.name)).toEqual(["@activepieces/piece-gamma"]);
      const refused = await reader.call("install_piece", { package: "@activepieces/piece-gamma" });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("workspace:admin");
    } finally {
      await reader.close();
    }
    const admin = await httpClient("http://localhost/mcp", await t.token(["piece:read", "workspace:admin"]), (r) => t.app.handle(r));
    try {
      const installed = await admin.call("install_piece", { package: "@activepieces/piece-gamma" });
      expect(installed.isError).toBe(false);
      expect(installed.body.data).toMatchObject({ name: "@activepieces/piece-gamma", version: "2.0.0", pieceId: "ap-gamma" });
      const after = await admin.call("search_catalog", { q: "gamma" });
      expect(after.body.data[0].installedVersions).toEqual(["2.0.0"]);
    } finally {
      await admin.close();
    }
  }, 60_000);
});

describe("PieceCatalog", () => {
  const index: CatalogIndex = {
    generatedAt: "2026-11-01T00:00:00.000Z",
    registry: "https://registry.npmjs.org",
    pieces: [
      {
        name: "@activepieces/piece-slack",
        version: "0.17.9",
        displayName: "Slack",
        description: "Channels and messages",
        categories: ["COMMUNICATION"],
        actions: 72,
        triggers: 14,
        authKind: "CUSTOM_AUTH",
      },
      {
        name: "@activepieces/piece-mysql",
        version: "0.2.7",
        displayName: "MySQL",
        description: "The database",
        categories: ["DEVELOPER_TOOLS"],
        actions: 6,
        triggers: 0,
        authKind: "CUSTOM_AUTH",
      },
    ],
  };

  test("a page is kept until its TTL passes on the server's clock: a newer version then shows", async () => {
    const clock = new FakeClock();
    const catalog = new PieceCatalog({ registryUrl: registry.url, index: null, installed: () => [], now: () => clock.now(), ttlMs: 60_000 });
    const before = registry.searches().length;
    const first = await catalog.search({ q: "alpha", offset: 0, limit: 10 });
    expect(first.data[0]?.version).toBe("2.0.0");
    await registry.publish(await fixturePackage("2.1.0", "@activepieces/piece-alpha"));
    clock.advance(59_000);
    expect((await catalog.search({ q: "alpha", offset: 0, limit: 10 })).data[0]?.version).toBe("2.0.0");
    expect(registry.searches().length - before).toBe(1);
    clock.advance(2_000);
    expect((await catalog.search({ q: "alpha", offset: 0, limit: 10 })).data[0]?.version).toBe("2.1.0");
    expect(registry.searches().length - before).toBe(2);
  }, 30_000);

  test("when the registry cannot be reached the bundled index answers, with its age", async () => {
    const stopped = await startNpmRegistry();
    const url = stopped.url;
    stopped.stop();
    const catalog = new PieceCatalog({ registryUrl: url, index, installed: () => [], now: () => Date.now() });
    const page = await catalog.search({ q: "messages", offset: 0, limit: 10 });
    expect(page.source).toBe("index");
    expect(page.indexGeneratedAt).toBe("2026-11-01T00:00:00.000Z");
    expect(page.offlineReason).toContain("could not be reached");
    expect(page.data).toEqual([
      {
        name: "@activepieces/piece-slack",
        pieceId: "ap-slack",
        displayName: "Slack",
        description: "Channels and messages",
        version: "0.17.9",
        logoUrl: "https://cdn.activepieces.com/pieces/slack.png",
        categories: ["COMMUNICATION"],
        actions: 72,
        triggers: 14,
        authKind: "CUSTOM_AUTH",
        installedVersions: [],
        updateAvailable: false,
      },
    ]);
    expect(page.categories).toEqual(["COMMUNICATION", "DEVELOPER_TOOLS"]);
  });

  test("the index's counts are shown only for the version it measured; its names add logos and display names", async () => {
    const measured = (version: string): CatalogIndex => ({
      generatedAt: "2026-11-01T00:00:00.000Z",
      registry: registry.url,
      pieces: [{ name: "@activepieces/piece-beta", version, displayName: "Beta Cloud", actions: 3, triggers: 1, authKind: null }],
    });
    const older = new PieceCatalog({ registryUrl: registry.url, index: measured("1.0.0"), installed: () => [], now: () => Date.now() });
    expect((await older.search({ q: "beta", offset: 0, limit: 5 })).data[0]).toMatchObject({
      displayName: "Beta Cloud",
      version: "2.0.0",
      actions: null,
      triggers: null,
      authKind: null,
    });
    const same = new PieceCatalog({ registryUrl: registry.url, index: measured("2.0.0"), installed: () => [], now: () => Date.now() });
    expect((await same.search({ q: "beta", offset: 0, limit: 5 })).data[0]).toMatchObject({ version: "2.0.0", actions: 3, triggers: 1, authKind: "none" });
  });

  test("a registry that answers the search with an error is offline too, and left alone for 30 s", async () => {
    const clock = new FakeClock();
    const catalog = new PieceCatalog({ registryUrl: registry.url, index, installed: () => [], now: () => clock.now() });
    registry.failSearch(503);
    try {
      const page = await catalog.search({ offset: 0, limit: 1 });
      expect(page).toMatchObject({ source: "index", total: 2, offlineReason: expect.stringContaining("HTTP 503") });
      expect(page.data.map((p) => p.displayName)).toEqual(["MySQL"]);
    } finally {
      registry.failSearch(0);
    }
    const before = registry.searches().length;
    clock.advance(29_000);
    expect((await catalog.search({ q: "alpha", offset: 0, limit: 1 })).source).toBe("index");
    expect(registry.searches().length).toBe(before);
    clock.advance(2_000);
    expect((await catalog.search({ q: "alpha", offset: 0, limit: 1 })).source).toBe("registry");
    expect(registry.searches().length).toBe(before + 1);
  });

  test("the committed index is small and says when and from where it was made", () => {
    const bundled = loadCatalogIndex();
    expect(bundled).not.toBeNull();
    expect(Number.isNaN(Date.parse(bundled!.generatedAt))).toBe(false);
    expect(bundled!.pieces.length).toBeGreaterThan(10);
    for (const piece of bundled!.pieces) expect(piece.name).toMatch(/^@activepieces\/piece-[a-z0-9-]+$/);
    const dir = mkdtempSync(join(tmpdir(), "weft-index-"));
    writeFileSync(join(dir, "broken.json"), JSON.stringify({ pieces: "no" }));
    expect(loadCatalogIndex(join(dir, "broken.json"))).toBeNull();
    expect(loadCatalogIndex(join(dir, "absent.json"))).toBeNull();
  });
});
