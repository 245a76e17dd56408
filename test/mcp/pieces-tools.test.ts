import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { httpClient, type McpTestClient } from "./client";

let t: TestApp;
let mcp: McpTestClient;

beforeAll(async () => {
  t = await testApp();
  mcp = await httpClient("http://localhost/mcp", await t.token(["piece:read"]), (r) => t.app.handle(r));
});
afterAll(() => mcp.close());

describe("pieces tools", () => {
  test("tools/list names every pieces tool with an object input schema", async () => {
    const tools = await mcp.tools();
    const names = tools.map((x) => x.name);
    for (const name of ["list_pieces", "get_piece_summary", "get_action_schema", "get_trigger_schema", "resolve_dynamic_options"])
      expect(names).toContain(name);
    for (const tool of tools) expect(tool.inputSchema.type).toBe("object");
  });

  test("list_pieces answers the same body as GET /api/pieces", async () => {
    const answer = await mcp.call("list_pieces", { q: "webhook" });
    const http = await t.req("GET", "/api/pieces?q=webhook");
    expect(answer.isError).toBe(false);
    expect(answer.body).toEqual(http.body);
    expect(JSON.parse(answer.text)).toEqual(http.body);
  });

  test("get_action_schema narrows like the projection route", async () => {
    const answer = await mcp.call("get_action_schema", { pieceId: "http", actionId: "send_request", values: { auth_type: "bearer", nonsense: 1 } });
    const http = await t.req("GET", "/api/pieces/http/actions/send_request?auth_type=bearer&nonsense=1");
    expect(answer.body).toEqual(http.body);
    expect(Object.keys(answer.body.data.inputSchema.properties)).toContain("token");
    expect(Object.keys(answer.body.data.inputSchema.properties)).not.toContain("username");
    expect(answer.body.data.ignored).toEqual(["nonsense"]);
  });

  test("an unknown action is a tool error with the API's code and message", async () => {
    const answer = await mcp.call("get_action_schema", { pieceId: "webhook", actionId: "nope" });
    const http = await t.req("GET", "/api/pieces/webhook/actions/nope");
    expect(answer.isError).toBe(true);
    expect(answer.body).toEqual(http.body);
    expect(answer.body.error.code).toBe("NOT_FOUND");
  });

  test("arguments are validated like a strict body: unknown keys name the allowed ones", async () => {
    const answer = await mcp.call("get_piece_summary", { pieceId: "webhook", piece: "x" });
    expect(answer.isError).toBe(true);
    expect(answer.body.error.code).toBe("UNKNOWN_FIELD");
    expect(answer.body.error.message).toContain("pieceId");
  });
});
