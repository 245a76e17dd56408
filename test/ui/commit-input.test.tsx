/**
 * The editor's text fields that commit on change (a step's display name and name): what the user typed
 * survives a re-render before the change event (a validation answer arriving between typing and Tab used
 * to put the stored value back, and the edit was lost without a save).
 */
import { expect, test } from "bun:test";
import { useHappyDom } from "./fake-api";

useHappyDom();

test("typed text survives a re-render before it is committed; outside an edit the field follows its value", async () => {
  const { render, h } = await import("preact");
  const { act } = await import("preact/test-utils");
  const { CommitInput } = await import("../../public/src/components/commit-input");
  const commits: string[] = [];
  const root = document.createElement("div");
  document.body.append(root);
  // The parent re-renders with the stored value, as the step panel does when diagnostics arrive.
  const draw = (value: string, note: string) =>
    act(() => render(h("div", null, h("p", null, note), h(CommitInput, { id: "display", value, onCommit: (t: string) => commits.push(t) })), root));
  draw("Template", "validating");
  const input = root.querySelector<HTMLInputElement>("#display")!;
  expect(input.value).toBe("Template");

  act(() => {
    input.dispatchEvent(new Event("focus"));
    input.value = "Greet Ada (v2)";
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  draw("Template", "valid");
  expect(input.value).toBe("Greet Ada (v2)");
  act(() => {
    input.dispatchEvent(new Event("change", { bubbles: true }));
    input.dispatchEvent(new Event("blur"));
  });
  expect(commits).toEqual(["Greet Ada (v2)"]);

  // Not being edited: a new stored value (a restore, a reload) shows at once.
  draw("Restored", "valid");
  expect(input.value).toBe("Restored");
  root.remove();
});
