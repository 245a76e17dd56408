/**
 * The shared pieces a page builds its lists and forms from (CONTRIBUTING.md, "Add a page that calls the API"):
 * <Table> gives the column heads a user and a screen reader see, and bindText / bindSelect / bindChecked keep
 * a field and its signal in step both ways — what is typed lands in the signal, what the signal holds is shown.
 */
import { expect, test } from "bun:test";
import { useHappyDom } from "./fake-api";

useHappyDom();

test("a Table shows its column heads, an actions column named for screen readers only, and its rows", async () => {
  const { render, h } = await import("preact");
  const { Table } = await import("../../public/src/components/table");
  const root = document.createElement("div");
  render(
    h(
      Table,
      { label: "Allowed ranges", columns: ["Range", "Since"], actions: "Actions" },
      h("tr", { "data-range": "10.0.0.0/8" }, h("td", null, "10.0.0.0/8")),
    ),
    root,
  );
  const table = root.querySelector("table");
  expect(table?.getAttribute("class")).toBe("table");
  expect(table?.getAttribute("aria-label")).toBe("Allowed ranges");
  expect([...root.querySelectorAll('thead th[scope="col"]')].map((th) => th.textContent)).toEqual(["Range", "Since", "Actions"]);
  expect(root.querySelector("thead th span.sr-only")?.textContent).toBe("Actions");
  expect(root.querySelector('tbody tr[data-range="10.0.0.0/8"]')?.textContent).toBe("10.0.0.0/8");

  render(h(Table, { class: "variables", columns: ["Name"] }, null), root);
  expect(root.querySelector("table")?.getAttribute("class")).toBe("table variables");
  expect(root.querySelector("table")?.hasAttribute("aria-label")).toBe(false);
  expect(root.querySelectorAll("thead th")).toHaveLength(1);
});

test("bindText, bindSelect and bindChecked carry what the user enters into the signal, and the signal into the field", async () => {
  const { render, h } = await import("preact");
  const { act } = await import("preact/test-utils");
  const { signal } = await import("@preact/signals");
  const { bindChecked, bindSelect, bindText } = await import("../../public/src/bind");

  const name = signal("first");
  const role = signal("viewer");
  const all = signal(false);
  let pageResets = 0;
  function Form() {
    return h(
      "form",
      null,
      h("input", { "aria-label": "Name", ...bindText(name) }),
      h(
        "select",
        { "aria-label": "Role", ...bindSelect(role, () => pageResets++) },
        h("option", { value: "viewer" }, "viewer"),
        h("option", { value: "admin" }, "admin"),
      ),
      h("input", { type: "checkbox", "aria-label": "All", ...bindChecked(all) }),
    );
  }
  const root = document.createElement("div");
  document.body.append(root);
  await act(() => render(h(Form, null), root));
  const input = root.querySelector<HTMLInputElement>('input[aria-label="Name"]')!;
  const select = root.querySelector<HTMLSelectElement>("select")!;
  const box = root.querySelector<HTMLInputElement>('input[type="checkbox"]')!;
  expect(input.value).toBe("first");

  await act(() => {
    input.value = "typed";
    input.dispatchEvent(new Event("input", { bubbles: true }));
    select.value = "admin";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    box.checked = true;
    box.dispatchEvent(new Event("change", { bubbles: true }));
  });
  expect([name.value, role.value, all.value, pageResets]).toEqual(["typed", "admin", true, 1]);

  await act(() => {
    name.value = "";
  });
  expect(input.value).toBe("");
  root.remove();
});

test("a ConfirmButton acts only when the user says yes to its question, and is named for screen readers", async () => {
  const { render, h } = await import("preact");
  const { ConfirmButton } = await import("../../public/src/components/confirm-button");
  const asked: string[] = [];
  let answer = false;
  const original = globalThis.confirm;
  globalThis.confirm = (question?: string) => {
    asked.push(String(question));
    return answer;
  };
  try {
    let deleted = 0;
    const root = document.createElement("div");
    render(h(ConfirmButton, { label: "Delete Nightly sync", question: "Delete Nightly sync?", onConfirm: () => deleted++, children: "Delete" }), root);
    const button = root.querySelector("button")!;
    expect([button.getAttribute("class"), button.getAttribute("aria-label"), button.textContent]).toEqual(["small danger", "Delete Nightly sync", "Delete"]);
    button.click();
    expect([asked, deleted]).toEqual([["Delete Nightly sync?"], 0]);
    answer = true;
    button.click();
    expect(deleted).toBe(1);
  } finally {
    globalThis.confirm = original;
  }
});
