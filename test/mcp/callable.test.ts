import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROOT_TOKEN, testApp, type TestApp } from "../support/app";
import { httpClient, type McpTestClient } from "./client";

let t: TestApp;
let mcp: McpTestClient;

/** A callable workflow: takes {name, times}, returns a greeting through subflows.return_response. */
const greeter = (returned: unknown) => ({
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "callable",
    pieceId: "subflows",
    actionId: "callable",
    config: {
      fields: [
        { name: "name", type: "string", required: true, description: "who to greet" },
        { name: "times", type: "integer" },
      ],
    },
    nextAction: { name: "answer", type: "PIECE", pieceId: "subflows", actionId: "return_response", config: { value: returned } },
  },
});

beforeAll(async () => {
  t = await testApp();
  mcp = await httpClient("http://localhost/mcp", ROOT_TOKEN, (r) => t.app.handle(r));
});
afterAll(async () => {
  await mcp.close();
  await t.deps.engine.stop();
});

describe("callable workflows as tools", () => {
  let id: string;

  test("a published callable workflow appears as a tool with the trigger's input schema", async () => {
    const created = await mcp.call("create_workflow", {
      name: "Greet Someone",
      description: "Greets a person by name",
      definition: greeter({ greeting: "{{ 'hello ' & trigger.body.name }}" }),
    });
    id = created.body.data.id;
    expect((await mcp.tools()).map((x) => x.name)).not.toContain("greet_someone"); // a draft is not a tool
    expect((await mcp.call("publish_workflow", { id })).body.data.status).toBe("active");
    const tool = (await mcp.tools()).find((x) => x.name === "greet_someone");
    expect(tool).toBeDefined();
    expect(tool!.description).toContain("Greets a person by name");
    expect(tool!.inputSchema).toMatchObject({
      type: "object",
      required: ["name"],
      properties: { name: { type: "string", description: "who to greet" }, times: { type: "integer" } },
    });
  });

  test("calling it runs the live version (triggerType mcp) and returns the return_response value", async () => {
    const answer = await mcp.call("greet_someone", { name: "Ada" });
    expect(answer.isError).toBe(false);
    expect(answer.body.data).toEqual({ greeting: "hello Ada" });
    const run = (await mcp.call("get_run", { id: answer.body.runId })).body.data;
    expect(run).toMatchObject({ workflowId: id, triggerType: "mcp", environment: "production", status: "completed" });
  });

  test("its input is checked against the declared fields", async () => {
    const missing = await mcp.call("greet_someone", { times: 2 });
    expect(missing.isError).toBe(true);
    expect(missing.body.error.code).toBe("VALIDATION_FAILED");
    expect(missing.body.error.message).toContain("name");
    const wrongType = await mcp.call("greet_someone", { name: "Ada", times: "twice" });
    expect(wrongType.body.error.code).toBe("VALIDATION_FAILED");
  });

  test("without workflow:run the callable tools are not offered", async () => {
    const reader = await httpClient("http://localhost/mcp", await t.token(["workflow:read", "piece:read"]), (r) => t.app.handle(r));
    try {
      expect((await reader.tools()).map((x) => x.name)).not.toContain("greet_someone");
      const answer = await reader.call("greet_someone", { name: "Ada" });
      expect(answer.isError).toBe(true);
      expect(answer.body.error.code).toBe("NOT_FOUND");
    } finally {
      await reader.close();
    }
  });

  test("unpublishing removes the tool; republishing brings it back", async () => {
    await mcp.call("unpublish_workflow", { id });
    expect((await mcp.tools()).map((x) => x.name)).not.toContain("greet_someone");
    const gone = await mcp.call("greet_someone", { name: "Ada" });
    expect(gone.body.error.code).toBe("NOT_FOUND");
    await mcp.call("publish_workflow", { id });
    expect((await mcp.tools()).map((x) => x.name)).toContain("greet_someone");
  });

  test("another workspace does not see the tool", async () => {
    const other = await t.otherWorkspace();
    const theirs = await httpClient("http://localhost/mcp", other.token, (r) => t.app.handle(r));
    try {
      expect((await theirs.tools()).map((x) => x.name)).not.toContain("greet_someone");
    } finally {
      await theirs.close();
    }
  });

  test("a failing callable run is a tool error naming the run", async () => {
    const created = await mcp.call("create_workflow", { name: "Broken", definition: greeter("{{ $error('boom') }}") });
    await mcp.call("publish_workflow", { id: created.body.data.id });
    const answer = await mcp.call("broken", { name: "x" });
    expect(answer.isError).toBe(true);
    expect(answer.body.error.message).toContain("failed");
    expect(answer.body.error.details.runId).toBeString();
  });
});
