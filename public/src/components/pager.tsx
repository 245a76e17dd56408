/**
 * Previous / Next under a paged list (the runs, the workflows, the audit log): nothing when the list fits on one
 * page. `position` says where the reader is, e.g. "Page 2 of 5 (230 runs)": `pagePosition` says it for a list
 * whose server reports its pagination.
 */
import type { Signal } from "@preact/signals";

export function Pager({ page, pages, position }: { page: Signal<number>; pages: number; position: string }) {
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
      <span>{position}</span>
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

/** "Page 2 of 5 (230 runs)", from the pagination the server reports with a page of `noun`. */
export function pagePosition(pagination: { page: number; totalPages: number; total: number }, noun: string): string {
  return `Page ${pagination.page} of ${pagination.totalPages} (${pagination.total} ${noun})`;
}
