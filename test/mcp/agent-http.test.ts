import { afterAll, beforeAll, expect, test } from "bun:test";
import { ROOT_TOKEN, testApp, type TestApp } from "../support/app";
import { buildAndRunWebhookToHttp, echoServer } from "./agent";
import { httpClient, type McpTestClient } from "./client";

let t: TestApp;
let mcp: McpTestClient;
const echo = echoServer();

beforeAll(async () => {
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
  mcp = await httpClient("http://localhost/mcp", ROOT_TOKEN, (r) => t.app.handle(r));
});
afterAll(async () => {
  await mcp.close();
  echo.stop(true);
  await t.deps.engine.stop();
});

test("an agent builds webhook → http.send_request from projections, validates, publishes, runs with wait and reads the run (Streamable HTTP)", async () => {
  const { run } = await buildAndRunWebhookToHttp(mcp, `http://127.0.0.1:${echo.port}/hook`);
  expect(run.stepTotal).toBeGreaterThanOrEqual(1);
});
