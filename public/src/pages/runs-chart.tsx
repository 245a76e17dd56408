/** Runs per day by status for the workspace: a small stacked bar chart (SVG, no library). */
import type { Run } from "../types";

const STATUSES = ["completed", "failed", "cancelled", "running", "paused", "pending"];

export function bucketByDay(runs: Run[], days: number, now = new Date()): Array<{ day: string; counts: Record<string, number> }> {
  const out: Array<{ day: string; counts: Record<string, number> }> = [];
  const index = new Map<string, number>();
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    index.set(d, out.length);
    out.push({ day: d, counts: {} });
  }
  for (const run of runs) {
    const at = index.get((run.startedAt ?? "").slice(0, 10));
    if (at === undefined) continue;
    const counts = out[at]!.counts;
    counts[run.status] = (counts[run.status] ?? 0) + 1;
  }
  return out;
}

export function RunsChart({ runs, days = 14 }: { runs: Run[]; days?: number }) {
  const buckets = bucketByDay(runs, days);
  const max = Math.max(1, ...buckets.map((b) => Object.values(b.counts).reduce((a, n) => a + n, 0)));
  const width = 28;
  const height = 80;
  const summary = buckets.filter((b) => Object.keys(b.counts).length).map((b) => `${b.day}: ${Object.entries(b.counts).map(([s, n]) => `${n} ${s}`).join(", ")}`).join("; ");
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${days * width} ${height + 16}`} role="img" aria-label={`Runs per day by status, last ${days} days. ${summary || "No runs."}`}>
        {buckets.map((bucket, i) => {
          let y = height;
          return (
            <g key={bucket.day}>
              {STATUSES.filter((s) => bucket.counts[s]).map((status) => {
                const h = (bucket.counts[status]! / max) * height;
                y -= h;
                return <rect key={status} class={`bar status-${status}`} x={i * width + 4} y={y} width={width - 8} height={h}><title>{`${bucket.day}: ${bucket.counts[status]} ${status}`}</title></rect>;
              })}
              {i % 2 === 0 && <text x={i * width + width / 2} y={height + 12} text-anchor="middle" class="axis">{bucket.day.slice(5)}</text>}
            </g>
          );
        })}
      </svg>
      <figcaption class="legend">{STATUSES.slice(0, 3).map((s) => <span key={s}><i class={`swatch status-${s}`} /> {s}</span>)}</figcaption>
    </figure>
  );
}
