/** Serving the UI: the shell at /, content-hashed assets (gzipped, immutable), 404s in the envelope, first-load size. */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";

let t: TestApp;
let html: string;
beforeAll(async () => {
  t = await testApp();
  html = (await t.req("GET", "/", { token: null })).text;
});

const assetPaths = () => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);

describe("UI serving", () => {
  test("/ answers the shell with the root element, a CSP, and the hashed script and stylesheet", async () => {
    const res = await t.req("GET", "/", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.text).toContain("data-weft-ui");
    expect(assetPaths().some((p) => /\/assets\/main-[a-z0-9]+\.js$/.test(p))).toBe(true);
    expect(assetPaths().some((p) => p.endsWith(".css"))).toBe(true);
    expect(res.text).not.toMatch(/https?:\/\/(?!localhost)/); // no CDN: works offline
  });

  test("assets are served gzipped when accepted, cached as immutable, with their type", async () => {
    for (const path of assetPaths()) {
      const res = await t.app.handle(new Request(`http://localhost${path}`, { headers: { "accept-encoding": "gzip, br" } }));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect(res.headers.get("content-type")).toContain(path.endsWith(".js") ? "javascript" : "css");
      const plain = await t.app.handle(new Request(`http://localhost${path}`));
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect((await plain.text()).length).toBeGreaterThan(100);
    }
  });

  test("the first load of the editor transfers less than 250 KB gzipped", async () => {
    let bytes = new TextEncoder().encode(html).length;
    for (const path of assetPaths()) {
      const res = await t.app.handle(new Request(`http://localhost${path}`, { headers: { "accept-encoding": "gzip" } }));
      bytes += (await res.arrayBuffer()).byteLength;
    }
    expect(bytes).toBeLessThan(250 * 1024);
  });

  test("an unknown asset and an unknown path answer the JSON 404 envelope", async () => {
    const asset = await t.req("GET", "/assets/nope-123.js", { token: null });
    expect(asset.status).toBe(404);
    expect(asset.body.error.code).toBe("NOT_FOUND");
    expect(asset.body.error.message).toContain("content-hashed");
    const other = await t.req("GET", "/workflows/123", { token: null });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("NOT_FOUND");
  });
});
