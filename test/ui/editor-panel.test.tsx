/**
 * The step panel against a scripted server: expression fields keep their whole text, the wide
 * expression editor inserts data at the cursor and saves through the form's own change path, and
 * the "Last production run" tab shows the newest production run that reached the step (never a test
 * run), with an empty state in plain words.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, type Recorded, until, useHappyDom, workflowRecord } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(async () => {
  fake?.restore();
  document.body.innerHTML = "";
  const { resultTab } = await import("../../public/src/pages/editor/step-results");
  resultTab.value = "test";
});

const LONG = '{{ "Hello " & trigger.body.name & ", and welcome to a field whose expression is far longer than the panel is wide" }}';

const byLabel = <T extends Element = HTMLElement>(root: ParentNode, label: string) => {
  const el = root.querySelector<T>(`[aria-label="${label}"]`);
  if (!el) throw new Error(`no element labelled ${label}`);
  return el;
};
const click = (el: Element) => el.dispatchEvent(new MouseEvent("click", { bubbles: true }));
const type = (el: HTMLTextAreaElement | HTMLInputElement, value: string) => {
  el.value = value;
  el.dispatchEvent(new Event("input", { bubbles: true }));
};
// A count, not the element: a failed expectation on an element prints the whole DOM, slowly.
const dialogs = () => document.querySelectorAll('[role="dialog"]').length;
const buttonNamed = (root: ParentNode, text: string) => {
  const found = [...root.querySelectorAll("button")].find((b) => b.textContent?.trim() === text);
  if (!found) throw new Error(`no button ${text}`);
  return found;
};

const setFieldsProjection = {
  pieceId: "data",
  pieceVersion: "1.0.0",
  id: "set_fields",
  name: "Set fields",
  description: "",
  inputSchema: {
    type: "object",
    properties: { fields: { type: "object", displayName: "Fields" }, note: { type: "string", displayName: "Note" } },
    required: ["fields"],
  },
  outputSchema: { type: "object", properties: {}, required: [] },
  sampleData: {},
  filteredBy: {},
  ignored: [],
  unresolved: [],
  conditionalFields: [],
  dynamicFields: [],
};

describe("expression fields", () => {
  async function drawForm(initial: Record<string, unknown>) {
    const { render, h } = await import("preact");
    const { ConfigForm } = await import("../../public/src/pages/editor/config-form");
    fake = fakeApi({ "GET /api/pieces/data/actions/set_fields": () => ({ body: { data: setFieldsProjection } }) });
    const root = document.createElement("div");
    document.body.appendChild(root);
    const changes: Array<Record<string, unknown>> = [];
    let config = initial;
    const draw = () =>
      render(
        h(ConfigForm, {
          kind: "actions",
          pieceId: "data",
          actionId: "set_fields",
          stepName: "greet",
          config,
          paths: [
            { label: "trigger.body", expression: "trigger.body" },
            { label: "trigger.body.name", expression: "trigger.body.name" },
          ],
          onChange: (next) => {
            config = next;
            changes.push(next);
            draw();
          },
        }),
        root,
      );
    draw();
    await until(() => expect(root.querySelector("#cfg-greet-note")).not.toBeNull());
    return { root, changes, config: () => config, unmount: () => render(null, root) };
  }

  test("a long expression is held whole in a wrapping field, and the wide editor shows all of it", async () => {
    const form = await drawForm({ fields: { greeting: LONG } });
    const value = byLabel<HTMLTextAreaElement>(form.root, "Fields: value of greeting");
    // A textarea wraps: the text is never cut off at a single line's right edge.
    expect(value.tagName).toBe("TEXTAREA");
    expect(value.value).toBe(LONG);

    click(byLabel(form.root, "Expand Fields greeting"));
    const dialog = await (async () => {
      await until(() => expect(dialogs()).toBe(1));
      return document.querySelector<HTMLElement>('[role="dialog"]')!;
    })();
    expect(dialog.textContent).toContain("Edit Fields greeting");
    const editor = byLabel<HTMLTextAreaElement>(dialog, "Fields greeting (expression editor)");
    expect(editor.value).toBe(LONG);
    expect(editor.classList.contains("mono")).toBe(true);
    // Cancel leaves the field as it was and changes nothing.
    type(editor, "something else");
    click(buttonNamed(dialog, "Cancel"));
    await until(() => expect(dialogs()).toBe(0));
    expect(form.changes).toEqual([]);
    expect(byLabel<HTMLTextAreaElement>(form.root, "Fields: value of greeting").value).toBe(LONG);
    form.unmount();
  });

  test("the editor's data picker inserts at the cursor, and Save changes the config as typing would", async () => {
    const form = await drawForm({ fields: { greeting: "Hello , welcome", other: "x" } });
    click(byLabel(form.root, "Expand Fields greeting"));
    await until(() => expect(dialogs()).toBe(1));
    const dialog = document.querySelector<HTMLElement>('[role="dialog"]')!;
    const editor = byLabel<HTMLTextAreaElement>(dialog, "Fields greeting (expression editor)");
    editor.setSelectionRange(6, 6);
    const picker = byLabel<HTMLSelectElement>(dialog, "Insert data into Fields greeting");
    picker.value = "trigger.body.name";
    picker.dispatchEvent(new Event("change", { bubbles: true }));
    expect(editor.value).toBe("Hello {{trigger.body.name}}, welcome");
    // The cursor sits after what was inserted, so typing goes on from there.
    expect(editor.selectionStart).toBe(6 + "{{trigger.body.name}}".length);
    click(buttonNamed(dialog, "Save"));
    await until(() => expect(dialogs()).toBe(0));
    expect(form.changes).toEqual([{ fields: { greeting: "Hello {{trigger.body.name}}, welcome", other: "x" } }]);
    expect(byLabel<HTMLTextAreaElement>(form.root, "Fields: value of greeting").value).toBe("Hello {{trigger.body.name}}, welcome");
    form.unmount();
  });

  test("a one-line text field commits on Enter and opens in the wide editor too", async () => {
    const form = await drawForm({ fields: {} });
    const note = form.root.querySelector<HTMLTextAreaElement>("#cfg-greet-note")!;
    expect(note.tagName).toBe("TEXTAREA");
    note.dispatchEvent(new Event("focus"));
    type(note, "{{trigger.body.name}}");
    const enter = new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true });
    note.dispatchEvent(enter);
    expect(enter.defaultPrevented).toBe(true);
    expect(form.config()).toEqual({ fields: {}, note: "{{trigger.body.name}}" });

    click(byLabel(form.root, "Expand Note"));
    await until(() => expect(dialogs()).toBe(1));
    const dialog = document.querySelector<HTMLElement>('[role="dialog"]')!;
    const editor = byLabel<HTMLTextAreaElement>(dialog, "Note (expression editor)");
    expect(editor.value).toBe("{{trigger.body.name}}");
    type(editor, 'line one\n{{ "two" }}');
    // Ctrl+Enter saves from the keyboard.
    editor.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true, cancelable: true }));
    await until(() => expect(dialogs()).toBe(0));
    expect(form.config()).toEqual({ fields: {}, note: 'line one\n{{ "two" }}' });
    form.unmount();
  });
});

describe("the step's last production run", () => {
  const ID = "00000000-0000-4000-8000-000000000003";
  const WF = `/api/workflows/${ID}`;
  const workflow = workflowRecord({
    id: ID,
    name: "Greet",
    definition: {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "webhook",
        pieceId: "webhook",
        actionId: "catch_webhook",
        config: {},
        nextAction: { name: "greet", displayName: "Greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { greeting: LONG } } },
      },
      settings: {},
      variables: {},
      annotations: null,
      pinnedData: {},
    },
    status: "active",
    triggerType: "webhook",
    webhookToken: "tok",
    webhookUrl: "http://weft.test/webhook/tok",
    latestVersionId: "v1",
    hasUnpublishedChanges: false,
  });
  const run = (id: string, environment: string, steps: unknown[], name: string) => ({
    id,
    workflowId: ID,
    status: "completed",
    triggerType: "webhook",
    triggerData: { body: { name } },
    environment,
    startedAt: "2025-03-01T10:00:00Z",
    finishedAt: "2025-03-01T10:00:01Z",
    durationMs: 40,
    executedVersionNumber: 1,
    steps,
  });
  const greetStep = (runId: string, name: string, extra: Record<string, unknown> = {}) => ({
    id: `${runId}-s1`,
    nodeId: "greet",
    status: "completed",
    inputData: { fields: { greeting: `Hello ${name}` } },
    outputData: { greeting: `Hello ${name}` },
    durationMs: 12,
    ...extra,
  });

  /** The runs the fake server holds, newest first; the list honours `environment` as the server does. */
  let runs: ReturnType<typeof run>[] = [];
  const listRuns = (r: Recorded) => {
    const environment = r.query.get("environment") ?? "production";
    const matching = runs.filter((x) => r.query.get("workflowId") === ID && (environment === "all" || x.environment === environment));
    const limit = Number(r.query.get("limit") ?? 20);
    return { body: { data: matching.slice(0, limit).map(({ steps, ...summary }) => summary), pagination: { page: 1, limit, total: matching.length } } };
  };

  async function openEditor() {
    const { render, h } = await import("preact");
    const { EditorPage } = await import("../../public/src/pages/editor/editor-page");
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: workflow } }),
      "POST /api/workflows/validate": () => ({ body: { data: { valid: true, errors: [], warnings: [] } } }),
      "GET /api/pieces/data/actions/set_fields": () => ({ body: { data: setFieldsProjection } }),
      "GET /api/runs": listRuns,
      ...Object.fromEntries(runs.map((x) => [`GET /api/runs/${x.id}`, () => ({ body: { data: x } })])),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(EditorPage, { id: ID }), root);
    await until(() => expect(root.querySelector("[data-step=greet]")).not.toBeNull());
    return { root, unmount: () => render(null, root) };
  }
  const tab = (root: ParentNode, name: string) => [...root.querySelectorAll('[role="tab"]')].find((t) => t.textContent === name) as HTMLElement;

  test("shows the newest production run that reached the step, not a test run nor a run that stopped before it", async () => {
    runs = [
      run("run-test-1", "test", [greetStep("run-test-1", "Tess")], "Tess"),
      run("run-prod-3", "production", [], "Early stop"),
      run("run-prod-2", "production", [greetStep("run-prod-2", "Prod", { inputData: { fields: { greeting: "Hello Prod" } } })], "Prod"),
      run("run-prod-1", "production", [greetStep("run-prod-1", "Older")], "Older"),
    ];
    const { root, unmount } = await openEditor();
    click(root.querySelector("[data-step=greet]")!);
    await until(() => expect(tab(root, "Last test")).toBeDefined());
    expect(tab(root, "Last test").getAttribute("aria-selected")).toBe("true");
    expect(root.textContent).toContain("Run a test to see this step's input and output here.");

    click(tab(root, "Last production run"));
    await until(() => expect(byLabel(root, "Production output of greet").textContent).toContain("Hello Prod"));
    expect(tab(root, "Last production run").getAttribute("aria-selected")).toBe("true");
    const region = byLabel(root, "Last production run of greet");
    expect(region.querySelector(".badge")!.textContent).toBe("completed");
    expect(region.textContent).toContain("12 ms");
    expect(region.querySelector("a")!.getAttribute("href")).toBe("#/runs/run-prod-2");
    expect(byLabel(region, "Production input of greet").textContent).toContain("Hello Prod");
    // The newer test run (the fake server lists it for environment=test or all) is not shown here.
    expect(region.textContent).not.toContain("Tess");

    // The trigger's tab shows what the newest production run received.
    click(root.querySelector("[data-step=trigger]")!);
    await until(() => expect(byLabel(root, "Production output of trigger").textContent).toContain("Early stop"));

    // A new production run reaching the step shows after Refresh.
    runs.unshift(run("run-prod-4", "production", [greetStep("run-prod-4", "Newest", { status: "failed", errorMessage: "boom", outputData: null })], "Newest"));
    fake!.restore();
    unmount();
    const again = await openEditor();
    click(again.root.querySelector("[data-step=greet]")!);
    // The chosen tab stays chosen from step to step and across a reopen of the panel.
    await until(() => expect(byLabel(again.root, "Last production run of greet").textContent).toContain("boom"));
    expect(byLabel(again.root, "Last production run of greet").querySelector("a")!.getAttribute("href")).toBe("#/runs/run-prod-4");
    again.unmount();
  });

  test("Refresh picks up a run that arrived while the panel was open; no run yet is said in plain words", async () => {
    runs = [run("run-t-9", "test", [greetStep("run-t-9", "Tess")], "Tess")];
    const { root, unmount } = await openEditor();
    click(root.querySelector("[data-step=greet]")!);
    await until(() => expect(tab(root, "Last production run")).toBeDefined());
    click(tab(root, "Last production run"));
    await until(() =>
      expect(byLabel(root, "Last production run of greet").textContent).toContain(
        "No production run has reached this step yet — publish and trigger the workflow.",
      ),
    );
    const arrived = run("run-p-10", "production", [greetStep("run-p-10", "Late")], "Late");
    runs.unshift(arrived);
    fake!.restore();
    fake = fakeApi({
      "GET /api/runs": listRuns,
      "GET /api/runs/run-p-10": () => ({ body: { data: arrived } }),
    });
    click(byLabel(root, "Refresh the last production run of greet"));
    await until(() => expect(byLabel(root, "Production output of greet").textContent).toContain("Hello Late"));
    unmount();
  });
});
