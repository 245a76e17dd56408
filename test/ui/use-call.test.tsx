/**
 * useCall, the one way a screen calls the API and shows it (CONTRIBUTING.md, "Add a page that calls the
 * API"): the button is disabled while the call runs, the server's message shows when it fails and goes away
 * when the next call starts, and a call that reloads the list inside another keeps the screen busy to the end.
 */
import { expect, test } from "bun:test";
import { useHappyDom } from "./fake-api";

useHappyDom();

/** A promise the test settles by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test("busy while the call runs, the server's error shown, cleared by the next call, and nested calls stay busy until the outer one ends", async () => {
  const { render, h } = await import("preact");
  const { act } = await import("preact/test-utils");
  const { useCall } = await import("../../public/src/use-call");
  const { ErrorNote } = await import("../../public/src/components/error-note");
  const { ApiError } = await import("../../public/src/api");

  let work: () => Promise<unknown> = async () => undefined;
  const outcomes: boolean[] = [];
  function Screen() {
    const { busy, error, call } = useCall();
    return h(
      "div",
      null,
      h(ErrorNote, { error: error.value }),
      h("button", { type: "button", disabled: busy.value, onClick: () => call(work).then((ok) => outcomes.push(ok)) }, "Save"),
    );
  }
  const root = document.createElement("div");
  document.body.append(root);
  act(() => render(h(Screen, null), root));
  const button = root.querySelector("button")!;
  const click = async () => {
    await act(async () => {
      button.click();
    });
  };
  const settle = async () => {
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
  };

  // A failing call: busy while it runs, then the server's message and code, and it reports failure.
  const failing = deferred();
  work = () => failing.promise;
  await click();
  expect(button.disabled).toBe(true);
  failing.reject(new ApiError(409, "NAME_TAKEN", "a folder named Invoices exists"));
  await settle();
  expect(button.disabled).toBe(false);
  expect(root.querySelector("[role=alert]")?.textContent).toBe("a folder named Invoices exists (NAME_TAKEN)");
  expect(outcomes).toEqual([false]);

  // The next call clears the message as it starts; an inner call (the reload after a change) ending first
  // does not end the busy state of the outer one.
  const inner = deferred();
  const outerRest = deferred();
  let nested: ReturnType<typeof useCall> | undefined;
  function Probe() {
    nested = useCall();
    return h("span", { "data-busy": String(nested.busy.value) }, nested.error.value ? "error" : "");
  }
  const probeRoot = document.createElement("div");
  document.body.append(probeRoot);
  act(() => render(h(Probe, null), probeRoot));
  let outer: Promise<boolean> | undefined;
  await act(async () => {
    outer = nested!.call(async () => {
      await nested!.call(() => inner.promise);
      await outerRest.promise;
    });
  });
  inner.resolve();
  await settle();
  expect(probeRoot.querySelector("span")!.dataset.busy).toBe("true");
  outerRest.resolve();
  await settle();
  expect(probeRoot.querySelector("span")!.dataset.busy).toBe("false");
  expect(await outer).toBe(true);

  const ok = deferred();
  work = () => ok.promise;
  await click();
  expect(root.querySelector("[role=alert]")).toBeNull();
  ok.resolve();
  await settle();
  expect(outcomes).toEqual([false, true]);
  root.remove();
  probeRoot.remove();
});
