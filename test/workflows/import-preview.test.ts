/**
 * Every kind of import can be previewed (docs/import.md, "The Import dialog"): a dry run of a Weft export
 * document, of workflow files and of an n8n or Activepieces workflow answers what the import would do and
 * stores nothing; the import then does it. The zip round trip uses the UI's own code (public/src/import-files.ts,
 * public/src/pages/import-dialog.tsx) against the server: export all → zip → detect → dry run in a fresh
 * workspace (every workflow a create) → import → the same files. Runs on SQLite and, with
 * WEFT_TEST_STORAGE=postgres, on PostgreSQL.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyImport, previewImport } from "../../public/src/pages/import-dialog";
import { detectImport, zipFiles } from "../../public/src/import-files";
import { httpClient } from "../mcp/client";
import { testApp, type TestApp } from "../support/app";
import { greetDefinition, loopDefinition } from "./fixtures";

const fixture = (kind: string, name: string) => JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/import", kind, name), "utf8"));

async function counts(t: TestApp) {
  const workflows = (await t.req("GET", "/api/workflows?limit=100")).body;
  const audit = (await t.req("GET", "/api/audit?action=workflow.created&limit=100")).body;
  return { workflows: workflows.total, created: audit.pagination.total };
}

describe("a Weft export document", () => {
  test("dryRun answers one create and the publish gate's diagnostics, and stores nothing; without it the draft is made", async () => {
    const t = await testApp();
    const source = (await t.req("POST", "/api/workflows", { body: { name: "Greeter", definition: greetDefinition() } })).body.data;
    await t.req("PUT", `/api/workflows/${source.id}/variables`, { body: { variables: [{ name: "greeting", value: "hi" }] } });
    const doc = (await t.req("GET", `/api/workflows/${source.id}/export`)).body.data;
    const before = await counts(t);

    const dry = await t.req("POST", "/api/workflows/import", { body: { ...doc, name: "Greeter again", dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toEqual({
      dryRun: true,
      plan: [{ action: "create", kind: "workflow", name: "Greeter again" }],
      variables: doc.variables.map((v: { name: string }) => v.name),
      diagnostics: { valid: true, errors: [], warnings: [] },
    });
    expect(await counts(t)).toEqual(before);

    const made = await t.req("POST", "/api/workflows/import", { body: { ...doc, name: "Greeter again" } });
    expect(made.status).toBe(201);
    expect(made.body.data.name).toBe("Greeter again");
    expect(await counts(t)).toEqual({ workflows: before.workflows + 1, created: before.created + 1 });
  });

  test("a dry run makes the import's checks: an unknown key or a missing folder is the same 400, and nothing is stored", async () => {
    const t = await testApp();
    const bad = { weftExport: 1, name: "x", definition: { ...greetDefinition(), colour: "red" }, dryRun: true };
    const refused = await t.req("POST", "/api/workflows/import", { body: bad });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("UNKNOWN_FIELD");
    const noFolder = { weftExport: 1, name: "x", definition: greetDefinition(), folderId: "0190a0a0-0000-7000-8000-000000000000" };
    const folder = await t.req("POST", "/api/workflows/import", { body: { ...noFolder, dryRun: true } });
    const applied = await t.req("POST", "/api/workflows/import", { body: noFolder });
    expect(folder.status).toBe(400);
    expect(folder.body.error).toEqual(applied.body.error);
    expect(folder.body.error.message).toContain("folder");
    expect(await counts(t)).toEqual({ workflows: 0, created: 0 });
  });

  test("the gate's errors are in the preview (the draft would still be stored)", async () => {
    const t = await testApp();
    const definition = greetDefinition();
    definition.trigger.nextAction.pieceId = "no_such_piece";
    const dry = await t.req("POST", "/api/workflows/import", { body: { weftExport: 1, name: "Broken", definition, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.data.diagnostics.valid).toBe(false);
    expect(dry.body.data.diagnostics.errors.map((e: any) => [e.path, e.code])).toEqual([["trigger.nextAction.pieceId", "UNKNOWN_PIECE"]]);
  });
});

describe("an n8n or Activepieces workflow", () => {
  test("dryRun answers every node's outcome and stores nothing; the import makes the draft and records it in the audit log", async () => {
    const t = await testApp();
    const fx = fixture("n8n", "merge-python-unmapped.json");
    const dry = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "n8n", source: fx.workflow, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.data.report.entries.map((e: any) => [e.node, e.outcome])).toEqual(fx.expectedReport);
    expect(await counts(t)).toEqual({ workflows: 0, created: 0 });

    const made = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "n8n", source: fx.workflow } });
    expect(made.status).toBe(201);
    expect(made.body.data.report).toEqual(dry.body.data.report);
    expect(await counts(t)).toEqual({ workflows: 1, created: 1 });
  });

  test("MCP import_foreign_workflow: a dry run stores nothing, then the draft; scoped workflow:write like the route", async () => {
    const t = await testApp();
    const fx = fixture("activepieces", "http-request.json");
    const mcp = await httpClient("http://localhost/mcp", await t.token("all"), (r) => t.app.handle(r));
    const reader = await httpClient("http://localhost/mcp", await t.token(["workflow:read"]), (r) => t.app.handle(r));
    try {
      const dry = await mcp.call("import_foreign_workflow", { format: "activepieces", source: fx.flow, dryRun: true });
      expect(dry.isError).toBe(false);
      expect(dry.body.data.dryRun).toBe(true);
      expect(dry.body.data.report.entries.map((e: any) => [e.node, e.outcome])).toEqual(fx.expectedReport);
      expect(await counts(t)).toEqual({ workflows: 0, created: 0 });

      const made = await mcp.call("import_foreign_workflow", { format: "activepieces", source: fx.flow, name: "From AP" });
      expect(made.isError).toBe(false);
      expect(made.body.data.workflow).toMatchObject({ name: "From AP", status: "draft" });
      expect((await t.req("GET", `/api/workflows/${made.body.data.workflow.id}`)).status).toBe(200);
      expect(await counts(t)).toEqual({ workflows: 1, created: 1 });

      const bad = await mcp.call("import_foreign_workflow", { format: "n8n", source: { name: "no nodes" }, dryRun: true });
      expect(bad.isError).toBe(true);
      expect(bad.body.error.message).toContain("nodes");

      const refused = await reader.call("import_foreign_workflow", { format: "activepieces", source: fx.flow, dryRun: true });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("workflow:write");
    } finally {
      await mcp.close();
      await reader.close();
    }
  });
});

describe("the UI's code against the server", () => {
  const original = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = original;
  });
  /** The UI's fetch, answered by this app with a token in place of the session cookie. */
  const serveUiFrom = async (t: TestApp) => {
    const token = await t.token("all");
    globalThis.fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${token}`);
      return t.app.handle(new Request(new URL(String(input), "http://localhost"), { ...init, headers }));
    }) as typeof fetch;
  };

  test("zip round trip: export all → zip → a fresh workspace's preview is all creates → import → the same files", async () => {
    const source = await testApp();
    const folder = (await source.req("POST", "/api/folders", { body: { name: "Sales / EU" } })).body.data;
    await source.req("POST", "/api/workflows", { body: { name: "Greeter", definition: greetDefinition() } });
    await source.req("POST", "/api/workflows", { body: { name: "Looper", folderId: folder.id, definition: loopDefinition() } });
    const exported = (await source.req("GET", "/api/workflows/files")).body.data.files;

    const detected = detectImport("weft-workflows.zip", zipFiles(exported));
    expect(detected).toMatchObject({ kind: "weft-files", label: "Weft folder export (zip)", files: exported });
    if (detected.kind !== "weft-files") throw new Error("not detected");

    const target = await testApp();
    await serveUiFrom(target);
    const preview = await previewImport(detected, null);
    expect(preview.problems).toEqual([]);
    expect(preview.plan.filter((p) => p.kind === "workflow").map((p) => [p.action, p.name])).toEqual([
      ["create", "Looper"],
      ["create", "Greeter"],
    ]);
    expect(preview.plan.filter((p) => p.kind === "folder").map((p) => [p.action, p.name])).toEqual([["create", "Sales / EU"]]);
    expect((await target.req("GET", "/api/workflows")).body.total).toBe(0);

    expect(await applyImport(detected, null)).toBeNull(); // two workflows: the list shows them
    expect((await target.req("GET", "/api/workflows/files")).body.data.files).toEqual(exported);
  });

  test("an n8n file through the dialog's calls: the report, then the draft to open", async () => {
    const target = await testApp();
    await serveUiFrom(target);
    const fx = fixture("n8n", "merge-python-unmapped.json");
    const detected = detectImport("unmapped.json", new TextEncoder().encode(JSON.stringify(fx.workflow)));
    expect(detected).toMatchObject({ kind: "n8n", name: "Unmapped two" });
    if (detected.kind !== "n8n") throw new Error("not detected");
    const preview = await previewImport(detected, null);
    expect(preview.report!.entries.map((e) => [e.node, e.outcome])).toEqual(fx.expectedReport);
    const id = await applyImport(detected, null);
    expect((await target.req("GET", `/api/workflows/${id}`)).body.data.name).toBe("Unmapped two");
  });

  test("a workflow file with problems: the preview lists them with file and path, and nothing can be imported", async () => {
    const target = await testApp();
    await serveUiFrom(target);
    const detected = detectImport("broken.yaml", new TextEncoder().encode("weftFormat: 1\nname: Broken\ntrigger:\n  type: manual\nsteps: 7\n"));
    if (detected.kind !== "weft-files") throw new Error(`detected as ${detected.kind}`);
    expect(Object.keys(detected.files)).toEqual(["workflows/broken.yaml"]);
    const preview = await previewImport(detected, null);
    expect(preview.plan).toEqual([]);
    expect(preview.problems).toEqual([{ file: "workflows/broken.yaml", path: "steps", message: "steps is a list of steps" }]);
  });
});
