/** Create, read, list, replace and delete workflows (docs/api.md "1. Create a workflow", "Everything else"). */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { chainDefinition, createWorkflow, greetDefinition, stockDefinition } from "./fixtures";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

const SPEC_FIELDS = [
  "id",
  "name",
  "description",
  "definition",
  "status",
  "triggerType",
  "cronExpression",
  "webhookToken",
  "latestVersionId",
  "definitionRev",
  "hasUnpublishedChanges",
  "folderId",
  "tags",
  "testPayloads",
  "pinnedData",
  "workspaceId",
  "orgId",
  "createdBy",
  "createdAt",
  "updatedAt",
  "lastRun",
];

describe("POST /api/workflows", () => {
  test("the record carries every field of a workflow record; lastRun is present and null; status is draft", async () => {
    const res = await t.req("POST", "/api/workflows", { body: { name: "Hello" } });
    expect(res.status).toBe(201);
    const wf = res.body.data;
    for (const field of SPEC_FIELDS) expect(Object.hasOwn(wf, field)).toBe(true);
    expect(wf.lastRun).toBeNull();
    expect(wf.status).toBe("draft");
    expect(wf.definitionRev).toBe(1);
    expect(wf.latestVersionId).toBeNull();
    expect(wf.tags).toEqual([]);
    expect(wf.testPayloads).toEqual({});
    expect(wf.pinnedData).toEqual({});
    expect(Date.parse(wf.createdAt)).toBeGreaterThan(0);
  });

  test("rule 1: an omitted definition is a valid empty tree with an unconfigured manual trigger", async () => {
    const wf = await createWorkflow(t);
    expect(wf.definition.schemaVersion).toBe(2);
    expect(wf.definition.trigger.type).toBe("manual");
    expect(wf.definition.trigger.nextAction).toBeUndefined();
    expect(wf.triggerType).toBe("manual");
    const check = await t.req("POST", "/api/workflows/validate", { body: wf.definition });
    expect(check.body.data).toEqual({ valid: true, errors: [], warnings: [] });
  });

  test("rule 2: an unknown key on a node deep in the tree is a 400 naming its path and the allowed keys", async () => {
    const d = stockDefinition();
    d.trigger.nextAction.nextAction.branches[1].firstAction.colour = "red";
    const res = await t.req("POST", "/api/workflows", { body: { name: "x", definition: d } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("UNKNOWN_FIELD");
    expect(res.body.error.message).toContain("colour");
    expect(res.body.error.message).toContain("nextAction.nextAction.branches.1.firstAction");
    expect(res.body.error.message).toContain("onErrorAction");
  });

  test("rule 2: unknown keys on a branch, a condition, settings and the root are refused too", async () => {
    const cases: Array<[string, (d: any) => void]> = [
      ["shortcut", (d) => (d.trigger.nextAction.nextAction.branches[0].shortcut = true)],
      ["negate", (d) => (d.trigger.nextAction.nextAction.branches[0].conditions[0][0].negate = true)],
      ["retries", (d) => (d.settings.retries = 3)],
      ["title", (d) => (d.title = "x")],
    ];
    for (const [key, mutate] of cases) {
      const d = stockDefinition();
      mutate(d);
      const res = await t.req("POST", "/api/workflows", { body: { name: "x", definition: d } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("UNKNOWN_FIELD");
      expect(res.body.error.message).toContain(key);
    }
  });

  test("config is free-form: a key inside the 3rd branch's firstAction's config is fine", async () => {
    const d = stockDefinition();
    const branches = d.trigger.nextAction.nextAction.branches;
    branches.push({
      name: "third",
      conditions: [[{ field: "{{fetch.output.status}}", operator: "number_eq", value: 500 }]],
      firstAction: { name: "tag_third", type: "PIECE", pieceId: "tags", actionId: "add_tags", config: { tags: ["x"], anything: { nested: [1, 2] } } },
    });
    const res = await t.req("POST", "/api/workflows", { body: { name: "x", definition: d } });
    expect(res.status).toBe(201);
    expect(res.body.data.definition.trigger.nextAction.nextAction.branches[2].firstAction.config.anything).toEqual({ nested: [1, 2] });
  });

  test("rule 3: a webhookToken inside the definition is stripped, and the server mints its own", async () => {
    const d = greetDefinition();
    d.webhookToken = "client-root";
    d.trigger.webhookToken = "client-chosen";
    d.trigger.nextAction.webhookToken = "deeper";
    const res = await t.req("POST", "/api/workflows", { body: { name: "hook", definition: d, webhookToken: "body-level" } });
    expect(res.status).toBe(201);
    const wf = res.body.data;
    expect(JSON.stringify(wf.definition)).not.toContain("webhookToken");
    expect(wf.webhookToken).toBeString();
    expect(["client-root", "client-chosen", "deeper", "body-level"]).not.toContain(wf.webhookToken);
    expect(wf.webhookUrl).toEndWith(`/webhook/${wf.webhookToken}`);
  });

  test("rule 4: blank pins are filled with the served version; explicit pins are kept", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.pieceVersion = "";
    d.trigger.nextAction.nextAction.pieceVersion = "1.0.0";
    const wf = await createWorkflow(t, { definition: d });
    const served = t.deps.pieces;
    expect(wf.definition.trigger.pieceVersion).toBe(served.servedVersion("webhook")!);
    expect(wf.definition.trigger.nextAction.pieceVersion).toBe(served.servedVersion("data")!);
    expect(wf.definition.trigger.nextAction.nextAction.pieceVersion).toBe("1.0.0");
  });

  test("rule 5: pieces that do not exist are accepted at create (the gate reports them)", async () => {
    const d = chainDefinition(1);
    d.trigger.nextAction.pieceId = "no-such-piece";
    const wf = await createWorkflow(t, { definition: d });
    expect(wf.definition.trigger.nextAction.pieceId).toBe("no-such-piece");
    expect(wf.definition.trigger.nextAction.pieceVersion).toBeUndefined();
    expect(wf.definition.trigger.nextAction.valid).toBe(false);
  });

  test("server-owned fields in the body are ignored: status, ids, revisions, versions", async () => {
    const res = await t.req("POST", "/api/workflows", {
      body: {
        name: "owned",
        status: "active",
        id: "00000000-0000-4000-8000-000000000000",
        definitionRev: 99,
        latestVersionId: "00000000-0000-4000-8000-000000000001",
        workspaceId: "00000000-0000-4000-8000-000000000002",
        hasUnpublishedChanges: false,
        lastRun: { status: "completed" },
      },
    });
    expect(res.status).toBe(201);
    const wf = res.body.data;
    expect(wf.status).toBe("draft");
    expect(wf.id).not.toBe("00000000-0000-4000-8000-000000000000");
    expect(wf.definitionRev).toBe(1);
    expect(wf.latestVersionId).toBeNull();
    expect(wf.workspaceId).not.toBe("00000000-0000-4000-8000-000000000002");
    expect(wf.lastRun).toBeNull();
  });

  test("a record read with GET can be posted back as a new workflow", async () => {
    const original = await createWorkflow(t, { definition: greetDefinition(), tags: ["a"] });
    const read = await t.req("GET", `/api/workflows/${original.id}`);
    const copy = await t.req("POST", "/api/workflows", { body: { ...read.body.data, name: "copy" } });
    expect(copy.status).toBe(201);
    expect(copy.body.data.id).not.toBe(original.id);
    expect(copy.body.data.webhookToken).not.toBe(original.webhookToken);
    expect(copy.body.data.tags).toEqual(["a"]);
  });

  test("triggerType is derived from the definition; a contradicting one is refused; alone it picks the empty trigger's kind", async () => {
    const wf = await createWorkflow(t, { definition: stockDefinition() });
    expect(wf.triggerType).toBe("cron");
    expect(wf.cronExpression).toBe("0 * * * *");
    const clash = await t.req("POST", "/api/workflows", { body: { name: "x", definition: stockDefinition(), triggerType: "webhook" } });
    expect(clash.status).toBe(400);
    expect(clash.body.error.message).toContain('"cron"');
    const bad = await t.req("POST", "/api/workflows", { body: { name: "x", triggerType: "sometimes" } });
    expect(bad.status).toBe(400);
    const hook = await createWorkflow(t, { triggerType: "webhook" });
    expect(hook.definition.trigger.type).toBe("webhook");
    expect(hook.webhookToken).toBeString();
  });

  test("name is required", async () => {
    const res = await t.req("POST", "/api/workflows", { body: { description: "no name" } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("name");
  });

  test("Idempotency-Key is accepted: a replay returns the same workflow and creates no second one", async () => {
    const key = `create-${crypto.randomUUID()}`;
    const first = await t.req("POST", "/api/workflows", { body: { name: "once" }, headers: { "idempotency-key": key } });
    const again = await t.req("POST", "/api/workflows", { body: { name: "once" }, headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
  });

  test("a 500-step chain (nextAction nested 500 deep) is accepted over HTTP; 501 steps are refused with 400", async () => {
    const res = await t.req("POST", "/api/workflows", { body: { name: "long", definition: chainDefinition(500) } });
    expect(res.status).toBe(201);
    const tooMany = await t.req("POST", "/api/workflows", { body: { name: "longer", definition: chainDefinition(501) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain("500");
  });

  test("routers nested past the limit are refused with 400", async () => {
    const d = chainDefinition(0);
    let parent: any = d.trigger;
    let key = "nextAction";
    for (let i = 0; i < 52; i++) {
      const loop = { name: `l${i}`, type: "LOOP_ON_ITEMS", config: { items: "{{trigger.body.items}}" } };
      parent[key] = loop;
      parent = loop;
      key = "firstLoopAction";
    }
    const res = await t.req("POST", "/api/workflows", { body: { name: "deep", definition: d } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/nest/);
  });

  test("a definition over 1 MiB is refused with 400", async () => {
    const d = chainDefinition(1);
    d.variables = { blob: "x".repeat(1024 * 1024 + 10) };
    const res = await t.req("POST", "/api/workflows", { body: { name: "big", definition: d } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("1 MiB");
  });
});

describe("GET, PUT, DELETE /api/workflows/{id}", () => {
  test("GET answers the record; an unknown id answers 404", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const res = await t.req("GET", `/api/workflows/${wf.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.definition.trigger.nextAction.name).toBe("greet");
    const missing = await t.req("GET", `/api/workflows/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("NOT_FOUND");
  });

  test("every save bumps definitionRev; a stale expectedRev answers 409 naming the current one and writes nothing", async () => {
    const wf = await createWorkflow(t);
    const first = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { expectedRev: 1, definition: greetDefinition() } });
    expect(first.status).toBe(200);
    expect(first.body.data.definitionRev).toBe(2);
    const renamed = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { name: "renamed" } });
    expect(renamed.body.data.definitionRev).toBe(3);
    const stale = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { expectedRev: 2, name: "lost update", definition: chainDefinition(3) } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("REVISION_CONFLICT");
    expect(stale.body.error.message).toContain("definitionRev 3");
    const after = await t.req("GET", `/api/workflows/${wf.id}`);
    expect(after.body.data.name).toBe("renamed");
    expect(after.body.data.definitionRev).toBe(3);
    expect(after.body.data.definition.trigger.type).toBe("webhook");
  });

  test("expectedRev 0 or omitted is unconditional; fields left out keep their values", async () => {
    const wf = await createWorkflow(t, { description: "keep me", tags: ["x"] });
    const res = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { expectedRev: 0, name: "n2" } });
    expect(res.status).toBe(200);
    expect(res.body.data.description).toBe("keep me");
    expect(res.body.data.tags).toEqual(["x"]);
  });

  test("PUT refuses unknown keys and strips webhookToken from the definition like create", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const unknown = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: { ...greetDefinition(), extra: 1 } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("UNKNOWN_FIELD");
    const d = greetDefinition();
    d.trigger.webhookToken = "mine";
    const res = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: d, webhookToken: "mine" } });
    expect(res.body.data.webhookToken).toBe(wf.webhookToken);
    expect(JSON.stringify(res.body.data.definition)).not.toContain("mine");
  });

  test("DELETE removes the workflow; it then answers 404", async () => {
    const wf = await createWorkflow(t);
    const res = await t.req("DELETE", `/api/workflows/${wf.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: wf.id, deleted: true });
    expect((await t.req("GET", `/api/workflows/${wf.id}`)).status).toBe(404);
  });
});

describe("GET /api/workflows", () => {
  test("filters status, tag, q and folderId; page/limit; total counts every match", async () => {
    const app = await testApp();
    const folder = (await app.req("POST", "/api/folders", { body: { name: "Ops" } })).body.data;
    const a = await createWorkflow(app, { name: "Invoice sync", tags: ["billing"], folderId: folder.id });
    await createWorkflow(app, { name: "Daily report", tags: ["reports"] });
    await createWorkflow(app, { name: "Invoice reminder", tags: ["billing", "mail"] });
    await app.req("POST", `/api/workflows/${a.id}/publish`);

    const all = await app.req("GET", "/api/workflows");
    expect(all.body.total).toBe(3);
    expect(all.body.data[0].definition).toBeUndefined();
    expect(all.body.data[0]).toHaveProperty("lastRun");
    expect((await app.req("GET", "/api/workflows?tag=billing")).body.total).toBe(2);
    expect((await app.req("GET", "/api/workflows?q=invoice")).body.total).toBe(2);
    expect((await app.req("GET", "/api/workflows?status=active")).body.data.map((w: any) => w.id)).toEqual([a.id]);
    expect((await app.req("GET", `/api/workflows?folderId=${folder.id}`)).body.total).toBe(1);
    expect((await app.req("GET", "/api/workflows?folderId=none")).body.total).toBe(2);
    // Invalid filter values are dropped, not refused.
    expect((await app.req("GET", "/api/workflows?status=bogus&folderId=nope")).body.total).toBe(3);
    const page = await app.req("GET", "/api/workflows?limit=2&page=2");
    expect(page.body.data.length).toBe(1);
    expect(page.body.total).toBe(3);
    const empty = await app.req("GET", "/api/workflows?tag=none-such");
    expect(empty.body).toEqual({ data: [], total: 0 });
  });
});

describe("workspace isolation and scopes", () => {
  test("another workspace's workflow answers 404 on every route", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const other = await t.otherWorkspace();
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/api/workflows/${wf.id}`],
      ["PUT", `/api/workflows/${wf.id}`, { name: "x" }],
      ["DELETE", `/api/workflows/${wf.id}`],
      ["POST", `/api/workflows/${wf.id}/publish`],
      ["POST", `/api/workflows/${wf.id}/unpublish`],
      ["GET", `/api/workflows/${wf.id}/versions`],
      ["GET", `/api/workflows/${wf.id}/export`],
      ["GET", `/api/workflows/${wf.id}/variables`],
      ["GET", `/api/workflows/${wf.id}/test-payloads`],
      ["PUT", `/api/workflows/${wf.id}/pinned-data/greet`, { data: 1 }],
      ["POST", `/api/workflows/${wf.id}/webhook/rotate`],
    ];
    for (const [method, path, body] of routes) {
      const res = await t.req(method, path, { token: other.token, body });
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 404`);
    }
    expect((await t.req("GET", "/api/workflows", { token: other.token })).body.data.some((w: any) => w.id === wf.id)).toBe(false);
  });

  test("reads need workflow:read, writes workflow:write, publish workflow:publish", async () => {
    const wf = await createWorkflow(t);
    const reader = await t.token(["workflow:read"]);
    expect((await t.req("GET", `/api/workflows/${wf.id}`, { token: reader })).status).toBe(200);
    const write = await t.req("POST", "/api/workflows", { token: reader, body: { name: "x" } });
    expect(write.status).toBe(403);
    expect(write.body.error.message).toContain("workflow:write");
    const writer = await t.token(["workflow:read", "workflow:write"]);
    const publish = await t.req("POST", `/api/workflows/${wf.id}/publish`, { token: writer });
    expect(publish.status).toBe(403);
    expect(publish.body.error.message).toContain("workflow:publish");
  });
});
