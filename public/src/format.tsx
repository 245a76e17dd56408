/** Small display formats shared by the screens. */
import { href } from "./router";

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const TERMINAL_RUN_STATUSES = new Set(["completed", "failed", "cancelled"]);

const NETWORK_PAGE = "Settings → Network";

/** A step's or run's error message; "Settings → Network" in it (a refused address says where to allow its range) links to that tab. */
export function ErrorText({ message }: { message: string }) {
  const parts = message.split(NETWORK_PAGE);
  const link = (i: number) => (
    <a key={i} href={href.settings("network")}>
      {NETWORK_PAGE}
    </a>
  );
  return <>{parts.flatMap((part, i) => (i === 0 ? [part] : [link(i), part]))}</>;
}

/** A paragraph of `class` holding ErrorText, or nothing when there is no message; `alert` has it announced (role=alert). */
export function ErrorParagraph({ message, class: style, alert }: { message: string | null | undefined; class: string; alert?: boolean }) {
  if (!message) return null;
  return (
    <p class={style} role={alert ? "alert" : undefined}>
      <ErrorText message={message} />
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

/** settings.saveRuns in words (docs/api.md, "Settings that change the lifecycle"); absent means "all". */
export const SAVE_RUNS_LABELS: Record<string, string> = {
  all: "All runs",
  failed: "Failed runs only (successful runs keep status, times and counts, not their steps)",
  none: "Failed runs only, nothing of successful runs (only counted)",
};
