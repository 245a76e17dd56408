/**
 * Workflows as files (docs/workflows-as-code.md): export → import into an empty instance → export is byte-identical
 * on a set covering every step type, routers, loops, sub-flows, error branches, pinned data, multi-line code and
 * unicode; a bad folder lists every problem with its file and path and stores nothing; a dry run changes nothing;
 * --prune deletes only when asked. Runs on SQLite and, with WEFT_TEST_STORAGE=postgres, on PostgreSQL.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { folderDirOf, folderNameOf, readWorkflowFile, workflowYaml, type FileProblem } from "../../src/core/workflows/files-format";
import { httpClient } from "../mcp/client";
import { testApp, type TestApp } from "../support/app";
import { startServer } from "../support/server";
import { greetDefinition, loopDefinition, stockDefinition } from "./fixtures";

const CODE = `// Sums the order's lines.
const total = input.lines.reduce((sum, line) => {
    return sum + line.qty * line.price;
}, 0);

return { total, note: "Grüße — 合計 ✓" };
`;

let source: TestApp;
let exported: Record<string, string>;
const ids: Record<string, string> = {};

async function create(t: TestApp, body: Record<string, unknown>) {
  const res = await t.req("POST", "/api/workflows", { body });
  if (res.status !== 201) throw new Error(`create failed: ${res.text}`);
  return res.body.data;
}

async function exportOf(t: TestApp, token?: string): Promise<Record<string, string>> {
  const res = await t.req("GET", "/api/workflows/files", { token });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
  expect(res.body.data.weftFormat).toBe(1);
  return res.body.data.files;
}

const importInto = (t: TestApp, files: Record<string, string>, options: { dryRun?: boolean; prune?: boolean } = {}, token?: string) =>
  t.req("POST", "/api/workflows/files", { body: { files, ...options }, token });

/** What a workspace holds, to show that a refused import or a dry run stored nothing. */
async function holdings(t: TestApp) {
  const workflows = (await t.req("GET", "/api/workflows?limit=100")).body;
  const folders = (await t.req("GET", "/api/folders")).body;
  const connections = (await t.req("GET", "/api/connections")).body;
  return { workflows: workflows.data.map((w: any) => [w.id, w.definitionRev]), folders: folders.total, connections: connections.total };
}

beforeAll(async () => {
  source = await testApp();
  const t = source;
  const sales = (await t.req("POST", "/api/folders", { body: { name: "Sales & Ops / EU" } })).body.data;
  const intl = (await t.req("POST", "/api/folders", { body: { name: "Ünïcode 日本" } })).body.data;
  const github = await t.req("POST", "/api/connections", {
    body: { pieceId: "github", name: "GitHub – ops", clientId: "client-1", clientSecret: "never-exported" },
  });
  expect(github.status).toBe(201);

  const onError = await create(t, {
    name: "On failure",
    definition: {
      schemaVersion: 2,
      trigger: { name: "trigger", type: "error", pieceId: "runs", actionId: "on_error", config: {} },
    },
  });
  ids.onError = onError.id;
  const callee = await create(t, {
    name: "Price a line",
    folderId: sales.id,
    definition: {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "callable",
        pieceId: "subflows",
        actionId: "callable",
        config: {},
        nextAction: { name: "reply", type: "PIECE", pieceId: "subflows", actionId: "return_response", config: { value: { price: 3 } } },
      },
    },
  });
  ids.callee = callee.id;
  const caller = greetDefinition();
  caller.trigger.nextAction.nextAction = {
    name: "price",
    displayName: "Ask the pricer",
    type: "PIECE",
    pieceId: "subflows",
    actionId: "call_workflow",
    config: { workflow_id: callee.id, payload: { sku: "{{trigger.body.sku}}" } },
    nextAction: caller.trigger.nextAction.nextAction,
  };
  const greet = await create(t, {
    name: "Greet and respond",
    description: "Answers the webhook.\nSecond line of the description.\n",
    tags: ["web", "demo"],
    folderId: sales.id,
    definition: caller,
    testPayloads: { sample: { body: { name: "Zoë", sku: "A-1" } } },
  });
  ids.greet = greet.id;
  const stock = stockDefinition();
  stock.settings.errorWorkflowId = onError.id;
  ids.stock = (await create(t, { name: "Hourly stock check", definition: stock })).id;
  ids.loop = (await create(t, { name: "Confirm each order line", folderId: intl.id, definition: loopDefinition() })).id;
  const coded = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      displayName: "Start — 開始",
      type: "manual",
      config: {},
      nextAction: {
        name: "sum",
        displayName: "Sum the lines 🧮",
        type: "PIECE",
        pieceId: "code",
        actionId: "run_code",
        config: { input: { lines: "{{trigger.body.lines}}" }, code: CODE },
        nextAction: {
          name: "file_issue",
          type: "PIECE",
          pieceId: "github",
          actionId: "create_issue",
          connectionId: github.body.data.id,
          config: { repository: "acme/shop", title: "Total {{sum.output.total}}", body: "Line one\nLine two — ✓\n" },
        },
      },
    },
    variables: { region: "eu" },
  };
  ids.coded = (await create(t, { name: "Grüße 👋 日本語", folderId: intl.id, definition: coded })).id;
  ids.poll = (
    await create(t, {
      name: "New users",
      definition: {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "poll",
          pieceId: "http",
          actionId: "poll_json",
          config: { url: "https://users.example.com/api/users", id_field: "id", auth_type: "none" },
          nextAction: { name: "welcome", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "welcome {{trigger.name}}" } },
        },
        annotations: { notes: [{ text: "Polls every minute.\nDedupes by id.", x: 10, y: -20 }] },
      },
    })
  ).id;
  ids.watcher = (
    await create(t, {
      name: "After stock checks",
      definition: {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "run_finished",
          pieceId: "runs",
          actionId: "on_run_finished",
          config: { workflow_ids: [ids.stock], statuses: ["failed"] },
        },
      },
    })
  ).id;
  // Two workflows whose names make the same file name: numbered in id order.
  ids.twinA = (await create(t, { name: "Twin", definition: { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {} } } })).id;
  ids.twinB = (await create(t, { name: "twin!", definition: { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {} } } })).id;

  expect((await t.req("PUT", `/api/workflows/${ids.greet}/pinned-data/greet`, { body: { data: { greeting: "hello Zoë", lines: "a\nb" } } })).status).toBe(200);
  expect((await t.req("PUT", `/api/workflows/${ids.loop}/pinned-data/eachLine`, { body: { data: [{ sku: "A-1", qty: 2 }] } })).status).toBe(200);
  const vars = await t.req("PUT", `/api/workflows/${ids.stock}/variables`, {
    body: {
      variables: [
        { name: "apiBase", value: "https://inventory.example.com", description: "where stock lives" },
        { name: "apiToken", value: "s3cr3t-value", secret: true },
      ],
    },
  });
  expect(vars.status).toBe(200);

  for (const id of Object.values(ids)) {
    const wf = (await t.req("GET", `/api/workflows/${id}`)).body.data;
    const verdict = await t.req("POST", `/api/workflows/validate?workflowId=${id}`, { body: wf.definition });
    expect({ name: wf.name, errors: verdict.body.data.errors }).toEqual({ name: wf.name, errors: [] });
  }
  exported = await exportOf(t);
}, 120_000);

describe("the format", () => {
  test("one file per workflow under its folder, connections and variables beside them; no secret leaves", () => {
    expect(Object.keys(exported)).toEqual([
      "connections.yaml",
      "variables/all.yaml",
      "workflows/Sales & Ops %2F EU/greet-and-respond.yaml",
      "workflows/Sales & Ops %2F EU/price-a-line.yaml",
      "workflows/after-stock-checks.yaml",
      "workflows/hourly-stock-check.yaml",
      "workflows/new-users.yaml",
      "workflows/on-failure.yaml",
      "workflows/twin-2.yaml",
      "workflows/twin.yaml",
      "workflows/Ünïcode 日本/confirm-each-order-line.yaml",
      "workflows/Ünïcode 日本/grüße-日本語.yaml",
    ]);
    const all = Object.values(exported).join("\n");
    expect(all).not.toContain("never-exported");
    expect(all).not.toContain("s3cr3t-value");
    expect(all).not.toContain("client-1");
    expect(exported["connections.yaml"]).toBe("weftFormat: 1\nconnections:\n  - name: GitHub – ops\n    piece: github\n");
    expect(exported["variables/all.yaml"]).toContain("  hourly-stock-check:\n    - name: apiBase\n      value: https://inventory.example.com\n");
    expect(exported["variables/all.yaml"]).toContain("    - name: apiToken\n      secret: true\n");
  });

  test("keys in a fixed order, the chain as a list, multi-line code as a block scalar, the connection by name", () => {
    const coded = exported["workflows/Ünïcode 日本/grüße-日本語.yaml"]!;
    expect(coded.startsWith(`weftFormat: 1\nid: ${ids.coded}\nname: Grüße 👋 日本語\nvariables:\n  region: eu\ntrigger:\n`)).toBe(true);
    expect(coded).toContain(
      "      code: |\n        // Sums the order's lines.\n        const total = input.lines.reduce((sum, line) => {\n            return sum + line.qty",
    );
    expect(coded).toContain("    connection: GitHub – ops\n");
    expect(coded).not.toContain("connectionId");
    expect(coded).not.toContain("valid:");
    const greet = exported["workflows/Sales & Ops %2F EU/greet-and-respond.yaml"]!;
    expect(greet).toContain("description: |\n  Answers the webhook.\n  Second line of the description.\n");
    expect(greet).toContain(`workflow_id: ${ids.callee}`);
    expect(greet).toMatch(/\npinnedData:\n {2}greet:\n {4}greeting: hello Zoë\n {4}lines: \|-\n {6}a\n {6}b\n/);
    const stock = exported["workflows/hourly-stock-check.yaml"]!;
    expect(stock).toContain("    onError:\n      - name: note_failure\n");
    expect(stock).toContain("    branches:\n      - name: low\n        conditions:\n");
    expect(stock).toContain(`errorWorkflowId: ${ids.onError}`);
    expect(exported["workflows/Ünïcode 日本/confirm-each-order-line.yaml"]).toContain("    loop:\n      - name: confirm\n");
    expect(exported["workflows/new-users.yaml"]).toContain("annotations:\n  notes:\n    - text: |-\n        Polls every minute.\n        Dedupes by id.\n");
  });
});

describe("the format, read back", () => {
  test("text YAML would misread, leading spaces, CRLF and trailing blank lines come back as they were", () => {
    const tricky = [
      "true",
      "123",
      "0x1F",
      "null",
      "~",
      "2024-01-01",
      "a: b",
      "#x",
      "- x",
      "  indented\n    code\n",
      "x\r\ny",
      "ends\n\n\n",
      "tab\tin",
      "\u0001",
      "é日🎉",
      "",
    ];
    const definition: any = {
      schemaVersion: 2,
      trigger: { name: "trigger", type: "manual", config: { values: tricky, nested: { zeta: 1, alpha: [true, null, 1.5, -2e-7] } } },
    };
    const text = workflowYaml({
      id: "0c4a6b1e-5d2f-4e8a-9b7c-1f2e3d4c5b6a",
      name: "Tricky: yes",
      description: "",
      tags: [],
      definition,
      connectionName: () => undefined,
      testPayloads: {},
      pinnedData: {},
    });
    const problems: FileProblem[] = [];
    const back = readWorkflowFile("workflows/tricky.yaml", text, null, problems)!;
    expect(problems).toEqual([]);
    expect(back.name).toBe("Tricky: yes");
    expect(back.definition.trigger.config!.values).toEqual(tricky);
    expect(back.definition.trigger.config!.nested).toEqual({ alpha: [true, null, 1.5, -2e-7], zeta: 1 });
  });

  test("folder names with path separators, dots and percent signs make one directory and come back", () => {
    for (const name of ["a/b", "..", ".hidden", " spaced ", "100% done", "C:\\x", "x?y*z", "v1.2", "日本 🎉"]) {
      const dir = folderDirOf(name);
      expect(dir).not.toMatch(/[/\\:*?"<>|]|^\.|^ | $/);
      expect(folderNameOf(dir)).toBe(name);
    }
  });

  test("anchors and aliases are refused: each value is where a reviewer reads it", () => {
    const problems: FileProblem[] = [];
    readWorkflowFile("workflows/a.yaml", "weftFormat: 1\nname: &n x\ntrigger:\n  name: *n\n  type: manual\n", null, problems);
    expect(problems).toEqual([expect.objectContaining({ file: "workflows/a.yaml", path: "(file)" })]);
  });
});

describe("import", () => {
  test("export → import into an empty instance → export is byte-identical; ids kept; a second import changes nothing", async () => {
    const target = await testApp();
    const imported = await importInto(target, exported);
    expect(imported.status).toBe(200);
    expect(imported.body.data.applied).toBe(true);
    const plan = imported.body.data.plan;
    expect(plan.filter((p: any) => p.kind === "workflow").every((p: any) => p.action === "create")).toBe(true);
    expect(
      plan
        .filter((p: any) => p.kind === "folder")
        .map((p: any) => p.name)
        .sort(),
    ).toEqual(["Sales & Ops / EU", "Ünïcode 日本"]);
    expect(plan.filter((p: any) => p.kind === "connection").map((p: any) => p.name)).toEqual(["GitHub – ops"]);
    expect(await exportOf(target)).toEqual(exported);
    for (const id of Object.values(ids)) expect((await target.req("GET", `/api/workflows/${id}`)).body.data.status).toBe("draft");
    // The connection arrives without credentials and says so; a secret variable arrives empty.
    const connection = (await target.req("GET", "/api/connections")).body.data[0];
    expect(connection).toMatchObject({ name: "GitHub – ops", pieceId: "github", status: "error" });
    const vars = (await target.req("GET", `/api/workflows/${ids.stock}/variables`)).body.data;
    expect(vars.map((v: any) => [v.name, v.secret])).toEqual([
      ["apiBase", false],
      ["apiToken", true],
    ]);
    const again = await importInto(target, exported);
    expect(again.body.data.plan.filter((p: any) => p.kind === "workflow").map((p: any) => p.action)).toEqual(Array(Object.keys(ids).length).fill("unchanged"));
    expect(again.body.data.plan.some((p: any) => p.kind !== "workflow")).toBe(false);
  });

  test("a bad folder: every problem listed with its file and path, and nothing stored", async () => {
    const target = await testApp();
    const files = { ...exported };
    files["workflows/hourly-stock-check.yaml"] = exported["workflows/hourly-stock-check.yaml"]!.replace("    pieceId: http\n", "    pieceId: no_such_piece\n");
    files["workflows/on-failure.yaml"] = "weftFormat: 1\nname: [unclosed\n";
    files["workflows/Ünïcode 日本/confirm-each-order-line.yaml"] = exported["workflows/Ünïcode 日本/confirm-each-order-line.yaml"]!.replace(
      "    displayName: For each line\n",
      "    displayName: For each line\n    colour: blue\n",
    );
    files["workflows/Ünïcode 日本/grüße-日本語.yaml"] = exported["workflows/Ünïcode 日本/grüße-日本語.yaml"]!.replace(
      "connection: GitHub – ops",
      "connection: Nobody's",
    );
    files["variables/production.yaml"] = "weftFormat: 1\nvariables: {}\n";
    const before = await holdings(target);
    const res = await importInto(target, files);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
    const problems = res.body.error.details.problems as Array<{ file: string; path: string; message: string }>;
    const at = (file: string) => problems.filter((p) => p.file === file).map((p) => p.path);
    expect(at("workflows/hourly-stock-check.yaml")).toContain("steps.0.pieceId");
    expect(at("workflows/on-failure.yaml")[0]).toMatch(/^line \d+:\d+$/);
    expect(at("workflows/Ünïcode 日本/confirm-each-order-line.yaml")).toEqual(["steps.0.colour"]);
    expect(at("workflows/Ünïcode 日本/grüße-日本語.yaml")).toEqual(["steps.1.connection"]);
    expect(at("variables/production.yaml")).toEqual(["(file)"]);
    expect(res.body.error.message).toContain(`${problems.length} problems`);
    expect(await holdings(target)).toEqual(before);
    expect(before).toEqual({ workflows: [], folders: 0, connections: 0 });
  });

  test("--dry-run prints the plan and changes nothing; --prune deletes what the folder lacks, and only then", async () => {
    const target = await testApp();
    expect((await importInto(target, exported)).status).toBe(200);
    const files = { ...exported };
    files["workflows/hourly-stock-check.yaml"] = exported["workflows/hourly-stock-check.yaml"]!.replace("concurrencyLimit: 1", "concurrencyLimit: 2");
    files["workflows/new-one.yaml"] = "weftFormat: 1\nid: 0c4a6b1e-5d2f-4e8a-9b7c-1f2e3d4c5b6a\nname: New one\ntrigger:\n  name: trigger\n  type: manual\n";
    delete files["workflows/on-failure.yaml"];
    const before = await holdings(target);
    const dry = await importInto(target, files, { dryRun: true, prune: true });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toMatchObject({ dryRun: true, applied: false });
    const byAction = (plan: any[], action: string) =>
      plan
        .filter((p) => p.action === action)
        .map((p) => p.name)
        .sort();
    expect(byAction(dry.body.data.plan, "update")).toEqual(["Hourly stock check"]);
    expect(byAction(dry.body.data.plan, "create")).toEqual(["New one"]);
    expect(byAction(dry.body.data.plan, "delete")).toEqual(["On failure"]);
    expect(byAction(dry.body.data.plan, "unchanged")).toHaveLength(Object.keys(ids).length - 2);
    expect(await holdings(target)).toEqual(before);
    expect(await exportOf(target)).toEqual(exported);

    // Without --prune the workflow the folder lacks stays.
    const kept = await importInto(target, files);
    expect(byAction(kept.body.data.plan, "delete")).toEqual([]);
    expect((await target.req("GET", `/api/workflows/${ids.onError}`)).status).toBe(200);
    expect((await target.req("GET", `/api/workflows/${ids.stock}`)).body.data.definition.settings.concurrencyLimit).toBe(2);
    const pruned = await importInto(target, files, { prune: true });
    expect(byAction(pruned.body.data.plan, "delete")).toEqual(["On failure"]);
    expect((await target.req("GET", `/api/workflows/${ids.onError}`)).status).toBe(404);
  });

  test("a live workflow keeps running its published version; the import updates its draft", async () => {
    const target = await testApp();
    expect((await importInto(target, exported)).status).toBe(200);
    const published = await target.req("POST", `/api/workflows/${ids.loop}/publish`);
    expect(published.status).toBe(200);
    const path = "workflows/Ünïcode 日本/confirm-each-order-line.yaml";
    const res = await importInto(target, { ...exported, [path]: exported[path]!.replace("name: Confirm each order line", "name: Confirm lines") });
    expect(res.status).toBe(200);
    const wf = (await target.req("GET", `/api/workflows/${ids.loop}`)).body.data;
    expect(wf).toMatchObject({ name: "Confirm lines", status: "active", latestVersionId: published.body.data.latestVersionId });
  });

  test("scopes: export needs workflow:read, import workflow:write, and creating a connection connection:write", async () => {
    const target = await testApp();
    const reader = await target.token(["workflow:read"]);
    expect((await importInto(target, exported, {}, reader)).status).toBe(403);
    expect((await target.req("GET", "/api/workflows/files", { token: await target.token(["run:read"]) })).status).toBe(403);
    const writer = await target.token(["workflow:read", "workflow:write"]);
    const refused = await importInto(target, exported, {}, writer);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.problems).toEqual([expect.objectContaining({ file: "connections.yaml", path: "connections.0" })]);
  });
});

describe("all or nothing, and MCP", () => {
  test("a failure half-way through the unit leaves nothing behind", async () => {
    const target = await testApp();
    const editor = target.deps.workflows.editor;
    const original = editor.importVariables.bind(editor);
    let calls = 0;
    editor.importVariables = async (...args: Parameters<typeof original>) => {
      if (++calls === 4) throw new Error("disk gone");
      return original(...args);
    };
    const res = await importInto(target, exported);
    editor.importVariables = original;
    expect(res.status).toBe(500);
    expect(calls).toBe(4);
    expect(await holdings(target)).toEqual({ workflows: [], folders: 0, connections: 0 });
  });

  test("the same files imported twice at the same moment: both answer 200, every workflow, folder and connection once", async () => {
    const target = await testApp();
    const [first, second] = await Promise.all([importInto(target, exported), importInto(target, exported)]);
    expect([first.status, second.status, first.body.error, second.body.error]).toEqual([200, 200, undefined, undefined]);
    const held = await holdings(target);
    expect({ workflows: held.workflows.length, folders: held.folders, connections: held.connections }).toEqual({
      workflows: Object.keys(ids).length,
      folders: 2,
      connections: 1,
    });
    expect(await exportOf(target)).toEqual(exported);
  });

  test("an import that meets the other's new workflows between two of its own reads plans again: both answer 200", async () => {
    const target = await testApp();
    const repository = target.deps.workflows.storage.workflows;
    const lookUp = repository.getAnyWorkspace.bind(repository);
    let other: Promise<{ status: number; body: any }> | undefined;
    // The first import has read the workspace's workflows (none) and looks one id up elsewhere: the other import
    // runs whole just then, so that id is now a workflow of this workspace.
    repository.getAnyWorkspace = async (id: string) => {
      if (!other) {
        other = importInto(target, exported);
        await other;
      }
      return lookUp(id);
    };
    let first: { status: number; body: any };
    try {
      first = await importInto(target, exported);
    } finally {
      repository.getAnyWorkspace = lookUp;
    }
    const second = await other!;
    expect([first.status, second.status, first.body.error, second.body.error]).toEqual([200, 200, undefined, undefined]);
    expect((await holdings(target)).workflows.length).toBe(Object.keys(ids).length);
    expect(await exportOf(target)).toEqual(exported);
  });

  test("export_workflows and import_workflows do what the API does", async () => {
    const target = await testApp();
    const mcp = await httpClient("http://localhost/mcp", await target.token("all"), (r) => target.app.handle(r));
    try {
      const dry = await mcp.call("import_workflows", { files: exported, dryRun: true });
      expect(dry.isError).toBe(false);
      expect(dry.body.data.plan.filter((p: any) => p.kind === "workflow" && p.action === "create")).toHaveLength(Object.keys(ids).length);
      expect((await target.req("GET", "/api/workflows")).body.total).toBe(0);
      expect((await mcp.call("import_workflows", { files: exported })).body.data.applied).toBe(true);
      expect((await mcp.call("export_workflows", {})).body.data.files).toEqual(exported);
    } finally {
      await mcp.close();
    }
  });
});

describe("weft export and weft import", () => {
  test("write the folder, read it back; --dry-run changes nothing", async () => {
    const target = await testApp();
    const dir = mkdtempSync(join(tmpdir(), "weft-files-"));
    const cli = async (args: string[], t: TestApp) => {
      const env: Record<string, string> = { ...process.env, WEFT_DATA_DIR: t.dataDir, WEFT_LOG_LEVEL: "error", WEFT_PORT: "0" } as Record<string, string>;
      if (t.databaseUrl) env.WEFT_DATABASE_URL = t.databaseUrl;
      const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], { env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    };
    const out = await cli(["export", dir], source);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const written: Record<string, string> = {};
    const walk = (d: string) => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        const full = join(d, entry.name);
        if (entry.isDirectory()) walk(full);
        else written[relative(dir, full)] = readFileSync(full, "utf8");
      }
    };
    walk(dir);
    expect(written).toEqual(exported);

    writeFileSync(join(dir, "README.md"), "not part of the format: ignored\n");
    const dry = await cli(["import", dir, "--dry-run"], target);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("create workflow Hourly stock check (workflows/hourly-stock-check.yaml)");
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect((await target.req("GET", "/api/workflows")).body.total).toBe(0);
    const applied = await cli(["import", dir], target);
    expect(applied.code).toBe(0);
    expect(await exportOf(target)).toEqual(exported);

    writeFileSync(join(dir, "workflows/on-failure.yaml"), "weftFormat: 2\nname: x\n");
    const bad = await cli(["import", dir], target);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("workflows/on-failure.yaml weftFormat:");
    expect(bad.stderr).toContain("nothing was imported");
  }, 60_000);

  test("with a server running they go through its API, as WEFT_TOKEN", async () => {
    const server = await startServer();
    try {
      const dir = mkdtempSync(join(tmpdir(), "weft-files-"));
      for (const [path, text] of Object.entries(exported)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      const run = async (args: string[], env: Record<string, string>) => {
        const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
          env: { ...process.env, WEFT_DATA_DIR: server.dataDir, WEFT_LOG_LEVEL: "error", ...env },
          stdout: "pipe",
          stderr: "pipe",
        });
        const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
        return { stdout, stderr, code };
      };
      const noToken = await run(["import", dir], { WEFT_URL: server.url, WEFT_TOKEN: "" });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain("set WEFT_TOKEN");
      const imported = await run(["import", dir], { WEFT_URL: server.url, WEFT_TOKEN: server.token });
      expect(imported.stderr).toBe("");
      expect(imported.stdout).toContain("imported: ");
      const res = await server.fetch("/api/workflows/files");
      expect((await res.json()).data.files).toEqual(exported);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
