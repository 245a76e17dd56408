/** Folders (CRUD, move, delete rules) and templates (built-in catalog, workspace templates, use). */
import { beforeAll, describe, expect, test } from "bun:test";
import { BUILTIN_TEMPLATES } from "../../src/core/templates/catalog";
import { testApp, type TestApp } from "../support/app";
import { createWorkflow, greetDefinition } from "./fixtures";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

describe("folders", () => {
  test("create, read, rename, list with counts; names are unique ignoring case", async () => {
    const created = await t.req("POST", "/api/folders", { body: { name: "Sales" } });
    expect(created.status).toBe(201);
    const folder = created.body.data;
    expect(folder).toMatchObject({ name: "Sales", workflowCount: 0 });
    const clash = await t.req("POST", "/api/folders", { body: { name: "sales" } });
    expect(clash.status).toBe(409);
    expect(clash.body.error.message).toContain(folder.id);
    const renamed = await t.req("PUT", `/api/folders/${folder.id}`, { body: { name: "Revenue" } });
    expect(renamed.body.data.name).toBe("Revenue");
    await createWorkflow(t, { folderId: folder.id });
    const list = (await t.req("GET", "/api/folders")).body;
    expect(list.data.find((f: any) => f.id === folder.id).workflowCount).toBe(1);
    expect(list.total).toBe(list.data.length);
  });

  test("a workflow cannot name a folder of another workspace", async () => {
    const other = await t.otherWorkspace();
    const theirs = (await t.req("POST", "/api/folders", { body: { name: "Theirs" }, token: other.token })).body.data;
    const res = await t.req("POST", "/api/workflows", { body: { name: "x", folderId: theirs.id } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("names no folder");
    expect((await t.req("GET", `/api/folders/${theirs.id}`)).status).toBe(404);
  });

  test("move workflows in and out; all or nothing", async () => {
    const folder = (await t.req("POST", "/api/folders", { body: { name: "Moves" } })).body.data;
    const a = await createWorkflow(t);
    const b = await createWorkflow(t);
    const moved = await t.req("POST", "/api/workflows/move", { body: { workflowIds: [a.id, b.id], folderId: folder.id } });
    expect(moved.body.data).toEqual({ moved: 2, folderId: folder.id });
    expect((await t.req("GET", `/api/workflows?folderId=${folder.id}`)).body.total).toBe(2);
    const partial = await t.req("POST", "/api/workflows/move", { body: { workflowIds: [a.id, crypto.randomUUID()], folderId: null } });
    expect(partial.status).toBe(404);
    expect((await t.req("GET", `/api/workflows/${a.id}`)).body.data.folderId).toBe(folder.id);
    await t.req("POST", "/api/workflows/move", { body: { workflowIds: [a.id], folderId: null } });
    expect((await t.req("GET", `/api/workflows/${a.id}`)).body.data.folderId).toBeNull();
  });

  test("deleting a non-empty folder is refused with the count, unless ?moveTo=", async () => {
    const folder = (await t.req("POST", "/api/folders", { body: { name: "Full" } })).body.data;
    const target = (await t.req("POST", "/api/folders", { body: { name: "Target" } })).body.data;
    const a = await createWorkflow(t, { folderId: folder.id });
    await createWorkflow(t, { folderId: folder.id });
    const refused = await t.req("DELETE", `/api/folders/${folder.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("2 workflows");
    expect(refused.body.error.message).toContain("moveTo");
    const moved = await t.req("DELETE", `/api/folders/${folder.id}?moveTo=${target.id}`);
    expect(moved.body.data).toEqual({ id: folder.id, deleted: true, moved: 2 });
    expect((await t.req("GET", `/api/workflows/${a.id}`)).body.data.folderId).toBe(target.id);
    const toRoot = await t.req("DELETE", `/api/folders/${target.id}?moveTo=root`);
    expect(toRoot.status).toBe(200);
    expect((await t.req("GET", `/api/workflows/${a.id}`)).body.data.folderId).toBeNull();
    const empty = (await t.req("POST", "/api/folders", { body: { name: "Empty" } })).body.data;
    expect((await t.req("DELETE", `/api/folders/${empty.id}`)).status).toBe(200);
  });
});

describe("templates", () => {
  test("at least 8 built-in templates; every one creates a draft that passes the publish gate", async () => {
    const list = await t.req("GET", "/api/templates?source=builtin&limit=100");
    expect(list.status).toBe(200);
    expect(list.body.total).toBeGreaterThanOrEqual(8);
    expect(list.body.data[0].definition).toBeUndefined();
    // Templates of pieces that need a connection say so; the user picks one on the step, as this does.
    const connectionValues: Record<string, Record<string, unknown>> = {
      email: { user: "me@example.com", password: "secret", imap_host: "mail.example.com" },
      mqtt: { url: "mqtt://broker.example.com:1883" },
      sql: { database_type: "postgres", host: "db.example.com", database: "home", user: "weft" },
      llm: { base_url: "https://llm.example.com/v1", api_key: "" },
    };
    const connections: Record<string, string> = {};
    for (const [pieceId, values] of Object.entries(connectionValues)) {
      const made = await t.req("POST", "/api/connections", { body: { pieceId, name: `template ${pieceId}`, values } });
      expect(`${pieceId}: ${made.status} ${made.text}`).toStartWith(`${pieceId}: 201`);
      connections[pieceId] = made.body.data.id;
    }
    // A template whose steps need an Activepieces package is checked with it installed (test/pieces/telegram-template.test.ts).
    for (const template of BUILTIN_TEMPLATES.filter((t) => !t.packages)) {
      const used = await t.req("POST", `/api/templates/${template.id}/use`, { body: { name: `From ${template.slug}` } });
      expect(`${template.slug}: ${used.status}`).toBe(`${template.slug}: 201`);
      let needed = 0;
      for (let node = used.body.data.definition.trigger; node; node = node.nextAction) {
        if (connections[node.pieceId] === undefined) continue;
        expect(`${template.slug}: ${template.description}`).toMatch(/connection/i);
        node.connectionId = connections[node.pieceId];
        needed++;
      }
      if (needed > 0) {
        const saved = await t.req("PUT", `/api/workflows/${used.body.data.id}`, {
          body: { definition: used.body.data.definition, expectedRev: used.body.data.rev },
        });
        expect(`${template.slug}: ${saved.status} ${saved.text}`).toStartWith(`${template.slug}: 200`);
        used.body.data = saved.body.data;
      }
      const check = (await t.req("POST", `/api/workflows/validate?workflowId=${used.body.data.id}`, { body: used.body.data.definition })).body.data;
      expect(`${template.slug}: ${JSON.stringify(check.errors)}`).toBe(`${template.slug}: []`);
      const ignored = check.warnings.filter((w: any) => w.code === "UNKNOWN_PROPERTY" || w.code === "INACTIVE_PROPERTY" || w.code === "UNKNOWN_VARIABLE");
      expect(`${template.slug}: ${JSON.stringify(ignored)}`).toBe(`${template.slug}: []`);
      const published = await t.req("POST", `/api/workflows/${used.body.data.id}/publish`);
      expect(`${template.slug}: ${published.status}`).toBe(`${template.slug}: 200`);
    }
  });

  test("read a template by id or slug; filter by q and category", async () => {
    const byId = await t.req("GET", `/api/templates/${BUILTIN_TEMPLATES[0]!.id}`);
    expect(byId.body.data.definition.schemaVersion).toBe(2);
    const bySlug = await t.req("GET", "/api/templates/error-notification");
    expect(bySlug.body.data.triggerType).toBe("error");
    expect((await t.req("GET", "/api/templates?category=approvals")).body.data.map((x: any) => x.slug)).toEqual(["approval-flow"]);
    expect((await t.req("GET", "/api/templates?q=webhook")).body.total).toBeGreaterThan(0);
    expect((await t.req("GET", `/api/templates/${crypto.randomUUID()}`)).status).toBe(404);
  });

  test("workspace templates from a workflow: connection ids removed, usable, deletable; other workspaces do not see them", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.connectionId = "22222222-2222-4222-8222-222222222222";
    const wf = await createWorkflow(t, { definition: d, name: "Greeter" });
    const created = await t.req("POST", "/api/templates", { body: { workflowId: wf.id, category: "mine" } });
    expect(created.status).toBe(201);
    const template = created.body.data;
    expect(template).toMatchObject({ name: "Greeter", source: "workspace", category: "mine", sourceWorkflowId: wf.id });
    expect(JSON.stringify(template.definition)).not.toContain("22222222");
    const used = await t.req("POST", `/api/templates/${template.id}/use`);
    expect(used.status).toBe(201);
    expect(used.body.data.name).toBe("Greeter");
    const other = await t.otherWorkspace();
    expect((await t.req("GET", `/api/templates/${template.id}`, { token: other.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/templates/${BUILTIN_TEMPLATES[0]!.id}`)).status).toBe(422);
    expect((await t.req("DELETE", `/api/templates/${template.id}`)).body.data.deleted).toBe(true);
  });

  test("scopes: template:read to read, template:write to create, workflow:write plus template:read to use", async () => {
    const noTemplates = await t.token(["workflow:read", "workflow:write"]);
    expect((await t.req("GET", "/api/templates", { token: noTemplates })).status).toBe(403);
    const use = await t.req("POST", `/api/templates/${BUILTIN_TEMPLATES[0]!.id}/use`, { token: noTemplates });
    expect(use.status).toBe(403);
    expect(use.body.error.message).toContain("template:read");
    const reader = await t.token(["template:read"]);
    expect((await t.req("POST", "/api/templates", { token: reader, body: { workflowId: crypto.randomUUID() } })).status).toBe(403);
  });
});
