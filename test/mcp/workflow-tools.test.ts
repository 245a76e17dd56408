import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { httpClient, type McpTestClient } from "./client";

let t: TestApp;
let mcp: McpTestClient;

const greet = {
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "webhook",
    pieceId: "webhook",
    actionId: "catch_webhook",
    config: {},
    nextAction: { name: "greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { greeting: "hello {{trigger.body.name}}" } } },
  },
};

beforeAll(async () => {
  t = await testApp();
  mcp = await httpClient("http://localhost/mcp", await t.token("all"), (r) => t.app.handle(r));
});
afterAll(() => mcp.close());

describe("workflow and lifecycle tools", () => {
  test("create → update → validate → publish → versions → restore → unpublish, as the API does", async () => {
    const created = await mcp.call("create_workflow", { name: "Greeter", definition: greet });
    expect(created.isError).toBe(false);
    const wf = created.body.data;
    expect(wf).toMatchObject({ name: "Greeter", status: "draft", triggerType: "webhook" });
    expect(wf.definition.trigger.nextAction.pieceVersion).toBeTruthy();

    const read = await t.req("GET", `/api/workflows/${wf.id}`);
    expect((await mcp.call("get_workflow", { id: wf.id })).body.data.definitionRev).toBe(read.body.data.definitionRev);

    const renamed = await mcp.call("update_workflow", { id: wf.id, name: "Greeter 2", expectedRev: wf.definitionRev });
    expect(renamed.body.data.name).toBe("Greeter 2");
    const stale = await mcp.call("update_workflow", { id: wf.id, name: "lost", expectedRev: wf.definitionRev });
    expect(stale.isError).toBe(true);
    expect(stale.body.error.code).toBe("REVISION_CONFLICT");

    const diagnostics = await mcp.call("validate_workflow", { definition: greet });
    expect(diagnostics.body.data.valid).toBe(true);

    const published = await mcp.call("publish_workflow", { id: wf.id });
    expect(published.body.data.status).toBe("active");
    const versions = await mcp.call("list_versions", { id: wf.id });
    expect(versions.body.total).toBe(1);
    const version = await mcp.call("get_version", { id: wf.id, versionId: versions.body.data[0].id });
    expect(version.body.data.definition.trigger.type).toBe("webhook");

    await mcp.call("update_workflow", { id: wf.id, definition: { ...greet, trigger: { ...greet.trigger, nextAction: undefined } } });
    const restored = await mcp.call("restore_version", { id: wf.id, versionId: versions.body.data[0].id });
    expect(restored.body.data.hasUnpublishedChanges).toBe(false);

    const paused = await mcp.call("unpublish_workflow", { id: wf.id });
    expect(paused.body.data.status).toBe("paused");
    const listed = await mcp.call("list_workflows", { status: "paused", limit: 5 });
    expect(listed.body.data.map((w: any) => w.id)).toContain(wf.id);
  });

  test("a definition the gate refuses comes back as diagnostics, and publish refuses it with the API's error", async () => {
    const bad = {
      schemaVersion: 2,
      trigger: { name: "trigger", type: "manual", nextAction: { name: "x", type: "PIECE", pieceId: "data", actionId: "nope", config: {} } },
    };
    const diagnostics = await mcp.call("validate_workflow", { definition: bad });
    expect(diagnostics.body.data.valid).toBe(false);
    expect(JSON.stringify(diagnostics.body.data.errors)).toContain("set_fields");
    const created = await mcp.call("create_workflow", { name: "bad", definition: bad });
    const refused = await mcp.call("publish_workflow", { id: created.body.data.id });
    const http = await t.req("POST", `/api/workflows/${created.body.data.id}/publish`);
    expect(refused.isError).toBe(true);
    expect(refused.body.error.code).toBe("NOT_PUBLISHABLE");
    expect(refused.body.error).toEqual(http.body.error);
  });

  test("an unknown key in the definition is refused like the route refuses it", async () => {
    const answer = await mcp.call("create_workflow", { name: "x", definition: { ...greet, trigger: { ...greet.trigger, bogus: 1 } } });
    const http = await t.req("POST", "/api/workflows", { body: { name: "x", definition: { ...greet, trigger: { ...greet.trigger, bogus: 1 } } } });
    expect(answer.isError).toBe(true);
    expect(answer.body.error.code).toBe("UNKNOWN_FIELD");
    expect(http.body.error.code).toBe("UNKNOWN_FIELD");
  });

  test("another workspace's workflow is not found", async () => {
    const other = await t.otherWorkspace();
    const created = await t.req("POST", "/api/workflows", { token: other.token, body: { name: "theirs" } });
    const answer = await mcp.call("get_workflow", { id: created.body.data.id });
    expect(answer.isError).toBe(true);
    expect(answer.body.error.code).toBe("NOT_FOUND");
  });

  test("templates: list and use", async () => {
    const list = await mcp.call("list_templates", { limit: 50 });
    expect(list.body.total).toBeGreaterThan(0);
    const used = await mcp.call("use_template", { id: list.body.data[0].id, name: "From template" });
    expect(used.isError).toBe(false);
    expect(used.body.data).toMatchObject({ name: "From template", status: "draft" });
  });

  test("connections: listed for the workspace", async () => {
    const answer = await mcp.call("list_connections", {});
    const http = await t.req("GET", "/api/connections");
    expect(answer.body).toEqual(http.body);
  });
});

describe("delete, cancel and retry tools", () => {
  const failing = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      config: {},
      nextAction: { name: "boom", type: "PIECE", pieceId: "code", actionId: "run_code", config: { code: "throw new Error('nope ' + 1)" } },
    },
  };
  const waiting = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      config: {},
      nextAction: { name: "later", type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds: 3600 } },
    },
  };

  test("retry_run starts a new run from the failed step with the API's answer; cancel_run cancels a waiting run", async () => {
    const wf = (await mcp.call("create_workflow", { name: "Fails", definition: failing })).body.data;
    const ran = await mcp.call("run_workflow", { id: wf.id, environment: "test", wait: 10 });
    expect(ran.body.data.status).toBe("failed");
    const retried = await mcp.call("retry_run", { id: ran.body.data.id, from: "start" });
    expect(retried.isError).toBe(false);
    expect(retried.body.data.retryOfRunId).toBe(ran.body.data.id);
    const original = await t.req("GET", `/api/runs/${ran.body.data.id}`);
    expect(original.body.data.retriedByRunId).toBe(retried.body.data.id);

    const slow = (await mcp.call("create_workflow", { name: "Waits", definition: waiting })).body.data;
    const paused = await mcp.call("run_workflow", { id: slow.id, environment: "test", wait: 2 });
    expect(["paused", "running", "pending"]).toContain(paused.body.data.status);
    const cancelled = await mcp.call("cancel_run", { id: paused.body.data.id });
    expect(cancelled.body.data.status).toBe("cancelled");
    expect((await t.req("GET", `/api/runs/${paused.body.data.id}`)).body.data.status).toBe("cancelled");
    // A finished run is refused with the route's 409.
    const again = await mcp.call("cancel_run", { id: ran.body.data.id });
    expect(again.isError).toBe(true);
    expect(again.body.error.code).toBeTruthy();
  });

  test("delete_workflow deletes, and needs workflow:write", async () => {
    const wf = (await mcp.call("create_workflow", { name: "Doomed", definition: greet })).body.data;
    const readOnly = await httpClient("http://localhost/mcp", await t.token(["workflow:read"]), (r) => t.app.handle(r));
    const refused = await readOnly.call("delete_workflow", { id: wf.id });
    expect(refused.isError).toBe(true);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    await readOnly.close();
    const deleted = await mcp.call("delete_workflow", { id: wf.id });
    expect(deleted.body.data).toEqual({ id: wf.id, deleted: true });
    expect((await t.req("GET", `/api/workflows/${wf.id}`)).status).toBe(404);
  });
});
