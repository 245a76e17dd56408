/**
 * Runs per day by status: a stacked bar chart drawn with HTML boxes (no library), so it fills the
 * width of its box at any size. Each day's bar has a tooltip with its counts (hover or keyboard focus).
 * The runs page feeds it the days of GET /api/runs/counts for the table's filters (every run counted, kept or
 * not: docs/engine.md, "Run saving"), or, with a tag filter (which the counts do not take), its runs bucketed here.
 */
import { useSignal } from "@preact/signals";
import type { Run } from "../types";
import { setTo } from "../bind";

const STATUSES = ["completed", "failed", "cancelled", "running", "paused", "pending"];

export type DayBucket = { day: string; counts: Record<string, number> };

export function bucketByDay(runs: Run[], days: number, now = new Date()): DayBucket[] {
  const out: DayBucket[] = [];
  const index = new Map<string, number>();
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    index.set(d, out.length);
    out.push({ day: d, counts: {} });
  }
  for (const run of runs) {
    const at = index.get((run.startedAt ?? "").slice(0, 10));
    if (at === undefined) continue;
    const counts = out[at].counts;
    counts[run.status] = (counts[run.status] ?? 0) + 1;
  }
  return out;
}

/** "3 runs: 2 completed, 1 failed" — the words of a day's tooltip and of its accessible name. */
export function describeDay(bucket: { day: string; counts: Record<string, number> }): string {
  const total = Object.values(bucket.counts).reduce((a, n) => a + n, 0);
  if (!total) return `${bucket.day}: no runs`;
  const parts = STATUSES.filter((s) => bucket.counts[s]).map((s) => `${bucket.counts[s]} ${s}`);
  return `${bucket.day}: ${total} run${total === 1 ? "" : "s"} (${parts.join(", ")})`;
}

export function RunsChart({ buckets, scope, note }: { buckets: DayBucket[]; scope?: string; note?: string }) {
  const days = buckets.length;
  const max = Math.max(1, ...buckets.map((b) => Object.values(b.counts).reduce((a, n) => a + n, 0)));
  const hovered = useSignal<number | null>(null);
  return (
    <figure class="chart" aria-label={`Runs per day by status, last ${days} days${scope ? `, ${scope}` : ""}`}>
      <div class="chart-bars" role="list" onMouseLeave={setTo(hovered, null)}>
        {buckets.map((bucket, i) => {
          const label = describeDay(bucket);
          return (
            <div
              key={bucket.day}
              class="chart-day"
              role="listitem"
              // biome-ignore lint/a11y/noNoninteractiveTabindex: each day takes focus so keyboard users get the same tooltip as the mouse
              tabIndex={0}
              aria-label={label}
              onMouseEnter={setTo(hovered, i)}
              onFocus={setTo(hovered, i)}
              onBlur={setTo(hovered, null)}
            >
              <div class="chart-stack">
                {STATUSES.filter((s) => bucket.counts[s]).map((status) => (
                  <div key={status} class={`bar status-${status}`} style={{ height: `${(bucket.counts[status] / max) * 100}%` }} />
                ))}
              </div>
              <span class="axis">{i % 2 === (days - 1) % 2 ? bucket.day.slice(5) : ""}</span>
              {hovered.value === i && (
                <div class="chart-tip" role="tooltip">
                  {label}
                </div>
              )}
            </div>
          );
        })}
      </div>
      <figcaption class="legend">
        {STATUSES.slice(0, 4).map((s) => (
          <span key={s}>
            <i class={`swatch status-${s}`} /> {s}
          </span>
        ))}
        {scope ? <span class="chart-scope">{scope}</span> : null}
        {note ? <span class="chart-scope">{note}</span> : null}
      </figcaption>
    </figure>
  );
}
