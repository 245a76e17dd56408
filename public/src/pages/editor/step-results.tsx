/**
 * The step panel's results: tabs "Last test" (the editor's own test run) and "Last production run" —
 * the step's input, output or error, status and duration in the newest production run of the
 * workflow that reached the step, read from `GET /api/runs` and `GET /api/runs/{id}`. While that tab
 * is shown it looks at the newest production run every few seconds and reloads when it changed.
 */
import { signal, useSignal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { api } from "../../api";
import { ErrorNote } from "../../components/error-note";
import { JsonView } from "../../components/json-view";
import { duration, ErrorParagraph, StatusBadge, TERMINAL_RUN_STATUSES, when } from "../../format";
import { href } from "../../router";
import type { Run, RunStep } from "../../types";
import { setTo } from "../../bind";

export type ResultTab = "test" | "production";

/** The chosen tab stays chosen while moving from step to step. */
export const resultTab = signal<ResultTab>("test");

/** How many of the newest production runs are searched for one that reached the step. */
export const RUNS_SEARCHED = 20;
export const REFRESH_MS = 4000;

/** Finished runs never change: keep their details so that moving between steps does not fetch them again. */
const finishedRuns = new Map<string, Run>();

async function runDetail(id: string): Promise<Run> {
  const cached = finishedRuns.get(id);
  if (cached) return cached;
  const res = await api.get<Run>(`/api/runs/${encodeURIComponent(id)}`);
  if (TERMINAL_RUN_STATUSES.has(res.data.status)) {
    if (finishedRuns.size >= 200) finishedRuns.clear();
    finishedRuns.set(id, res.data);
  }
  return res.data;
}

const listProductionRuns = (workflowId: string, limit: number) => api.get<Run[]>("/api/runs", { workflowId, environment: "production", limit });

/** What identifies the newest production run's state: a new run, or the same one further along. */
const headOf = (runs: Run[]) => (runs[0] ? `${runs[0].id}:${runs[0].status}` : "");

/** The trigger has no step record of its own: what it passed on is the run's trigger data, shown as a finished step. */
export const triggerStep = (run: Run, stepName: string): RunStep => ({
  id: run.id,
  runId: run.id,
  nodeId: stepName,
  pieceId: null,
  actionId: null,
  displayName: null,
  status: "completed",
  inputData: undefined,
  outputData: run.triggerData,
  errorMessage: null,
  retryCount: 0,
  startedAt: run.startedAt,
  finishedAt: null,
  durationMs: null,
});

export interface ProductionResult {
  run: Run;
  step: RunStep;
}

/**
 * The newest production run (of the `RUNS_SEARCHED` newest) that reached `stepName`. The trigger has
 * no step record of its own: its output is the run's trigger data.
 */
export async function lastProductionStep(workflowId: string, stepName: string, isTrigger: boolean): Promise<{ head: string; found: ProductionResult | null }> {
  const list = await listProductionRuns(workflowId, RUNS_SEARCHED);
  const head = headOf(list.data);
  for (const summary of list.data) {
    if (isTrigger) return { head, found: { run: summary, step: triggerStep(summary, stepName) } };
    const run = await runDetail(summary.id);
    const step = run.steps?.find((s) => s.nodeId === stepName && s.status !== "pending");
    if (step) return { head, found: { run, step } };
  }
  return { head, found: null };
}

export function ResultTabs({ idBase, children }: { idBase: string; children: ComponentChildren }) {
  const tabs: Array<[ResultTab, string]> = [
    ["test", "Last test"],
    ["production", "Last production run"],
  ];
  const select = (tab: ResultTab) => {
    resultTab.value = tab;
    document.getElementById(`${idBase}-tab-${tab}`)?.focus();
  };
  return (
    <div class="results">
      <div class="result-tabs" role="tablist" aria-label="Results of this step">
        {tabs.map(([tab, text]) => (
          <button
            key={tab}
            type="button"
            role="tab"
            id={`${idBase}-tab-${tab}`}
            aria-selected={resultTab.value === tab}
            aria-controls={`${idBase}-results`}
            tabIndex={resultTab.value === tab ? 0 : -1}
            onClick={setTo(resultTab, tab)}
            onKeyDown={(e) => {
              if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
                e.preventDefault();
                select(tab === "test" ? "production" : "test");
              }
            }}
          >
            {text}
          </button>
        ))}
      </div>
      {children}
    </div>
  );
}

export function LastProductionRun({ workflowId, stepName, isTrigger, idBase }: { workflowId: string; stepName: string; isTrigger: boolean; idBase: string }) {
  // undefined while loading; null when no production run reached the step.
  const result = useSignal<ProductionResult | null | undefined>(undefined);
  const error = useSignal<unknown>(null);
  const head = useRef<string | null>(null);
  const loading = useRef<Promise<void> | null>(null);
  const alive = useRef(true);

  const load = () => {
    loading.current ??= (async () => {
      try {
        const answer = await lastProductionStep(workflowId, stepName, isTrigger);
        if (!alive.current) return;
        head.current = answer.head;
        result.value = answer.found;
        error.value = null;
      } catch (e) {
        if (alive.current) error.value = e;
      } finally {
        loading.current = null;
      }
    })();
    return loading.current;
  };

  useEffect(() => {
    alive.current = true;
    void load();
    const timer = setInterval(async () => {
      if (document.hidden || loading.current) return;
      try {
        const newest = await listProductionRuns(workflowId, 1);
        if (alive.current && headOf(newest.data) !== head.current) void load();
      } catch {
        // The next look tries again; a lasting problem shows on the next full load.
      }
    }, REFRESH_MS);
    return () => {
      alive.current = false;
      clearInterval(timer);
    };
  }, [workflowId, stepName]);

  const found = result.value;
  const step = found?.step;
  return (
    <section id={`${idBase}-results`} aria-label={`Last production run of ${stepName}`} aria-busy={found === undefined ? "true" : undefined}>
      {found === undefined && !error.value && <p class="muted">Looking for the last production run…</p>}
      {found === null && <p class="muted">No production run has reached this step yet — publish and trigger the workflow.</p>}
      {found && step && (
        <>
          <p>
            <StatusBadge status={step.status} />
            {step.durationMs !== null && step.durationMs !== undefined ? ` ${duration(step.durationMs)}` : ""}
            {step.retryCount ? ` · ${step.retryCount} retries` : ""}
            {" · "}
            <a href={href.run(found.run.id)}>
              Run of {when(found.run.startedAt)}
              {found.run.executedVersionNumber ? `, version ${found.run.executedVersionNumber}` : ""}
            </a>
          </p>
          <ErrorParagraph class="note note-error" message={step.errorMessage} />
          {!isTrigger && (
            <details>
              <summary>Input</summary>
              <JsonView value={step.inputData} label={`Production input of ${stepName}`} />
            </details>
          )}
          <h4>{isTrigger ? "Trigger data" : "Output"}</h4>
          <JsonView value={step.outputData} label={`Production output of ${stepName}`} />
        </>
      )}
      <p class="row">
        <button type="button" class="small" onClick={() => void load()} aria-label={`Refresh the last production run of ${stepName}`}>
          Refresh
        </button>
        <span class="help">Updates by itself when a new production run comes in.</span>
      </p>
      <ErrorNote error={error.value} />
    </section>
  );
}
