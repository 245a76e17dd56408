/** Test payloads, pinned data with staleness, workflow variables (secrets encrypted), export and import. */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { createWorkflow, greetDefinition, stockDefinition } from "./fixtures";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

describe("test payloads (stored outside the definition)", () => {
  test("PUT replaces, GET reads, the record shows them, definitionRev is untouched", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const put = await t.req("PUT", `/api/workflows/${wf.id}/test-payloads`, { body: { default: { name: "Ada", n: 2 }, empty: {} } });
    expect(put.status).toBe(200);
    expect((await t.req("GET", `/api/workflows/${wf.id}/test-payloads`)).body.data).toEqual({ default: { name: "Ada", n: 2 }, empty: {} });
    const record = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data;
    expect(record.testPayloads.default.name).toBe("Ada");
    expect(record.definitionRev).toBe(wf.definitionRev);
    expect(JSON.stringify(record.definition)).not.toContain("Ada");
  });
});

describe("pinned data", () => {
  test("a pin reads fresh until the step's configuration changes, then stale; other edits keep it fresh", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const pin = await t.req("PUT", `/api/workflows/${wf.id}/pinned-data/greet`, { body: { data: { greeting: "hello Ada" } } });
    expect(pin.status).toBe(200);
    expect(pin.body.data).toMatchObject({ stepName: "greet", data: { greeting: "hello Ada" }, stale: false });
    const renamed = greetDefinition();
    renamed.trigger.nextAction.displayName = "Another label";
    renamed.trigger.nextAction.nextAction.config.status = 201;
    let record = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: renamed } })).body.data;
    expect(record.pinnedData.greet.stale).toBe(false);
    const changed = greetDefinition();
    changed.trigger.nextAction.config.fields.name = "{{trigger.body.first}}";
    record = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: changed } })).body.data;
    expect(record.pinnedData.greet).toMatchObject({ data: { greeting: "hello Ada" }, stale: true });
    // The pin lives outside the definition and the definitionRev only moved for the saves.
    expect(record.definition.pinnedData).toEqual({});
  });

  test("a pin for a step that does not exist answers 404 naming the steps; DELETE removes a pin", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const missing = await t.req("PUT", `/api/workflows/${wf.id}/pinned-data/nope`, { body: { data: 1 } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("greet, reply");
    await t.req("PUT", `/api/workflows/${wf.id}/pinned-data/reply`, { body: { data: { status: 200 } } });
    const del = await t.req("DELETE", `/api/workflows/${wf.id}/pinned-data/reply`);
    expect(del.body.data).toEqual({ stepName: "reply", deleted: true });
    expect((await t.req("GET", `/api/workflows/${wf.id}`)).body.data.pinnedData).toEqual({});
    expect((await t.req("DELETE", `/api/workflows/${wf.id}/pinned-data/reply`)).status).toBe(404);
  });

  test("definition.pinnedData on create moves into the pinned-data store; a read-back entry does not refresh a stale pin", async () => {
    const d = greetDefinition();
    d.pinnedData = { greet: { greeting: "from definition" } };
    const wf = await createWorkflow(t, { definition: d });
    expect(wf.definition.pinnedData).toEqual({});
    expect(wf.pinnedData.greet).toMatchObject({ data: { greeting: "from definition" }, stale: false });
    const changed = greetDefinition();
    changed.trigger.nextAction.config.fields = { x: 1 };
    const stale = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: changed } })).body.data;
    const echoed = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { name: "again", pinnedData: stale.pinnedData } })).body.data;
    expect(echoed.pinnedData.greet.stale).toBe(true);
  });

  test("test runs receive fresh pins only", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    await t.req("PUT", `/api/workflows/${wf.id}/pinned-data/greet`, { body: { data: { greeting: "pinned" } } });
    expect((await t.deps.workflows.definitionForRun(wf.workspaceId, wf.id, "test")).pinnedData).toEqual({ greet: { greeting: "pinned" } });
  });
});

describe("workflow variables", () => {
  test("values are usable at run time; secrets are encrypted at rest and masked on read", async () => {
    const wf = await createWorkflow(t, { definition: stockDefinition() });
    const put = await t.req("PUT", `/api/workflows/${wf.id}/variables`, {
      body: {
        variables: [
          { name: "apiBase", value: "https://stock.example.com" },
          { name: "apiKey", value: "sk_live_123", secret: true, description: "stock API key" },
        ],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.total).toBe(2);
    const listed = (await t.req("GET", `/api/workflows/${wf.id}/variables`)).body.data;
    expect(listed.find((v: any) => v.name === "apiKey")).toMatchObject({ value: null, secret: true, description: "stock API key" });
    expect(listed.find((v: any) => v.name === "apiBase").value).toBe("https://stock.example.com");
    const stored = (await appSql(t).get<{ value: string }>("SELECT value FROM workflow_variables WHERE workflow_id = ? AND name = 'apiKey'", [wf.id]))!;
    expect(stored.value).not.toContain("sk_live_123");
    expect(stored.value.startsWith("v1:")).toBe(true);
    const run = await t.deps.workflows.definitionForRun(wf.workspaceId, wf.id, "test");
    expect(run.variables).toEqual({ apiBase: "https://stock.example.com", apiKey: "sk_live_123" });
  });

  test("sending the list back with the masked secret keeps the secret; a new secret needs a value", async () => {
    const wf = await createWorkflow(t);
    await t.req("PUT", `/api/workflows/${wf.id}/variables`, { body: { variables: [{ name: "token", value: "s3cret", secret: true }] } });
    const listed = (await t.req("GET", `/api/workflows/${wf.id}/variables`)).body.data;
    const echoed = await t.req("PUT", `/api/workflows/${wf.id}/variables`, {
      body: { variables: listed.map((v: any) => ({ name: v.name, value: v.value, secret: v.secret })) },
    });
    expect(echoed.status).toBe(200);
    expect((await t.deps.workflows.definitionForRun(wf.workspaceId, wf.id, "test")).variables.token).toBe("s3cret");
    const fresh = await t.req("PUT", `/api/workflows/${wf.id}/variables`, { body: { variables: [{ name: "other", secret: true }] } });
    expect(fresh.status).toBe(400);
    const badName = await t.req("PUT", `/api/workflows/${wf.id}/variables`, { body: { variables: [{ name: "has-dash", value: 1 }] } });
    expect(badName.status).toBe(400);
  });

  test("the gate knows stored variables when validating in a workflow's context", async () => {
    const wf = await createWorkflow(t);
    await t.req("PUT", `/api/workflows/${wf.id}/variables`, { body: { variables: [{ name: "region", value: "eu" }] } });
    const d = greetDefinition();
    d.trigger.nextAction.config.fields.region = "{{variables.region}}";
    const without = (await t.req("POST", "/api/workflows/validate", { body: d })).body.data;
    expect(without.warnings.some((w: any) => w.code === "UNKNOWN_VARIABLE")).toBe(true);
    const within = (await t.req("POST", `/api/workflows/validate?workflowId=${wf.id}`, { body: d })).body.data;
    expect(within.warnings.some((w: any) => w.code === "UNKNOWN_VARIABLE")).toBe(false);
  });
});

describe("export and import", () => {
  test("export removes connection ids and secret values; import creates a new draft", async () => {
    const d = stockDefinition();
    d.trigger.nextAction.connectionId = "11111111-1111-4111-8111-111111111111";
    const wf = await createWorkflow(t, { definition: d, tags: ["stock"], description: "checks stock" });
    await t.req("PUT", `/api/workflows/${wf.id}/variables`, {
      body: {
        variables: [
          { name: "plain", value: 42 },
          { name: "key", value: "do-not-leak", secret: true },
        ],
      },
    });
    await t.req("POST", `/api/workflows/${wf.id}/publish`);
    const exported = await t.req("GET", `/api/workflows/${wf.id}/export`);
    expect(exported.status).toBe(200);
    const doc = exported.body.data;
    expect(doc.weftExport).toBe(1);
    expect(JSON.stringify(doc)).not.toContain("11111111-1111");
    expect(JSON.stringify(doc)).not.toContain("do-not-leak");
    expect(doc.variables).toEqual(
      expect.arrayContaining([
        { name: "plain", value: 42, secret: false, description: "" },
        { name: "key", value: null, secret: true, description: "" },
      ]),
    );

    const other = await t.otherWorkspace();
    const imported = await t.req("POST", "/api/workflows/import", { body: { ...doc, name: "Imported stock" }, token: other.token });
    expect(imported.status).toBe(201);
    const copy = imported.body.data;
    expect(copy.name).toBe("Imported stock");
    expect(copy.status).toBe("draft");
    expect(copy.workspaceId).toBe(other.workspaceId);
    expect(copy.tags).toEqual(["stock"]);
    expect(copy.definition.trigger.nextAction.name).toBe("fetch");
    const vars = (await t.req("GET", `/api/workflows/${copy.id}/variables`, { token: other.token })).body.data;
    expect(vars.map((v: any) => v.name).sort()).toEqual(["key", "plain"]);
  });

  test("import refuses unknown keys in the definition", async () => {
    const res = await t.req("POST", "/api/workflows/import", { body: { weftExport: 1, name: "x", definition: { ...greetDefinition(), bogus: true } } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("UNKNOWN_FIELD");
  });
});
