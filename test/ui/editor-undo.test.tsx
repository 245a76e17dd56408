/**
 * Undo/redo and copy/duplicate/paste in the editor against a scripted server: an undo is saved like
 * any edit (PUT with expectedRev), typing in one field is one undo, a conflict pauses undo too, the
 * keys leave text fields alone, and the step menu duplicates and pastes.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, tick, until, useHappyDom, workflowRecord } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(async () => {
  // Let the last save's validation answer arrive from the fake, not from the network.
  await tick(30);
  fake?.restore();
  document.body.innerHTML = "";
});

const ID = "00000000-0000-4000-8000-000000000002";
const WF = `/api/workflows/${ID}`;
const definition = () => ({
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "manual",
    config: {},
    nextAction: {
      name: "greet",
      displayName: "Greet",
      type: "PIECE",
      pieceId: "text",
      actionId: "template",
      config: { template: "Hi" },
      nextAction: { name: "reply", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "{{greet.output}}" } },
    },
  },
});
const workflow = (rev: number, def: unknown = definition()) => workflowRecord({ id: ID, name: "Undo", definition: def, definitionRev: rev });

/** A server that keeps the draft and its revision, refusing a stale expectedRev as the real one does. */
function server() {
  const state = { rev: 1, def: definition() as any };
  fake = fakeApi({
    [`GET ${WF}`]: () => ({ body: { data: workflow(state.rev, state.def) } }),
    [`PUT ${WF}`]: (r) => {
      if (r.body.expectedRev !== state.rev)
        return {
          status: 409,
          body: { error: { code: "REVISION_CONFLICT", message: `expectedRev ${r.body.expectedRev} is stale; the current definitionRev is ${state.rev}` } },
        };
      state.def = r.body.definition ?? state.def;
      state.rev++;
      return { body: { data: workflow(state.rev, state.def) } };
    },
    // Restoring version v1 brings back the original draft as a new revision.
    [`POST ${WF}/versions/v1/restore`]: (r) => {
      if (r.body.expectedRev !== state.rev) return { status: 409, body: { error: { code: "REVISION_CONFLICT", message: "stale" } } };
      state.def = definition();
      state.rev++;
      return { body: { data: workflow(state.rev, state.def) } };
    },
    "POST /api/workflows/validate": () => ({ body: { data: { valid: true, errors: [], warnings: [] } } }),
    "GET /api/pieces": () => ({ body: { data: [] } }),
  });
  return state;
}

const names = (def: any): string[] => {
  const out: string[] = [];
  for (let node = def.trigger; node; node = node.nextAction) out.push(node.name);
  return out;
};

describe("undo and redo in the editor store", () => {
  test("an undo is saved like any edit, with the revision of the save before it; redo too", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { removeStep } = await import("../../public/src/pages/editor/tree");
    const state = server();
    const store = createEditorStore(ID);
    await store.load();
    expect(store.canUndo.value).toBe(false);
    store.change(removeStep(store.definition.value!, "greet"));
    await store.flush();
    expect(names(state.def)).toEqual(["trigger", "reply"]);
    expect(store.canUndo.value).toBe(true);

    expect(store.undo()).toBe(true);
    expect(names(store.definition.value)).toEqual(["trigger", "greet", "reply"]);
    expect(store.saveState.value).toBe("pending");
    await store.flush();
    expect(names(state.def)).toEqual(["trigger", "greet", "reply"]);
    const puts = fake!.calls.filter((c) => c.method === "PUT");
    expect(puts.map((p) => p.body.expectedRev)).toEqual([1, 2]);
    expect(store.canUndo.value).toBe(false);
    expect(store.canRedo.value).toBe(true);

    expect(store.redo()).toBe(true);
    await store.flush();
    expect(names(state.def)).toEqual(["trigger", "reply"]);
    expect(store.redo()).toBe(false);
  });

  test("edits of one text field in quick succession are one undo; an edit of another kind is its own", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { updateStep } = await import("../../public/src/pages/editor/tree");
    server();
    const store = createEditorStore(ID);
    await store.load();
    const template = (text: string) =>
      store.change(
        updateStep(store.definition.value!, "greet", (n) => {
          n.config = { template: text };
        }),
      );
    store.change(
      updateStep(store.definition.value!, "greet", (n) => {
        n.skip = true;
      }),
    );
    template("Hi t");
    template("Hi th");
    template("Hi there");
    store.undo();
    expect((store.definition.value as any).trigger.nextAction.config).toEqual({ template: "Hi" });
    expect((store.definition.value as any).trigger.nextAction.skip).toBe(true);
    store.undo();
    expect((store.definition.value as any).trigger.nextAction.skip).toBeUndefined();
    await store.flush();
  });

  test("while a conflict pauses editing, undo does nothing and sends nothing", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { removeStep } = await import("../../public/src/pages/editor/tree");
    const state = server();
    const store = createEditorStore(ID);
    await store.load();
    state.rev = 9; // someone else saved meanwhile
    store.change(removeStep(store.definition.value!, "greet"));
    await store.save();
    expect(store.saveState.value).toBe("conflict");
    expect(store.undo()).toBe(false);
    expect(names(store.definition.value)).toEqual(["trigger", "reply"]);
    await tick(50);
    expect(fake!.calls.filter((c) => c.method === "PUT")).toHaveLength(1);
    // Loading their version starts a fresh history: nothing of ours is left to undo onto it.
    await store.reload();
    expect(store.canUndo.value).toBe(false);
  });
});

describe("restore and router branches", () => {
  test("a restore is undone like an edit: the draft before it is saved back on top of the restored revision", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { removeStep } = await import("../../public/src/pages/editor/tree");
    const state = server();
    const store = createEditorStore(ID);
    await store.load();
    store.change(removeStep(store.definition.value!, "reply"));
    await store.flush();
    await store.restore("v1");
    expect(names(store.definition.value)).toEqual(["trigger", "greet", "reply"]);
    expect(state.rev).toBe(3);
    expect(store.undo()).toBe(true);
    await store.flush();
    expect(names(state.def)).toEqual(["trigger", "greet"]);
    expect(fake!.calls.filter((c) => c.method === "PUT").map((c) => c.body.expectedRev)).toEqual([1, 3]);
  });

  test("a branch's steps are copied as one block; duplicating a branch copies its conditions and renames its steps", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { copyBranch, duplicateBranch, pasteAt } = await import("../../public/src/pages/editor/editor-commands");
    const state = server();
    state.def = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: {
          name: "route",
          type: "ROUTER",
          config: {},
          branches: [
            {
              name: "Big",
              conditions: [[{ field: "{{trigger.body.n}}", operator: "number_gt", value: 10 }]],
              firstAction: {
                name: "big",
                type: "PIECE",
                pieceId: "text",
                actionId: "template",
                config: {},
                nextAction: { name: "after_big", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "{{big.output}}" } },
              },
            },
            { name: "Otherwise", conditions: [] },
          ],
        },
      },
    };
    const store = createEditorStore(ID);
    await store.load();
    await copyBranch(store, "route", 0);
    expect(store.notice.value?.text).toContain("Copied 2 steps of branch Big");
    await pasteAt(store, { owner: "route", kind: "branch", branch: 1 });
    const otherwise = (store.definition.value as any).trigger.nextAction.branches[1].firstAction;
    expect([otherwise.name, otherwise.nextAction.name, otherwise.nextAction.config.template]).toEqual(["big_2", "after_big_2", "{{big_2.output}}"]);

    duplicateBranch(store, "route", 0);
    const branches = (store.definition.value as any).trigger.nextAction.branches;
    expect(branches.map((b: any) => b.name)).toEqual(["Big", "Big copy", "Otherwise"]);
    expect(branches[1].conditions).toEqual(branches[0].conditions);
    expect([branches[1].firstAction.name, branches[1].firstAction.nextAction.name]).toEqual(["big_3", "after_big_3"]);
    expect(store.undo()).toBe(true);
    expect((store.definition.value as any).trigger.nextAction.branches).toHaveLength(2);
    await store.flush();
  });
});

describe("editor keys and step menu", () => {
  async function open() {
    const { render, h } = await import("preact");
    const { EditorPage } = await import("../../public/src/pages/editor/editor-page");
    server();
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(EditorPage, { id: ID }), root);
    await until(() => expect(root.querySelector("[data-step=greet]") !== null).toBe(true));
    // Names, not elements: a failed check formats what it received, and an element drags the whole page along.
    const steps = () => [...root.querySelectorAll("[data-step]")].map((node) => node.getAttribute("data-step"));
    const button = (name: string) => [...root.querySelectorAll("button")].find((b) => b.textContent?.includes(name)) as HTMLButtonElement;
    const close = async () => {
      await until(() => expect(root.querySelector(".save-state")?.textContent).toBe("All changes saved"), 3000);
      render(null, root);
    };
    return { root, steps, button, close };
  }
  const key = (target: EventTarget, init: KeyboardEventInit) =>
    target.dispatchEvent(new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init }));

  test("Ctrl+Z and Ctrl+Shift+Z undo and redo; the toolbar buttons say so and are disabled with nothing to do", async () => {
    const { root, steps, button, close } = await open();
    expect(button("Undo").disabled).toBe(true);
    expect(button("Undo").title).toBe("Undo (Ctrl+Z)");
    expect(button("Redo").title).toBe("Redo (Ctrl+Shift+Z or Ctrl+Y)");

    (root.querySelector("[data-step=reply]") as HTMLElement).click();
    await until(() => expect(button("Delete step") !== undefined).toBe(true));
    button("Delete step").click();
    await until(() => expect(steps()).toEqual(["trigger", "greet"]));
    expect(button("Undo").disabled).toBe(false);

    key(document.body, { key: "z", ctrlKey: true });
    await until(() => expect(steps()).toEqual(["trigger", "greet", "reply"]));
    expect(button("Redo").disabled).toBe(false);
    key(document.body, { key: "Z", ctrlKey: true, shiftKey: true });
    await until(() => expect(steps()).toEqual(["trigger", "greet"]));
    key(document.body, { key: "z", metaKey: true });
    await until(() => expect(steps()).toEqual(["trigger", "greet", "reply"]));
    key(document.body, { key: "y", ctrlKey: true });
    await until(() => expect(steps()).toEqual(["trigger", "greet"]));
    await close();
  });

  test("in a text field Ctrl+Z is the field's own undo, not the editor's", async () => {
    const { root, steps, button, close } = await open();
    (root.querySelector("[data-step=reply]") as HTMLElement).click();
    await until(() => expect(button("Delete step") !== undefined).toBe(true));
    button("Delete step").click();
    await until(() => expect(steps()).toEqual(["trigger", "greet"]));
    const name = root.querySelector<HTMLInputElement>(".title-input")!;
    name.focus();
    const handled = !key(name, { key: "z", ctrlKey: true });
    expect(handled).toBe(false);
    await tick(20);
    expect(steps()).toEqual(["trigger", "greet"]);
    await close();
  });

  test("Duplicate in a step's menu adds a renamed copy after it, selected; undo takes it away", async () => {
    const { root, steps, close } = await open();
    (root.querySelector('[aria-label="Actions of step Greet"]') as HTMLButtonElement).click();
    await until(() => expect(root.querySelector('[role="menu"]') !== null).toBe(true));
    const items = [...root.querySelectorAll('[role="menuitem"]')].map((b) => b.textContent);
    expect(items).toEqual(["Copy", "Duplicate", "Paste after"]);
    ([...root.querySelectorAll('[role="menuitem"]')].find((b) => b.textContent === "Duplicate") as HTMLButtonElement).click();
    await until(() => expect(steps()).toEqual(["trigger", "greet", "greet_2", "reply"]));
    expect(root.querySelector('[role="menu"]') === null).toBe(true);
    expect(root.querySelector("[data-step=greet_2]")!.getAttribute("aria-pressed")).toBe("true");
    expect(root.querySelector('[role="status"].editor-notice')!.textContent).toContain("Duplicated 1 step (renamed: greet → greet_2)");
    key(document.body, { key: "z", ctrlKey: true });
    await until(() => expect(steps()).toEqual(["trigger", "greet", "reply"]));
    await close();
  });

  test("pasting text that holds no steps says so and changes nothing; Weft steps paste as one undo", async () => {
    const state = server();
    const { pasteText } = await import("../../public/src/pages/editor/editor-commands");
    const { encodeSteps } = await import("../../public/src/pages/editor/step-clipboard");
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const store = createEditorStore(ID);
    await store.load();
    pasteText(store, { owner: "trigger", kind: "next" }, "just some text");
    expect(store.notice.value).toEqual({ kind: "error", text: expect.stringContaining("not JSON") });
    expect(store.canUndo.value).toBe(false);

    const copied = [
      { name: "greet", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "Yo" } },
      { name: "echo", type: "PIECE", pieceId: "text", actionId: "template", config: { template: "{{greet.output}}" } },
    ];
    pasteText(store, { owner: "reply", kind: "next" }, encodeSteps(copied as any));
    expect(names(store.definition.value)).toEqual(["trigger", "greet", "reply", "greet_2", "echo"]);
    expect(store.selected.value).toBe("greet_2");
    await store.flush();
    expect(names(state.def)).toEqual(["trigger", "greet", "reply", "greet_2", "echo"]);
    expect(state.def.trigger.nextAction.nextAction.nextAction.nextAction.config).toEqual({ template: "{{greet_2.output}}" });
    store.undo();
    expect(names(store.definition.value)).toEqual(["trigger", "greet", "reply"]);
    await store.flush();
    expect(names(state.def)).toEqual(["trigger", "greet", "reply"]);
  });
});
