/** A modal dialog: labelled, focus moves into it, Escape or the close button ends it. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

let counter = 0;

export function Dialog({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  const id = useRef(`dialog-${++counter}`).current;
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>("input, select, textarea, button:not(.dialog-close)");
    (first ?? ref.current)?.focus();
    return () => previous?.focus?.();
  }, []);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: a click on the backdrop is the mouse's way to close; keyboards close with Escape (the dialog's onKeyDown)
    <div
      class="backdrop"
      onClick={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
    >
      <div
        class={`dialog${wide ? " dialog-wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={id}
        ref={ref}
        tabIndex={-1}
        onKeyDown={(event) => {
          if (event.key === "Escape") {
            event.stopPropagation();
            onClose();
          }
        }}
      >
        <header class="dialog-head">
          <h2 id={id}>{title}</h2>
          <button type="button" class="dialog-close link" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        {children}
      </div>
    </div>
  );
}
