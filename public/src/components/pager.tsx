/**
 * Previous / Next under a paged list (the runs, the workflows, the audit log): nothing when the list fits on one
 * page. `children` says where the reader is, e.g. "Page 2 of 5 (230 runs)".
 */
import type { Signal } from "@preact/signals";
import type { ComponentChildren } from "preact";

export function Pager({ page, pages, children }: { page: Signal<number>; pages: number; children: ComponentChildren }) {
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        disabled={page.value <= 1}
        onClick={() => {
          page.value--;
        }}
      >
        Previous
      </button>
      <span>{children}</span>
      <button
        type="button"
        disabled={page.value >= pages}
        onClick={() => {
          page.value++;
        }}
      >
        Next
      </button>
    </nav>
  );
}
