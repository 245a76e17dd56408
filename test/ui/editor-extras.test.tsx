/**
 * The editor's later additions against a scripted server: dynamic options of a trigger's field
 * (reloaded when a refresher changes), the variables dialog (secrets stay masked and are kept when
 * not retyped), and name/tags saved in the same expectedRev chain as the draft.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, tick, until, useHappyDom } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const ID = "00000000-0000-4000-8000-000000000002";
const WF = `/api/workflows/${ID}`;

const input = (root: Element, label: string) => {
  const el = root.querySelector<HTMLInputElement>(`[aria-label="${label}"]`);
  if (!el) throw new Error(`no control labelled ${label}`);
  return el;
};
const type = (el: HTMLInputElement, value: string) => {
  el.value = value;
  el.dispatchEvent(new Event("input", { bubbles: true }));
};

describe("trigger fields with dynamic options", () => {
  test("choices come from the trigger's options endpoint and reload when a refresher changes", async () => {
    const { render, h } = await import("preact");
    const { ConfigForm } = await import("../../public/src/pages/editor/config-form");
    fake = fakeApi({
      "GET /api/pieces/inbox/triggers/new_mail": () => ({
        body: {
          data: {
            pieceId: "inbox",
            pieceVersion: "1.0.0",
            id: "new_mail",
            name: "New mail",
            description: "",
            inputSchema: {
              type: "object",
              properties: { account: { type: "string", enum: ["work", "home"] }, folder: { type: "string", displayName: "Folder", refreshers: ["account"] } },
              required: ["folder"],
            },
            outputSchema: { type: "object", properties: {}, required: [] },
            sampleData: {},
            filteredBy: {},
            ignored: [],
            unresolved: [],
            conditionalFields: [],
            dynamicFields: ["folder"],
          },
        },
      }),
      "POST /api/pieces/inbox/triggers/new_mail/options/folder": (r) => ({
        body: { data: { options: [{ label: `${r.body.config.account ?? "any"}/inbox`, value: `${r.body.config.account ?? "any"}/inbox` }] } },
      }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    let config: Record<string, unknown> = { account: "work" };
    const draw = () =>
      render(
        h(ConfigForm, {
          kind: "triggers",
          pieceId: "inbox",
          actionId: "new_mail",
          stepName: "trigger",
          config,
          paths: [],
          onChange: (next) => {
            config = next;
            draw();
          },
        }),
        root,
      );
    draw();
    await until(() => expect(root.querySelector("#cfg-trigger-folder")?.textContent).toContain("work/inbox"));
    const select = root.querySelector<HTMLSelectElement>("#cfg-trigger-folder")!;
    select.value = JSON.stringify("work/inbox");
    select.dispatchEvent(new Event("change", { bubbles: true }));
    expect(config.folder).toBe("work/inbox");

    const account = root.querySelector<HTMLSelectElement>("#cfg-trigger-account")!;
    account.value = JSON.stringify("home");
    account.dispatchEvent(new Event("change", { bubbles: true }));
    await until(() => expect(root.querySelector("#cfg-trigger-folder")?.textContent).toContain("home/inbox"));
    const posts = fake.calls.filter((c) => c.method === "POST");
    expect(posts.map((c) => c.body.config.account)).toEqual(["work", "home"]);
    render(null, root);
  });
});

describe("variables dialog", () => {
  test("secrets are shown as stored, sent back without a value, and bad names are refused before saving", async () => {
    const { render, h } = await import("preact");
    const { VariablesDialog } = await import("../../public/src/pages/editor/variables-dialog");
    const stored = [
      { name: "api_key", value: null, secret: true, description: "", updatedAt: "2025-01-01T00:00:00Z" },
      { name: "limit", value: 5, secret: false, description: "max items", updatedAt: "2025-01-01T00:00:00Z" },
    ];
    fake = fakeApi({
      [`GET ${WF}/variables`]: () => ({ body: { data: stored, total: 2 } }),
      [`PUT ${WF}/variables`]: (r) => ({ body: { data: r.body.variables.map((v: any) => ({ ...v, value: v.secret ? null : v.value, updatedAt: "x" })) } }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(VariablesDialog, { workflowId: ID, onClose: () => undefined }), root);
    await until(() => expect(root.querySelector('[aria-label="Value of api_key"]')).not.toBeNull());
    expect(input(root, "Value of api_key").value).toBe("");
    expect(input(root, "Value of api_key").placeholder).toContain("stored");
    expect(input(root, "Value of api_key").type).toBe("password");
    expect(input(root, "Value of limit").value).toBe("5");

    type(input(root, "Value of limit"), "7");
    root.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    await until(() => expect(root.textContent).toContain("Variables saved."));
    const put = fake.calls.find((c) => c.method === "PUT")!;
    expect(put.body.variables).toEqual([
      { name: "api_key", secret: true, description: "" },
      { name: "limit", secret: false, description: "max items", value: 7 },
    ]);

    type(input(root, "Name of variable 2"), "9lives");
    root.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    await until(() => expect(root.querySelector('[role="alert"]')?.textContent).toContain("not a usable name"));
    expect(fake.calls.filter((c) => c.method === "PUT")).toHaveLength(1);
    render(null, root);
  });
});

describe("name and tags", () => {
  test("go in the same PUT as a pending draft, with expectedRev, so the editor never conflicts with itself", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    const { updateStep } = await import("../../public/src/pages/editor/tree");
    let rev = 3;
    const held: any = {
      name: "Greet",
      tags: [],
      definition: {
        schemaVersion: 2,
        trigger: { name: "trigger", type: "manual", config: {}, nextAction: { name: "a", type: "PIECE", pieceId: "text", actionId: "template", config: {} } },
      },
    };
    const record = (body: any = {}) => {
      for (const key of ["name", "tags", "definition"]) if (body[key] !== undefined) held[key] = body[key];
      return {
        id: ID,
        name: held.name,
        description: "",
        status: "draft",
        triggerType: "manual",
        webhookToken: null,
        latestVersionId: null,
        definition: held.definition,
        definitionRev: rev,
        hasUnpublishedChanges: true,
        folderId: null,
        tags: held.tags,
        createdAt: "",
        updatedAt: "",
        lastRun: null,
      };
    };
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: record() } }),
      [`PUT ${WF}`]: (r) => {
        if (r.body.expectedRev !== rev) return { status: 409, body: { error: { code: "REVISION_CONFLICT", message: "stale" } } };
        rev++;
        return { body: { data: record(r.body) } };
      },
      "POST /api/workflows/validate": () => ({ body: { data: { valid: true, errors: [], warnings: [] } } }),
    });
    const store = createEditorStore(ID);
    await store.load();
    store.change(
      updateStep(store.definition.value!, "a", (n) => {
        n.config = { template: "x" };
      }),
    );
    store.setTags(["ops"]);
    await until(() => expect(store.saveState.value).toBe("saved"));
    store.rename("Greeter");
    await until(() => expect(store.saveState.value).toBe("saved"));
    const puts = fake.calls.filter((c) => c.method === "PUT").map((c) => c.body);
    expect(puts).toHaveLength(2);
    expect(puts[0]).toMatchObject({ tags: ["ops"], expectedRev: 3, definition: { trigger: { nextAction: { config: { template: "x" } } } } });
    expect(puts[1]).toEqual({ name: "Greeter", expectedRev: 4 });
    expect(store.workflow.value).toMatchObject({ name: "Greeter", tags: ["ops"], definitionRev: 5 });
  });
});

describe("publish and restore", () => {
  const definition = { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {} } };
  const wf = (extra: Record<string, unknown>) => ({
    id: ID,
    name: "W",
    status: "active",
    definition,
    definitionRev: 3,
    latestVersionId: "v2",
    latestVersionNumber: 2,
    tags: [],
    hasUnpublishedChanges: false,
    ...extra,
  });

  test("a restore clicked while a publish is in flight is not overwritten by the publish's answer", async () => {
    const { createEditorStore } = await import("../../public/src/pages/editor/editor-store");
    let releasePublish!: () => void;
    const publishAnswered = new Promise<void>((resolve) => {
      releasePublish = resolve;
    });
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: wf({ hasUnpublishedChanges: true }) } }),
      "POST /api/workflows/validate": () => ({ body: { data: { valid: true, errors: [], warnings: [] } } }),
      [`POST ${WF}/publish`]: async () => {
        await publishAnswered;
        return { body: { data: wf({ hasUnpublishedChanges: false, definitionRev: 3 }) } };
      },
      [`POST ${WF}/versions/v1/restore`]: () => ({ body: { data: wf({ hasUnpublishedChanges: true, definitionRev: 4 }) } }),
    });
    const store = createEditorStore(ID);
    await store.load();
    const publishing = store.publish();
    const restoring = store.restore("v1");
    // The publish answers late, as a slow server's would (after the restore, had the restore not waited).
    await tick(30);
    releasePublish();
    await Promise.all([publishing, restoring]);
    // The restore ran after the publish, so what is shown is the restored draft with unpublished changes.
    const order = fake.calls.filter((c) => c.method === "POST" && c.path.startsWith(WF)).map((c) => c.path.slice(WF.length));
    expect(order).toEqual(["/publish", "/versions/v1/restore"]);
    expect(store.workflow.value!.hasUnpublishedChanges).toBe(true);
    expect(store.workflow.value!.definitionRev).toBe(4);
    store.dispose();
  });

  test("the publish button says Published and is disabled when the live version is the draft", async () => {
    const { render, h } = await import("preact");
    const { EditorPage } = await import("../../public/src/pages/editor/editor-page");
    let current = wf({ hasUnpublishedChanges: true });
    fake = fakeApi({
      [`GET ${WF}`]: () => ({ body: { data: current } }),
      "POST /api/workflows/validate": () => ({ body: { data: { valid: true, errors: [], warnings: [] } } }),
      [`POST ${WF}/publish`]: () => {
        current = wf({ hasUnpublishedChanges: false });
        return { body: { data: current } };
      },
      "GET /api/pieces": () => ({ body: { data: [], total: 0 } }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(EditorPage, { id: ID }), root);
    const publishButton = () => [...root.querySelectorAll("button")].find((b) => /^Publish|^Published/.test(b.textContent ?? ""));
    await until(() => expect(publishButton()?.textContent).toBe("Publish changes"));
    expect(publishButton()!.disabled).toBe(false);
    publishButton()!.click();
    await until(() => expect(publishButton()?.textContent).toBe("Published"));
    expect(publishButton()!.disabled).toBe(true);
    render(null, root);
  });
});
