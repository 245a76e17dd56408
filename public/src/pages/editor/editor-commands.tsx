/**
 * What the editor does with its clipboard and history: copy, duplicate and paste steps (and router
 * branches), the Undo/Redo buttons, and the keyboard shortcuts — Ctrl/Cmd-Z, Ctrl/Cmd-Shift-Z and
 * Ctrl-Y, Ctrl/Cmd-C and -V on the selected step. While focus is in a text field or a dialog the keys
 * keep their usual meaning there (the field's own text undo, copying its text).
 */
import { useEffect } from "preact/hooks";
import type { ActionNode, Definition } from "../../types";
import type { EditorStore } from "./editor-store";
import { ClipboardError, decodeSteps, encodeSteps, keepInPage, readClipboard, writeClipboard } from "./step-clipboard";
import { chainOf, findStep, insertStep, type Slot, stepsOfChain, updateStep, withFreshNames, withoutNext } from "./tree";

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

function copiedNotice(store: EditorStore, what: string, where: "system" | "page") {
  store.notice.value = {
    kind: "info",
    text: where === "system" ? `Copied ${what}` : `Copied ${what} (within this page: the browser does not allow the clipboard here)`,
  };
}

/** The step `name` with what is inside it (branches, loop body, error branch), or a notice saying why not. */
function copyable(store: EditorStore, name: string): ActionNode | undefined {
  const def = store.definition.value;
  const node = def && findStep(def, name);
  if (!def || !node) return undefined;
  if (node === def.trigger) {
    store.notice.value = { kind: "error", text: "The trigger cannot be copied; a workflow has one. Copy the steps after it." };
    return undefined;
  }
  return withoutNext(node as ActionNode);
}

export async function copyStep(store: EditorStore, name: string) {
  const step = copyable(store, name);
  if (step) copiedNotice(store, name, await writeClipboard(encodeSteps([step])));
}

/** Copies the steps of branch `index` of router `router`, in order, as one block. */
export async function copyBranch(store: EditorStore, router: string, index: number) {
  const branch = store.definition.value && findStep(store.definition.value, router)?.branches?.[index];
  if (!branch) return;
  const steps = stepsOfChain(branch.firstAction);
  if (steps.length === 0) {
    store.notice.value = { kind: "error", text: `Branch ${branch.name} has no steps to copy` };
    return;
  }
  copiedNotice(store, `${plural(steps.length, "step")} of branch ${branch.name}`, await writeClipboard(encodeSteps(steps)));
}

/** Inserts `steps` at `slot` as one edit (one undo), renaming steps whose names are taken, and selects the first. */
function insertSteps(store: EditorStore, def: Definition, slot: Slot, steps: ActionNode[], verb: string) {
  const fresh = withFreshNames(def, steps);
  const chain = chainOf(fresh.steps);
  if (!chain) return;
  store.change(insertStep(def, slot, chain));
  store.selected.value = chain.name;
  const renamed = [...fresh.renames].map(([from, to]) => `${from} → ${to}`);
  store.notice.value = { kind: "info", text: `${verb} ${plural(fresh.steps.length, "step")}${renamed.length ? ` (renamed: ${renamed.join(", ")})` : ""}` };
}

/** A copy of step `name` (with what is inside it) right after it, under a new name. */
export function duplicateStep(store: EditorStore, name: string) {
  const def = store.definition.value;
  const step = copyable(store, name);
  if (def && step) insertSteps(store, def, { owner: name, kind: "next" }, [step], "Duplicated");
}

/** A copy of branch `index` (conditions and steps, renamed) right after it. The fallback branch is not duplicated: a router has one. */
export function duplicateBranch(store: EditorStore, router: string, index: number) {
  const def = store.definition.value;
  const branch = def && findStep(def, router)?.branches?.[index];
  if (!def || !branch) return;
  const copy = { ...branch, name: `${branch.name} copy`, firstAction: chainOf(withFreshNames(def, stepsOfChain(branch.firstAction)).steps) };
  if (!copy.firstAction) delete copy.firstAction;
  store.change(
    updateStep(def, router, (node) => {
      node.branches?.splice(index + 1, 0, copy);
    }),
  );
  store.notice.value = { kind: "info", text: `Duplicated branch ${branch.name}` };
}

/** Pastes clipboard `text` at `slot`; text that holds no Weft steps is a message, never an edit. */
export function pasteText(store: EditorStore, slot: Slot, text: string | null | undefined) {
  const def = store.definition.value;
  if (!def) return;
  if (!text) {
    store.notice.value = { kind: "error", text: "Nothing to paste: copy a step first (its menu, or Ctrl+C with the step selected)" };
    return;
  }
  try {
    insertSteps(store, def, slot, decodeSteps(text), "Pasted");
  } catch (error) {
    if (!(error instanceof ClipboardError)) throw error;
    store.notice.value = { kind: "error", text: error.message };
  }
}

export async function pasteAt(store: EditorStore, slot: Slot) {
  pasteText(store, slot, await readClipboard());
}

const TEXT_INPUTS = new Set(["text", "search", "url", "email", "tel", "password", "number", ""]);

/** True where the keys belong to what has focus: a text field (its own undo, copy, paste) or a dialog. */
export function keysBelongToFocus(element: Element | null): boolean {
  if (!element || !(element instanceof HTMLElement)) return false;
  if (element.closest("[role=dialog]")) return true;
  if (element.isContentEditable || element instanceof HTMLTextAreaElement) return true;
  return element instanceof HTMLInputElement && TEXT_INPUTS.has(element.type);
}

/** Where Ctrl+V pastes: after the selected step. */
const selectedSlot = (store: EditorStore): Slot | null => (store.selected.value ? { owner: store.selected.value, kind: "next" } : null);

/** The editor's keyboard: undo/redo on keydown; copy and paste through the browser's own copy and paste events. */
export function useEditorShortcuts(store: EditorStore) {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.altKey || !(event.ctrlKey || event.metaKey) || keysBelongToFocus(event.target as Element)) return;
      const key = event.key.toLowerCase();
      const redo = (key === "z" && event.shiftKey) || (key === "y" && event.ctrlKey && !event.shiftKey);
      if (key !== "z" && !redo) return;
      event.preventDefault();
      if (redo) store.redo();
      else store.undo();
    };
    const onCopy = (event: ClipboardEvent) => {
      const text = document.getSelection()?.toString();
      // Selected text on the page (a test result, say) is copied as text, as anywhere else.
      if (text || !store.selected.value || keysBelongToFocus(document.activeElement)) return;
      const step = copyable(store, store.selected.value);
      if (!step || !event.clipboardData) return;
      const encoded = encodeSteps([step]);
      event.clipboardData.setData("text/plain", encoded);
      event.preventDefault();
      keepInPage(encoded);
      copiedNotice(store, step.name, "system");
    };
    const onPaste = (event: ClipboardEvent) => {
      if (keysBelongToFocus(document.activeElement)) return;
      event.preventDefault();
      const slot = selectedSlot(store);
      if (!slot) {
        store.notice.value = { kind: "error", text: "Select the step to paste after, then press Ctrl+V again" };
        return;
      }
      pasteText(store, slot, event.clipboardData?.getData("text/plain"));
    };
    window.addEventListener("keydown", onKeyDown);
    document.addEventListener("copy", onCopy);
    document.addEventListener("paste", onPaste);
    return () => {
      window.removeEventListener("keydown", onKeyDown);
      document.removeEventListener("copy", onCopy);
      document.removeEventListener("paste", onPaste);
    };
  }, [store]);
}

const onMac = () => typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);

/** Undo and Redo in the editor's header; disabled with nothing to take back, or while a conflict pauses editing. */
export function HistoryButtons({ store }: { store: EditorStore }) {
  const paused = store.saveState.value === "conflict";
  const mod = onMac() ? "⌘" : "Ctrl+";
  return (
    <span class="history-buttons">
      <button
        type="button"
        class="small"
        onClick={() => store.undo()}
        disabled={paused || !store.canUndo.value}
        title={`Undo (${mod}Z)`}
        aria-keyshortcuts="Control+Z Meta+Z"
      >
        ↶ Undo
      </button>
      <button
        type="button"
        class="small"
        onClick={() => store.redo()}
        disabled={paused || !store.canRedo.value}
        title={`Redo (${mod}Shift+Z${onMac() ? "" : " or Ctrl+Y"})`}
        aria-keyshortcuts="Control+Shift+Z Meta+Shift+Z Control+Y"
      >
        ↷ Redo
      </button>
    </span>
  );
}

export const NOTICE_MS = 5000;

/** The last clipboard message; information fades after NOTICE_MS, a refusal stays until dismissed. */
export function EditorNotice({ store }: { store: EditorStore }) {
  const notice = store.notice.value;
  useEffect(() => {
    if (notice?.kind !== "info") return;
    const timer = setTimeout(() => {
      if (store.notice.value === notice) store.notice.value = null;
    }, NOTICE_MS);
    return () => clearTimeout(timer);
  }, [notice, store]);
  if (!notice) return null;
  return (
    <div class={`note editor-notice${notice.kind === "error" ? " note-error" : ""}`} role={notice.kind === "error" ? "alert" : "status"}>
      <span>{notice.text}</span>
      <button
        type="button"
        class="link"
        aria-label="Dismiss message"
        onClick={() => {
          store.notice.value = null;
        }}
      >
        ×
      </button>
    </div>
  );
}
