/**
 * Runs of the workspace with the filters of GET /api/runs (docs/api.md "4. Run"), refreshed live, and a per-day
 * chart.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { type Choice, Options } from "../components/options";
import { Pager, pagePosition } from "../components/pager";
import { duration, SAVE_RUNS_LABELS, StatusBadge, when } from "../format";
import { href } from "../router";
import type { Run, RunCounts, Workflow, WorkflowSummary } from "../types";
import { bucketByDay, type DayBucket, RunsChart } from "./runs-chart";
import { Table } from "../components/table";
import { useListed } from "../use-call";

const CHART_DAYS = 14;

const TRIGGER_TYPES = ["manual", "webhook", "cron", "poll", "error", "run_finished", "event", "api", "mcp", "subflow"];
const STATUSES = ["pending", "running", "completed", "failed", "cancelled", "paused"];
const ANY: Choice = ["", "Any"];
const ENVIRONMENTS: Choice[] = [
  ["production", "Production"],
  ["test", "Test"],
  ["all", "All"],
];
const SORTS: Choice[] = [
  ["", "Newest first"],
  ["oldest", "Oldest first"],
  ["duration", "Longest first"],
];

/** One of the selects above the list of runs. */
function Filter({ label, value, onChange, choices }: { label: string; value: string; onChange: (e: Event) => void; choices: readonly Choice[] }) {
  return (
    <label class="field inline">
      <span>{label}</span>
      <select value={value} onChange={onChange}>
        <Options choices={choices} />
      </select>
    </label>
  );
}

export const LIVE_INTERVAL_MS = 2000;

/** The chart's caption: which runs it counts, in the words of the filters. */
function chartScope(f: Record<string, string>): string {
  const parts = [f.environment === "all" ? "all environments" : `${f.environment || "production"} runs`];
  if (f.status) parts.push(`status ${f.status}`);
  if (f.triggerType) parts.push(`trigger ${f.triggerType}`);
  if (f.workflowId) parts.push("one workflow");
  if (f.tag) parts.push(`tag ${f.tag}`);
  return parts.join(", ");
}

export function RunsPage() {
  const filters = useSignal({ status: "", environment: "production", triggerType: "", workflowId: "", sort: "", tag: "" });
  const page = useSignal(1);
  const runs = useSignal<Run[] | null>(null);
  const pagination = useSignal({ page: 1, limit: 20, total: 0, totalPages: 1 });
  const workflows = useListed<WorkflowSummary>("/api/workflows", { limit: 100 });
  const chart = useSignal<{ buckets: DayBucket[]; unsaved: number; total: number }>({ buckets: bucketByDay([], CHART_DAYS), unsaved: 0, total: 0 });
  /** What the filtered workflow keeps of its runs (settings.saveRuns), shown above the list. */
  const saveRuns = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);

  // The chart counts the runs the table's filters match, from the kept counts: runs of workflows that keep
  // nothing of their successful runs included. The counts take no tag: with one, up to 500 of the newest
  // matching runs are bucketed here.
  useEffect(() => {
    let stopped = false;
    (async () => {
      const { sort: _sort, tag, ...matching } = filters.value;
      if (!tag) {
        const res = await api.get<RunCounts>("/api/runs/counts", { ...matching, days: CHART_DAYS });
        if (!stopped) chart.value = { buckets: res.data.days, unsaved: res.data.unsaved, total: res.data.total };
        return;
      }
      const all: Run[] = [];
      for (let p = 1; p <= 5; p++) {
        const res = await api.get<Run[]>("/api/runs", { ...matching, tag, limit: 100, page: p });
        all.push(...res.data);
        if (!res.pagination || p >= res.pagination.totalPages) break;
      }
      if (!stopped) chart.value = { buckets: bucketByDay(all, CHART_DAYS), unsaved: 0, total: all.length };
    })().catch(() => undefined);
    return () => {
      stopped = true;
    };
  }, [JSON.stringify(filters.value)]);

  useEffect(() => {
    const id = filters.value.workflowId;
    saveRuns.value = null;
    if (!id) return;
    let stopped = false;
    api
      .get<Workflow>(`/api/workflows/${id}`)
      .then((res) => {
        const mode = res.data.definition.settings?.saveRuns;
        if (!stopped) saveRuns.value = mode ?? "all";
      })
      .catch(() => undefined);
    return () => {
      stopped = true;
    };
  }, [filters.value.workflowId]);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const load = async () => {
      try {
        const res = await api.get<Run[]>("/api/runs", { ...filters.value, page: page.value, limit: 20 });
        if (stopped) return;
        runs.value = res.data;
        if (res.pagination) pagination.value = res.pagination;
        error.value = null;
      } catch (e) {
        if (!stopped) error.value = e;
      }
      // Live: newest-first page 1 is refreshed while the page is open.
      if (!stopped && page.value === 1 && !document.hidden) timer = setTimeout(load, LIVE_INTERVAL_MS);
      else if (!stopped) timer = setTimeout(load, LIVE_INTERVAL_MS * 5);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [JSON.stringify(filters.value), page.value]);

  const set = (key: keyof typeof filters.value) => (e: Event) => {
    filters.value = { ...filters.value, [key]: (e.target as HTMLSelectElement).value };
    page.value = 1;
  };
  const f = filters.value;
  return (
    <main class="page">
      <header class="page-head">
        <h1>Runs</h1>
        <span class="live-dot" title="refreshes every 2 seconds">
          live
        </span>
      </header>
      <RunsChart
        buckets={chart.value.buckets}
        scope={chartScope(filters.value)}
        note={chart.value.unsaved > 0 ? `${chart.value.unsaved} of ${chart.value.total} runs counted without being kept` : undefined}
      />
      {saveRuns.value && (
        <p class="help" data-save-runs={saveRuns.value}>
          Runs saved for this workflow: {SAVE_RUNS_LABELS[saveRuns.value] ?? saveRuns.value}.
          {saveRuns.value === "none" ? " Its successful runs are counted in the chart but not listed." : ""}
          {saveRuns.value === "failed" ? " Its successful runs are listed without their steps." : ""}
        </p>
      )}
      <div class="filters" role="search" aria-label="Filter runs">
        <Filter label="Status" value={f.status} onChange={set("status")} choices={[ANY, ...STATUSES]} />
        <Filter label="Environment" value={f.environment} onChange={set("environment")} choices={ENVIRONMENTS} />
        <Filter label="Trigger" value={f.triggerType} onChange={set("triggerType")} choices={[ANY, ...TRIGGER_TYPES]} />
        <Filter label="Workflow" value={f.workflowId} onChange={set("workflowId")} choices={[ANY, ...workflows.value.map((w) => [w.id, w.name] as const)]} />
        <label class="field inline">
          <span>Tag</span>
          <input value={f.tag} onChange={set("tag")} />
        </label>
        <Filter label="Sort" value={f.sort} onChange={set("sort")} choices={SORTS} />
      </div>
      <ErrorNote error={error.value} />
      {runs.value?.length === 0 && <p class="empty">No runs match. Test runs are shown with Environment: Test or All.</p>}
      {runs.value && runs.value.length > 0 && (
        <Table label="Runs" columns={["Status", "Workflow", "Trigger", "Environment", "Started", "Duration", "Steps"]}>
          {runs.value.map((run) => (
            <tr key={run.id} data-run={run.id}>
              <td>
                <a href={href.run(run.id)} aria-label={`Run ${run.id} of ${run.workflowName ?? "a workflow"}: ${run.status}`}>
                  <StatusBadge status={run.status} />
                </a>
              </td>
              <td>
                <a href={href.run(run.id)}>{run.workflowName ?? run.workflowId}</a>
                {run.tags?.length ? (
                  <div>
                    {run.tags.map((t) => (
                      <span class="tag" key={t}>
                        {t}
                      </span>
                    ))}
                  </div>
                ) : null}
              </td>
              <td>{run.triggerType}</td>
              <td>{run.environment}</td>
              <td class="small-text">{when(run.startedAt)}</td>
              <td>{duration(run.durationMs)}</td>
              <td>
                {run.stepTotal ?? "—"}
                {run.stepFailed ? <span class="error-text"> ({run.stepFailed} failed)</span> : null}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager page={page} pages={pagination.value.totalPages} position={pagePosition(pagination.value, "runs")} />
    </main>
  );
}
