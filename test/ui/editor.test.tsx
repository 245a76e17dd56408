/**
 * The editor against a scripted server: autosave with expectedRev, a conflict shown and never
 * overwritten silently, diagnostics drawn on the steps they name, router branches side by side,
 * keyboard movement between steps, and a config form generated from the projection.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, tick, until, useHappyDom, workflowRecord } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const definition = () => ({
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    displayName: "Incoming call",
    type: "webhook",
    pieceId: "webhook",
    actionId: "catch_webhook",
    config: {},
    nextAction: {
      name: "route",
      displayName: "Route",
      type: "ROUTER",
      config: {},
      branches: [
        {
          name: "Big",
          conditions: [[{ field: "{{trigger.body.n}}", operator: "number_gt", value: 10 }]],
          firstAction: { name: "big", type: "PIECE", pieceId: "text", actionId: "template", config: {} },
        },
        { name: "Otherwise", conditions: [], firstAction: { name: "small", type: "PIECE", pieceId: "text", actionId: "template", config: {} } },
      ],
    },
  },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});

const workflow = (rev: number, def = definition()) =>
  workflowRecord({
    id: "00000000-0000-4000-8000-000000000001",
    name: "Greet",
    definition: def,
    triggerType: "webhook",
    webhookToken: "tok",
    webhookUrl: "http://weft.test/webhook/tok",
    definitionRev: rev,
  });
const WF = "/api/workflows/00000000-0000-4000-8000-000000000001";
const diagnostics = {
  valid: false,
  errors: [{ path: "trigger.nextAction.branches[0].firstAction.config.template", code: "REQUIRED", message: "template is required" }],
  warnings: [],
};

describe("editor store", () => {
  test("autosave sends the draft with expectedRev, once, after the user stops typing", async () => {
    const { createEditorStore, AUTOSAVE_DELAY_MS } = await import("../../public/src/pages/editor/editor-store");
    const { updateStep } = await import("../../public/src/pages/editor/tree");
    let rev = 4;
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: workflow(rev) } }),
      [`PUT ${WF}`]: (r) => ({ body: { data: workflow(++rev, r.body.definition) } }),
      "POST /api/workflows/validate": () => ({ body: { data: diagnostics } }),
    });
    const store = createEditorStore("00000000-0000-4000-8000-000000000001");
    await store.load();
    store.change(
      updateStep(store.definition.value!, "big", (n) => {
        n.config = { template: "a" };
      }),
    );
    store.change(
      updateStep(store.definition.value!, "big", (n) => {
        n.config = { template: "ab" };
      }),
    );
    expect(store.saveState.value).toBe("pending");
    await until(() => expect(store.saveState.value).toBe("saved"), AUTOSAVE_DELAY_MS + 2000);
    const puts = fake.calls.filter((c) => c.method === "PUT");
    expect(puts).toHaveLength(1);
    expect(puts[0]!.body.expectedRev).toBe(4);
    expect(puts[0]!.body.definition.trigger.nextAction.branches[0].firstAction.config).toEqual({ template: "ab" });
    expect(store.workflow.value!.definitionRev).toBe(5);
  });

  test("a stale revision stops autosave and is shown as a conflict; nothing is overwritten silently", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { updateStep } = await import("../../public/src/pages/editor/tree");
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: workflow(7) } }),
      [`PUT ${WF}`]: () => ({ status: 409, body: { error: { code: "REVISION_CONFLICT", message: "expectedRev 7 is stale; the current definitionRev is 8" } } }),
      "POST /api/workflows/validate": () => ({ body: { data: { valid: true, errors: [], warnings: [] } } }),
    });
    const store = createEditorStore("00000000-0000-4000-8000-000000000001");
    await store.load();
    store.change(
      updateStep(store.definition.value!, "big", (n) => {
        n.displayName = "Mine";
      }),
    );
    await store.save();
    expect(store.saveState.value).toBe("conflict");
    expect((store.saveError.value as Error).message).toContain("current definitionRev is 8");
    store.change(
      updateStep(store.definition.value!, "big", (n) => {
        n.displayName = "Mine again";
      }),
    );
    await tick(50);
    expect(fake.calls.filter((c) => c.method === "PUT")).toHaveLength(1);
    await expect(store.flush()).rejects.toThrow("stale");
  });

  test("diagnostics are grouped by the step their path names", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: workflow(1) } }),
      "POST /api/workflows/validate": () => ({ body: { data: diagnostics } }),
    });
    const store = createEditorStore("00000000-0000-4000-8000-000000000001");
    await store.load();
    await until(() => expect(store.diagnostics.value).not.toBeNull());
    expect(store.diagnosticsByStep.value.get("big")![0]!.message).toBe("template is required");
    expect(store.diagnosticsByStep.value.has("small")).toBe(false);
  });
});

describe("editor screen", () => {
  test("draws router branches side by side with labelled add buttons and problems on their step", async () => {
    const { render, h } = await import("preact");
    const { EditorPage } = await import("../../public/src/pages/editor/editor-page");
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: workflow(1) } }),
      "POST /api/workflows/validate": () => ({ body: { data: diagnostics } }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(EditorPage, { id: "00000000-0000-4000-8000-000000000001" }), root);
    await until(() => expect(root.querySelector(".branches")).not.toBeNull());
    const branches = root.querySelectorAll(".branches > .branch");
    expect(branches.length).toBe(2);
    expect(branches[0]!.querySelector("[data-step=big]")).not.toBeNull();
    expect(branches[1]!.querySelector("[data-step=small]")).not.toBeNull();
    expect(root.querySelector('[aria-label="Add a step in branch Big of route"]')).not.toBeNull();
    expect(root.querySelector('[aria-label="Add a step after Route"]')).not.toBeNull();
    await until(() => expect(root.querySelector("[data-step=big]")!.getAttribute("aria-label")).toContain("1 problem"));
    expect((root.querySelector("#webhook-url") as HTMLInputElement).value).toBe("http://weft.test/webhook/tok");

    // Arrow keys move between steps in execution order.
    const trigger = root.querySelector<HTMLElement>("[data-step=trigger]")!;
    trigger.focus();
    trigger.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
    expect(document.activeElement?.getAttribute("data-step")).toBe("route");
    render(null, root);
  });

  test("the config form is generated from the projection, narrowed by the chosen gate value", async () => {
    const { render, h } = await import("preact");
    const { ConfigForm } = await import("../../public/src/pages/editor/config-form");
    const projection = (bodyType?: string) => ({
      pieceId: "http",
      pieceVersion: "1.0.0",
      id: "send_request",
      name: "Send request",
      description: "",
      inputSchema: {
        type: "object",
        properties: {
          url: { type: "string", description: "Where to send it" },
          body_type: { type: "string", enum: ["none", "json"], enumLabels: { none: "No body", json: "JSON" } },
          ...(bodyType === "json" ? { json_body: { type: "json" } } : {}),
        },
        required: ["url"],
      },
      outputSchema: { type: "object", properties: {}, required: [] },
      sampleData: {},
      filteredBy: {},
      ignored: [],
      unresolved: bodyType ? [] : ["body_type"],
      conditionalFields: [],
      dynamicFields: [],
    });
    fake = fakeApi({ "GET /api/pieces/http/actions/send_request": (r) => ({ body: { data: projection(r.query.get("body_type") ?? undefined) } }) });
    const root = document.createElement("div");
    document.body.appendChild(root);
    let config: Record<string, unknown> = {};
    const draw = () =>
      render(
        h(ConfigForm, {
          kind: "actions",
          pieceId: "http",
          actionId: "send_request",
          stepName: "fetch",
          config,
          paths: [{ label: "trigger.body", expression: "trigger.body" }],
          onChange: (next) => {
            config = next;
            draw();
          },
        }),
        root,
      );
    draw();
    await until(() => expect(root.querySelector("#cfg-fetch-url")).not.toBeNull());
    expect(root.querySelector('label[for="cfg-fetch-url"]')!.textContent).toContain("(required)");
    expect(root.querySelector("#cfg-fetch-json_body")).toBeNull();
    expect(root.textContent).toContain("More fields may appear once you choose: body_type");
    const select = root.querySelector<HTMLSelectElement>("#cfg-fetch-body_type")!;
    select.value = JSON.stringify("json");
    select.dispatchEvent(new Event("change", { bubbles: true }));
    expect(config).toEqual({ body_type: "json" });
    await until(() => expect(root.querySelector("#cfg-fetch-json_body")).not.toBeNull());
    expect(fake.calls.at(-1)!.query.get("body_type")).toBe("json");

    // The data picker inserts an expression into the field.
    const picker = root.querySelector<HTMLSelectElement>('select[aria-label="Insert data into Url"]')!;
    picker.value = "trigger.body";
    picker.dispatchEvent(new Event("change", { bubbles: true }));
    expect(config.url).toBe("{{trigger.body}}");
    render(null, root);
  });
});
