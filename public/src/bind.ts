/**
 * Props that tie a form control to a signal, so a field reads as `<input required {...bindText(name)} />`
 * instead of repeating its value and its handler (CONTRIBUTING.md, "Add a page that calls the API").
 * `bindText` is for inputs and textareas (every keystroke), `bindSelect` for selects (on change),
 * `bindChecked` for checkboxes. `after` runs once the signal holds the new value (a filter goes back to page 1).
 * `setTo` is the handler of a button or dialog that only sets a signal: `onClick={setTo(creating, true)}`, and
 * `submitInPlace` a form's: `<form onSubmit={submitInPlace(() => act(save))}>`.
 */
import type { Signal } from "@preact/signals";

type ValueControl = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/** Sets the signal to the control's value, then runs `after`. */
function valueInto(signal: Signal<string>, after?: () => void) {
  return (e: Event) => {
    signal.value = (e.target as ValueControl).value;
    after?.();
  };
}

export function bindText(signal: Signal<string>, after?: () => void) {
  return { value: signal.value, onInput: valueInto(signal, after) };
}

export function bindSelect(signal: Signal<string>, after?: () => void) {
  return { value: signal.value, onChange: valueInto(signal, after) };
}

export function bindChecked(signal: Signal<boolean>) {
  return {
    checked: signal.value,
    onChange: (e: Event) => {
      signal.value = (e.target as HTMLInputElement).checked;
    },
  };
}

/** A handler that sets the signal to `value` (given when the handler is made): `onClose={setTo(dialog, null)}`. */
export function setTo<T>(signal: Signal<T>, value: NoInfer<T>) {
  return () => {
    signal.value = value;
  };
}

/** A form's onSubmit: the browser does not send the form and load a page; `work` runs instead. */
export function submitInPlace(work: () => unknown) {
  return (event: Event) => {
    event.preventDefault();
    void work();
  };
}
