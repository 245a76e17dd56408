/**
 * The contract and the router, checked in both directions: a served route that is
 * undocumented, or a documented route that is not served, fails the build.
 */
import { describe, expect, test, beforeAll } from "bun:test";
import { SCOPES } from "../../src/schema/scopes";
import { testApp, type TestApp } from "../support/app";

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await testApp();
  doc = (await t.req("GET", "/api/openapi.json", { token: null })).body;
});

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
const PERMISSIONS = new Set<string>([...SCOPES, "public", "authenticated"]);

describe("OpenAPI contract", () => {
  test("is OpenAPI 3.1 with tags in the order of resource groups", () => {
    expect(doc.openapi).toStartWith("3.1");
    const names = doc.tags.map((tag: any) => tag.name);
    expect(names.slice(0, 8)).toEqual(["Workflows", "Lifecycle", "Runs", "Pieces", "Connections", "Folders", "Templates", "Editor Internals"]);
  });

  test("every served route is documented, with x-permission and a security requirement", () => {
    const served = t.app.routes.filter((r) => r.method !== "HEAD" && r.method !== "OPTIONS");
    expect(served.length).toBeGreaterThan(5);
    const missing: string[] = [];
    for (const route of served) {
      const operation = doc.paths[toOpenApiPath(route.path)]?.[route.method.toLowerCase()];
      if (!operation) {
        missing.push(`${route.method} ${route.path}`);
        continue;
      }
      expect(PERMISSIONS.has(operation["x-permission"])).toBe(true);
      expect(Array.isArray(operation.security)).toBe(true);
      if (operation["x-permission"] === "public") expect(operation.security).toEqual([]);
      else expect(operation.security.length).toBeGreaterThan(0);
      expect(operation.tags?.length).toBeGreaterThan(0);
      expect(doc.tags.map((tag: any) => tag.name)).toContain(operation.tags[0]);
    }
    expect(missing).toEqual([]);
  });

  test("every documented route is served by the router", async () => {
    const notServed: string[] = [];
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const method of Object.keys(operations)) {
        const concrete = path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
        const res = await t.app.handle(new Request(`http://localhost${concrete}`, { method: method.toUpperCase() }));
        const text = await res.text();
        if (res.status === 404 && text.includes("no route for")) notServed.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(notServed).toEqual([]);
  });

  test("the human docs page is served by Weft itself and reads this contract", async () => {
    const res = await t.req("GET", "/api/docs", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).not.toContain("cdn.");
    const script = res.text.match(/src="(\/api\/docs\/assets\/[^"]+\.js)"/)?.[1];
    expect(script).toBeDefined();
    expect((await t.req("GET", script!, { token: null })).text).toContain("/api/openapi.json");
  });
});
