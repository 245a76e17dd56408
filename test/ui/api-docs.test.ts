/**
 * The API reference at /api/docs: how it is served (its own page and assets, a strict CSP, gzip, the
 * total weight) and what it makes of this server's own contract (groups, search, examples, the
 * request Try it sends). The page in a real browser is test/e2e/api-docs.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import {
  buildTryRequest,
  curlCommand,
  exampleFor,
  groupByTag,
  type OpenApiDocument,
  type OperationEntry,
  requestExample,
  responseExample,
  search,
} from "../../public/src/api-docs/contract";
import { testApp, type TestApp } from "../support/app";

let t: TestApp;
let html: string;
let doc: OpenApiDocument;
let groups: ReturnType<typeof groupByTag>;
beforeAll(async () => {
  t = await testApp();
  html = (await t.req("GET", "/api/docs", { token: null })).text;
  doc = (await t.req("GET", "/api/openapi.json", { token: null })).body;
  groups = groupByTag(doc);
});

const assetPaths = () => [...html.matchAll(/(?:src|href)="(\/api\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
const gzipRequest = (path: string) => t.app.handle(new Request(`http://localhost${path}`, { headers: { "accept-encoding": "gzip, br" } }));
const find = (method: string, path: string): OperationEntry =>
  groups.flatMap((group) => group.operations).find((entry) => entry.method === method && entry.path === path)!;

describe("serving /api/docs", () => {
  test("answers its own HTML shell under a CSP that allows only this server's scripts and connections", async () => {
    const res = await t.req("GET", "/api/docs", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain('data-weft-ui="api-docs"');
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toContain("unsafe");
    expect(assetPaths().some((path) => path.endsWith(".js"))).toBe(true);
    expect(assetPaths().some((path) => path.endsWith(".css"))).toBe(true);
    expect(res.text).not.toMatch(/https?:\/\//); // nothing from a CDN: works offline
  });

  test("its assets answer gzipped and immutable; an unknown one the 404 envelope", async () => {
    for (const path of assetPaths()) {
      const res = await gzipRequest(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect(res.headers.get("content-type")).toContain(path.endsWith(".js") ? "javascript" : "css");
    }
    const missing = await t.req("GET", "/api/docs/assets/main-nope.js", { token: null });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("NOT_FOUND");
    expect(missing.body.error.message).toContain("/api/docs");
  });

  test("the contract it reads is gzipped when accepted and the same JSON either way", async () => {
    const zipped = await gzipRequest("/api/openapi.json");
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("content-type")).toContain("application/json");
    const unzipped = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await zipped.arrayBuffer()))));
    expect(unzipped).toEqual(doc as unknown as Record<string, unknown>);
  });

  test("the whole page (shell, assets and contract) weighs under 1 MB gzipped", async () => {
    let bytes = Bun.gzipSync(new TextEncoder().encode(html)).length;
    for (const path of [...assetPaths(), "/api/openapi.json"]) bytes += (await (await gzipRequest(path)).arrayBuffer()).byteLength;
    console.log(`/api/docs weighs ${(bytes / 1024).toFixed(1)} KiB gzipped (shell, ${assetPaths().length} assets, the contract)`);
    expect(bytes).toBeLessThan(1024 * 1024);
  });

  test("the builder's shell at / does not load it", async () => {
    const builder = (await t.req("GET", "/", { token: null })).text;
    expect(builder).not.toContain("/api/docs/assets/");
    for (const path of assetPaths()) expect((await t.req("GET", path.replace("/api/docs", ""), { token: null })).status).toBe(404);
  });
});

describe("what the page makes of the contract", () => {
  test("every operation appears once, grouped by tag in the contract's tag order, with its scope", () => {
    const count = Object.values(doc.paths).reduce((sum, operations) => sum + Object.keys(operations).length, 0);
    expect(groups.reduce((sum, group) => sum + group.operations.length, 0)).toBe(count);
    const order = (doc.tags ?? []).map((tag) => tag.name);
    expect(groups.map((group) => group.name)).toEqual(order.filter((name) => groups.some((group) => group.name === name)));
    expect(find("get", "/api/runs")).toMatchObject({ tag: "Runs", scope: "run:read", id: "op-get-api-runs" });
  });

  test("search matches every word against method, path, summary, tag and scope", () => {
    const found = (query: string) => search(groups, query).flatMap((group) => group.operations.map((entry) => `${entry.method.toUpperCase()} ${entry.path}`));
    expect(found("runs")).toContain("GET /api/runs");
    expect(found("runs")).not.toContain("GET /api/tokens");
    expect(found("POST workflows").every((op) => op.startsWith("POST ") && op.includes("workflows"))).toBe(true);
    expect(found("run:read").length).toBeGreaterThan(1);
    expect(found("list the workspace's runs")).toEqual(["GET /api/runs"]);
    expect(found("Identity tokens")).toContain("POST /api/tokens");
    expect(found("no such thing at all")).toEqual([]);
    expect(found("  ").length).toBe(groups.reduce((sum, group) => sum + group.operations.length, 0));
  });

  test("a response example is made from the schema, with formats, and stops at a recursive step tree", () => {
    const runs = responseExample(doc, find("get", "/api/runs").operation.responses?.["200"]?.content?.["application/json"]) as any;
    expect(Object.keys(runs).sort()).toEqual(["data", "pagination"]);
    expect(runs.data[0].id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(runs.data[0].startedAt))).toBe(false);
    const workflow = responseExample(doc, find("get", "/api/workflows/{id}").operation.responses?.["200"]?.content?.["application/json"]) as any;
    expect(workflow.data.definition.trigger.nextAction).toBeDefined();
    expect(JSON.stringify(workflow).length).toBeLessThan(200_000);
  });

  test("the example body of POST /api/workflows is accepted by the server as it is", async () => {
    const body = requestExample(doc, find("post", "/api/workflows").operation.requestBody?.content?.["application/json"]);
    const res = await t.req("POST", "/api/workflows", { body });
    expect(res.status).toBe(201);
  });

  test("a body with no required property shows its top-level properties", () => {
    const body = requestExample(doc, find("put", "/api/workflows/{id}").operation.requestBody?.content?.["application/json"]) as Record<string, unknown>;
    expect(Object.keys(body)).toContain("name");
    expect(Object.keys(body)).toContain("definition");
  });

  test("exampleFor prefers the schema's own example, const, default and enum", () => {
    expect(exampleFor(doc, { type: "string", example: "given" })).toBe("given");
    expect(exampleFor(doc, { const: "fixed" })).toBe("fixed");
    expect(exampleFor(doc, { type: "integer", default: 20 })).toBe(20);
    expect(exampleFor(doc, { type: "string", enum: ["draft", "live"] })).toBe("draft");
    expect(exampleFor(doc, { anyOf: [{ type: "null" }, { type: "string", format: "email" }] })).toBe("ada@example.com");
    expect(exampleFor(doc, { type: ["integer", "null"], minimum: 1 })).toBe(1);
  });
});

describe("the request Try it sends", () => {
  const origin = "http://127.0.0.1:8080";

  test("fills path parameters (encoded), adds the query values given and the token as a bearer", () => {
    const request = buildTryRequest(find("get", "/api/runs/{id}"), { origin, values: { id: "a/b c" }, body: "", token: " weft_abc " });
    expect(request.url).toBe(`${origin}/api/runs/a%2Fb%20c`);
    expect(request.init).toMatchObject({ method: "GET", credentials: "omit", headers: { authorization: "Bearer weft_abc" } });
    const list = buildTryRequest(find("get", "/api/runs"), { origin, values: { status: "failed", limit: "" }, body: "", token: "" });
    expect(list.url).toBe(`${origin}/api/runs?status=failed`);
    expect(list.init.headers.authorization).toBeUndefined();
  });

  test("refuses a missing path parameter, a body that is not JSON, and a missing required body", () => {
    expect(() => buildTryRequest(find("get", "/api/runs/{id}"), { origin, values: {}, body: "", token: "" })).toThrow('Fill in the path parameter "id".');
    expect(() => buildTryRequest(find("post", "/api/workflows"), { origin, values: {}, body: "{name:", token: "" })).toThrow("The body is not valid JSON");
    expect(() => buildTryRequest(find("post", "/api/workflows"), { origin, values: {}, body: " ", token: "" })).toThrow("needs a request body");
  });

  test("sends a JSON body with its content type, and shows it as curl without the token", () => {
    const request = buildTryRequest(find("post", "/api/workflows"), { origin, values: {}, body: `{"name":"Ada's"}`, token: "weft_secret" });
    expect(request.init.headers["content-type"]).toBe("application/json");
    expect(request.init.body).toBe(`{"name":"Ada's"}`);
    const curl = curlCommand(request);
    expect(curl).toBe(
      `curl -X POST '${origin}/api/workflows' -H "Authorization: Bearer $WEFT_TOKEN" -H 'content-type: application/json' --data '{"name":"Ada'\\''s"}'`,
    );
    expect(curl).not.toContain("weft_secret");
  });
});
