/**
 * Fields that take `{{ }}` expressions: the text wraps and the field grows with it, so nothing hides
 * past the right edge, and "Expand" opens a wide monospace editor whose data picker inserts at the
 * cursor. Typing and the editor's Save both commit through `onCommit`, the one change path of the form.
 */
import { useSignal } from "@preact/signals";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { Dialog } from "../../components/dialog";
import { bindText, setTo } from "../../bind";

export interface DataPath {
  label: string;
  expression: string;
}

/** "Insert data…": a dropdown of earlier steps' output paths; picking one hands `{{path}}` to `onInsert`. */
export function ExpressionPicker({ paths, onInsert, label }: { paths: DataPath[]; onInsert(expression: string): void; label: string }) {
  if (paths.length === 0) return null;
  return (
    <select
      class="expr-picker"
      aria-label={`Insert data into ${label}`}
      value=""
      onChange={(e) => {
        const value = (e.target as HTMLSelectElement).value;
        if (value) onInsert(`{{${value}}}`);
        (e.target as HTMLSelectElement).value = "";
      }}
    >
      <option value="">Insert data…</option>
      {paths.map((path) => (
        <option key={path.expression} value={path.expression}>
          {path.label}
        </option>
      ))}
    </select>
  );
}

/** Sets a textarea's height to its content's (CSS max-height still caps it, then it scrolls). */
function fitHeight(el: HTMLTextAreaElement) {
  el.style.height = "auto";
  el.style.height = `${el.scrollHeight + el.offsetHeight - el.clientHeight}px`;
}

export interface ExpressionInputProps {
  id?: string;
  /** Names the field in "Expand …" and in the editor's title. */
  label: string;
  /** For a field without a `<label for>` of its own. */
  "aria-label"?: string;
  describedBy?: string;
  required?: boolean;
  placeholder?: string;
  inputMode?: "decimal";
  /** Long text and code: Enter is a new line and the field starts six lines high. */
  multiline?: boolean;
  value: string;
  paths: DataPath[];
  onCommit(text: string): void;
}

export function ExpressionInput(props: ExpressionInputProps) {
  const { value, multiline } = props;
  // null when not editing: the field then follows `value` (as CommitInput does).
  const typed = useSignal<string | null>(null);
  const editing = useSignal<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  const shown = typed.value ?? value;
  const commit = (text: string) => {
    if (text !== value) props.onCommit(text);
  };
  useLayoutEffect(() => {
    if (ref.current) fitHeight(ref.current);
  }, [shown]);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    // A narrower panel wraps the text onto more lines: fit again when the width changes.
    let width = el.clientWidth;
    const observer = new ResizeObserver(() => {
      if (el.clientWidth === width) return;
      width = el.clientWidth;
      fitHeight(el);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return (
    <div class="expr-input">
      <textarea
        ref={ref}
        id={props.id}
        class={multiline ? "mono multiline" : undefined}
        rows={multiline ? 6 : 1}
        aria-label={props["aria-label"]}
        aria-describedby={props.describedBy}
        required={props.required}
        placeholder={props.placeholder}
        inputMode={props.inputMode}
        spellcheck={false}
        value={shown}
        onFocus={setTo(typed, value)}
        onInput={(e) => {
          typed.value = (e.target as HTMLTextAreaElement).value;
        }}
        onKeyDown={(e) => {
          // A one-line field commits on Enter, as a text input would; the wide editor takes new lines.
          if (!multiline && e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            commit((e.target as HTMLTextAreaElement).value);
          }
        }}
        onChange={(e) => commit((e.target as HTMLTextAreaElement).value)}
        onBlur={setTo(typed, null)}
      />
      <button
        type="button"
        class="small expand"
        aria-label={`Expand ${props.label}`}
        title="Open in a wide editor"
        onClick={() => {
          editing.value = ref.current?.value ?? shown;
        }}
      >
        ⤢
      </button>
      {editing.value !== null && (
        <ExpressionEditor
          label={props.label}
          value={editing.value}
          paths={props.paths}
          onSave={(text) => {
            editing.value = null;
            commit(text);
          }}
          onClose={setTo(editing, null)}
        />
      )}
    </div>
  );
}

/** The wide editor: monospace, many lines, the data picker inserting at the cursor; Save or Ctrl+Enter commits. */
export function ExpressionEditor({
  label,
  value,
  paths,
  onSave,
  onClose,
}: {
  label: string;
  value: string;
  paths: DataPath[];
  onSave(text: string): void;
  onClose(): void;
}) {
  const text = useSignal(value);
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    // The dialog has focused the editor; start with the cursor after the text.
    ref.current?.setSelectionRange(value.length, value.length);
  }, []);
  const insert = (expression: string) => {
    const el = ref.current;
    const current = text.value;
    const start = el?.selectionStart ?? current.length;
    const end = el?.selectionEnd ?? start;
    text.value = current.slice(0, start) + expression + current.slice(end);
    if (el) {
      // Write the DOM now so the cursor can be placed right after what was inserted.
      el.value = text.value;
      el.focus();
      el.setSelectionRange(start + expression.length, start + expression.length);
    }
  };
  return (
    <Dialog title={`Edit ${label}`} onClose={onClose} wide>
      <textarea
        ref={ref}
        class="mono expr-editor"
        rows={12}
        aria-label={`${label} (expression editor)`}
        spellcheck={false}
        {...bindText(text)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            onSave(text.value);
          }
        }}
      />
      <p class="help">
        Text and <code>{"{{ }}"}</code> expressions, e.g. <code>{'{{ "Hello " & trigger.body.name }}'}</code>. Ctrl+Enter saves.
      </p>
      <div class="row expr-editor-bar">
        <ExpressionPicker paths={paths} label={label} onInsert={insert} />
        <span class="spacer" />
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="primary" onClick={() => onSave(text.value)}>
          Save
        </button>
      </div>
    </Dialog>
  );
}
