/**
 * The Import dialog (docs/import.md, "The Import dialog"): what each file is taken for, and the dialog showing
 * the dry run's report before anything is saved — the kind detected, each foreign node's outcome, the problems
 * with file and path — then Import applying it and opening the workflow; a file Weft does not know says so.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { strToU8, zipSync } from "fflate";
import { detectImport } from "../../public/src/import-files";
import { fakeApi, until, useHappyDom } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const fixture = (kind: string, name: string) => JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/import", kind, name), "utf8"));
const bytes = (value: unknown) => strToU8(typeof value === "string" ? value : JSON.stringify(value));

describe("what a file is taken for", () => {
  const yaml = "weftFormat: 1\nname: Greeter\ntrigger:\n  type: manual\n";
  const cases: Array<[string, string, Uint8Array, Record<string, unknown>]> = [
    ["a Weft export", "greeter.weft.json", bytes({ weftExport: 1, name: "Greeter", definition: {} }), { kind: "weft-json", name: "Greeter" }],
    ["a Weft workflow file", "Greeter.yaml", bytes(yaml), { kind: "weft-files", files: { "workflows/Greeter.yaml": yaml } }],
    [
      "a zipped folder export, under a top folder as archivers make it",
      "export.zip",
      zipSync({ "export/workflows/Sales/Greeter.yaml": strToU8(yaml), "export/connections.yaml": strToU8("connections: []\n"), "export/": new Uint8Array() }),
      { kind: "weft-files", label: "Weft folder export (zip)", files: { "workflows/Sales/Greeter.yaml": yaml, "connections.yaml": "connections: []\n" } },
    ],
    ["an n8n workflow", "wf.json", bytes(fixture("n8n", "http-ntfy.json").workflow), { kind: "n8n", label: "n8n workflow", name: "HTTP" }],
    ["a list of one n8n workflow (n8n's command line)", "all.json", bytes([fixture("n8n", "if-branches.json").workflow]), { kind: "n8n" }],
    [
      "an Activepieces template",
      "t.json",
      bytes(fixture("activepieces", "http-request.json").flow),
      { kind: "activepieces", label: "Activepieces template", name: "HTTP" },
    ],
    ["an Activepieces flow", "f.json", bytes(fixture("activepieces", "http-request.json").flow.template), { kind: "activepieces", label: "Activepieces flow" }],
  ];
  for (const [what, name, content, expected] of cases)
    test(what, () => {
      expect(detectImport(name, content)).toMatchObject(expected);
    });

  const refused: Array<[string, string, Uint8Array, string]> = [
    ["JSON of no known tool", "x.json", bytes({ hello: "world" }), "is JSON but not a workflow Weft knows"],
    ["text that is not JSON", "notes.txt", bytes("hello"), "notes.txt is not JSON"],
    ["bytes that are not text", "image.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]), "neither text (UTF-8) nor a zip"],
    ["an empty file", "empty.json", new Uint8Array(), "empty.json is empty"],
    ["a zip without workflows/", "photos.zip", zipSync({ "a.jpg": new Uint8Array([1, 2, 3]) }), "holds no workflows/ folder"],
    ["several n8n workflows in one file", "all.json", bytes([{ nodes: [] }, { nodes: [] }]), "import one n8n workflow at a time"],
  ];
  for (const [what, name, content, message] of refused)
    test(`refused: ${what}`, () => {
      const found = detectImport(name, content);
      expect(found.kind).toBe("unknown");
      expect((found as { message: string }).message).toContain(message);
    });
});

async function openDialog() {
  const { render, h } = await import("preact");
  const { ImportDialog } = await import("../../public/src/pages/import-dialog");
  const root = document.createElement("div");
  document.body.appendChild(root);
  let imported = 0;
  render(
    h(ImportDialog, {
      folderId: null,
      onClose: () => undefined,
      onImported: () => {
        imported++;
      },
    }),
    root,
  );
  const choose = (name: string, content: Uint8Array) => {
    const input = root.querySelector('input[type="file"]') as HTMLInputElement;
    const file = new File([content as Uint8Array<ArrayBuffer>], name);
    Object.defineProperty(input, "files", { value: [file], configurable: true });
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const drop = (name: string, content: Uint8Array) => {
    const event = new Event("drop", { bubbles: true, cancelable: true });
    Object.defineProperty(event, "dataTransfer", { value: { files: [new File([content as Uint8Array<ArrayBuffer>], name)] } });
    root.querySelector(".drop-zone")!.dispatchEvent(event);
  };
  const importButton = () => [...root.querySelectorAll("button")].find((b) => b.textContent === "Import") as HTMLButtonElement;
  return { root, choose, drop, importButton, imported: () => imported };
}

describe("the dialog", () => {
  test("an n8n workflow: what was detected, each node's outcome and why, before anything is saved; Import opens the draft", async () => {
    const fx = fixture("n8n", "merge-python-unmapped.json");
    const report = {
      format: "n8n",
      entries: [
        { node: "Start", type: "n8n-nodes-base.manualTrigger", outcome: "approximated", step: "trigger", note: "$json is trigger.body" },
        { node: "Py", type: "n8n-nodes-base.code", outcome: "not_mapped", step: "Py", note: "Python code is not mapped: a placeholder stands in" },
        { node: "Other", type: "n8n-nodes-base.set", outcome: "mapped", step: "Other" },
      ],
      missingPieces: [],
      hasPlaceholders: true,
    };
    fake = fakeApi({
      "POST /api/workflows/import/foreign": ({ body }) =>
        body.dryRun
          ? { body: { data: { dryRun: true, report, definition: {} } } }
          : { status: 201, body: { data: { dryRun: false, report, definition: {}, workflow: { id: "wf-new", name: "Unmapped two" } } } },
    });
    const d = await openDialog();
    d.choose("unmapped.json", bytes(fx.workflow));
    await until(() => expect(d.root.querySelectorAll("tr[data-outcome]").length).toBe(3));
    expect(d.root.querySelector(".import-detected")!.textContent).toBe("Detected: n8n workflow Unmapped two");
    expect(d.root.querySelector(".import-counts")!.textContent).toBe("1 mapped, 1 approximated, 1 not mapped");
    const py = d.root.querySelector('tr[data-outcome="not_mapped"]')!;
    expect(py.textContent).toContain("Python code is not mapped");
    expect(d.root.textContent).toContain("cannot be published until each is replaced");
    expect(fake.calls.map((c) => [c.path, c.body.dryRun, c.body.format])).toEqual([["/api/workflows/import/foreign", true, "n8n"]]);
    expect(fake.calls[0]!.body.source).toEqual(fx.workflow);

    expect(d.importButton().disabled).toBe(false);
    d.importButton().click();
    await until(() => expect(location.hash).toBe("#/workflows/wf-new"));
    expect(fake.calls.map((c) => c.body.dryRun)).toEqual([true, undefined]);
    expect(d.imported()).toBe(1);
  });

  test("workflow files with problems: each with its file and path, and Import stays off", async () => {
    fake = fakeApi({
      "POST /api/workflows/files": () => ({
        status: 400,
        body: {
          error: {
            code: "VALIDATION_FAILED",
            message: "nothing was imported: 2 problems",
            details: {
              problems: [
                { file: "workflows/a.yaml", path: "steps.1.config.url", message: "url is required" },
                { file: "connections.yaml", path: "connections.0.piece", message: 'no piece "nope"' },
              ],
            },
          },
        },
      }),
    });
    const d = await openDialog();
    d.choose("a.yaml", bytes("weftFormat: 1\nname: A\n"));
    await until(() => expect(d.root.querySelectorAll("li[data-problem]").length).toBe(2));
    expect([...d.root.querySelectorAll("li[data-problem]")].map((li) => li.textContent)).toEqual([
      "workflows/a.yaml steps.1.config.url: url is required",
      'connections.yaml connections.0.piece: no piece "nope"',
    ]);
    expect(d.importButton().disabled).toBe(true);
    expect(fake.calls.map((c) => [c.path, c.body.dryRun, Object.keys(c.body.files)])).toEqual([["/api/workflows/files", true, ["workflows/a.yaml"]]]);
  });

  test("a folder export dropped on the dialog: its plan (create, update, unchanged) and the gate's warnings", async () => {
    fake = fakeApi({
      "POST /api/workflows/files": () => ({
        body: {
          data: {
            dryRun: true,
            applied: false,
            plan: [
              { action: "create", kind: "folder", name: "Sales" },
              { action: "create", kind: "workflow", name: "Greeter", path: "workflows/Sales/Greeter.yaml", id: "w1" },
              { action: "update", kind: "workflow", name: "Looper", path: "workflows/Looper.yaml", id: "w2" },
              { action: "unchanged", kind: "workflow", name: "Old", path: "workflows/Old.yaml", id: "w3" },
            ],
            warnings: [{ file: "workflows/Looper.yaml", path: "steps.0", message: "the step is skipped" }],
          },
        },
      }),
    });
    const d = await openDialog();
    d.drop("export.zip", zipSync({ "workflows/Looper.yaml": strToU8("weftFormat: 1\n") }));
    await until(() => expect(d.root.querySelectorAll("tr[data-plan]").length).toBe(4));
    expect([...d.root.querySelectorAll("tr[data-plan]")].map((tr) => tr.getAttribute("data-plan"))).toEqual(["create", "create", "update", "unchanged"]);
    expect(d.root.querySelector(".import-detected")!.textContent).toContain("Weft folder export (zip)");
    expect(d.root.querySelector(".import-notes")!.textContent).toBe("workflows/Looper.yaml steps.0: the step is skipped");
    expect(d.importButton().disabled).toBe(false);
  });

  test("a Weft export: one create and what the publish gate would say; Import opens the new draft", async () => {
    const doc = { weftExport: 1, name: "Greeter", definition: { schemaVersion: 2 }, variables: [] };
    fake = fakeApi({
      "POST /api/workflows/import": ({ body }) =>
        body.dryRun
          ? {
              body: {
                data: {
                  dryRun: true,
                  plan: [{ action: "create", kind: "workflow", name: "Greeter" }],
                  variables: [],
                  diagnostics: {
                    valid: false,
                    errors: [{ path: "trigger.nextAction.connectionId", code: "CONNECTION_REQUIRED", message: "choose a connection" }],
                    warnings: [],
                  },
                },
              },
            }
          : { status: 201, body: { data: { id: "wf-greeter", name: "Greeter" } } },
    });
    const d = await openDialog();
    d.choose("greeter.weft.json", bytes(doc));
    await until(() => expect(d.root.querySelectorAll("tr[data-plan]").length).toBe(1));
    expect(d.root.querySelector(".import-detected")!.textContent).toBe("Detected: Weft workflow export (JSON) Greeter");
    expect(d.root.querySelector(".import-notes")!.textContent).toBe("trigger.nextAction.connectionId: publish gate: choose a connection");
    d.importButton().click();
    await until(() => expect(location.hash).toBe("#/workflows/wf-greeter"));
    expect(fake.calls.map((c) => [c.body.dryRun, c.body.name])).toEqual([
      [true, "Greeter"],
      [undefined, "Greeter"],
    ]);
  });

  test("a file Weft does not know: a clear message, nothing sent", async () => {
    fake = fakeApi({});
    const d = await openDialog();
    d.choose("notes.json", bytes({ hello: "world" }));
    await until(() => expect(d.root.querySelector('[role="alert"]')!.textContent).toContain("is JSON but not a workflow Weft knows"));
    expect(fake.calls).toEqual([]);
    expect(d.importButton().disabled).toBe(true);
  });
});
