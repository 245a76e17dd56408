import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { startServer, type ServerHandle } from "../support/server";
import { httpClient } from "./client";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};
const mcpHeaders = { accept: "application/json, text/event-stream" };

describe("the /mcp route", () => {
  test("without a token it answers 401 in the API envelope", async () => {
    const res = await t.req("POST", "/mcp", { token: null, body: initialize, headers: mcpHeaders });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
  });

  test("with a token, a bare JSON-RPC initialize gets the server's capabilities as JSON", async () => {
    const res = await t.req("POST", "/mcp", { body: initialize, headers: mcpHeaders });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body.result.serverInfo.name).toBe("weft");
    expect(res.body.result.capabilities.tools).toBeDefined();
  });

  test("GET and DELETE are refused with 405: the server is stateless", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await t.req(method, "/mcp");
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(res.body.error.message).toContain("POST /mcp");
    }
  });

  test("is documented in the OpenAPI contract under Service, for any authenticated caller", async () => {
    const doc = (await t.req("GET", "/api/openapi.json")).body;
    expect(doc.paths["/mcp"].post.tags).toEqual(["Service"]);
    expect(doc.paths["/mcp"].post["x-permission"]).toBe("authenticated");
  });

  test("a tool the token lacks the scope for is a tool error with the route's code and message", async () => {
    const token = await t.token(["piece:read"]);
    const mcp = await httpClient("http://localhost/mcp", token, (r) => t.app.handle(r));
    try {
      const answer = await mcp.call("create_workflow", { name: "nope" });
      const http = await t.req("POST", "/api/workflows", { token, body: { name: "nope" } });
      expect(http.status).toBe(403);
      expect(answer.isError).toBe(true);
      expect(answer.body).toEqual(http.body);
      // Nothing was written.
      expect((await t.req("GET", "/api/workflows?q=nope")).body.total).toBe(0);
    } finally {
      await mcp.close();
    }
  });

  test("an unknown tool is a tool error naming the tools", async () => {
    const mcp = await httpClient("http://localhost/mcp", await t.token("all"), (r) => t.app.handle(r));
    try {
      const answer = await mcp.call("make_coffee", {});
      expect(answer.isError).toBe(true);
      expect(answer.body.error.code).toBe("NOT_FOUND");
      expect(answer.body.error.message).toContain("create_workflow");
    } finally {
      await mcp.close();
    }
  });
});

describe("over a real socket", () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.stop());

  test("the SDK client connects to {url}/mcp with a bearer token and lists tools", async () => {
    const mcp = await httpClient(`${server.url}/mcp`, server.token);
    try {
      const names = (await mcp.tools()).map((x) => x.name);
      expect(names).toContain("list_pieces");
      expect(names).toContain("publish_workflow");
      expect((await mcp.call("list_pieces", { q: "http" })).body.data.map((p: any) => p.id)).toContain("http");
    } finally {
      await mcp.close();
    }
  });

  test("a wrong token is refused before any tool runs", async () => {
    await expect(httpClient(`${server.url}/mcp`, "weft_wrong_token_value_000")).rejects.toThrow();
  });
});
