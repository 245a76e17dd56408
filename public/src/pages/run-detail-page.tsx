/** One run: its steps with inputs, outputs and errors, live through SSE while it runs; retry and cancel. */
import { useSignal } from "@preact/signals";
import { type ComponentChildren, Fragment } from "preact";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { JsonView } from "../components/json-view";
import { duration, ErrorParagraph, StatusBadge, TERMINAL_RUN_STATUSES, when } from "../format";
import { href, navigate } from "../router";
import { watchRun } from "../run-stream";
import type { Run, RunStep } from "../types";
import { useCall } from "../use-call";

/** What the facts list says of a run, term by term; a retry, what retried it and a wait only when there is one. */
function runFacts(r: Run): Array<[term: string, value: ComponentChildren]> {
  const facts: Array<[string, ComponentChildren]> = [
    ["Trigger", r.triggerType],
    ["Environment", r.environment],
    ["Started", when(r.startedAt)],
    ["Finished", when(r.finishedAt)],
    ["Duration", duration(r.durationMs)],
    ["Version", r.executedVersionNumber ?? r.versionNumber ?? (r.environment === "test" ? "draft" : "—")],
  ];
  if (r.retryOfRunId) facts.push(["Retry of", <a href={href.run(r.retryOfRunId)}>{r.retryOfRunId}</a>]);
  if (r.retriedByRunId) facts.push(["Retried by", <a href={href.run(r.retriedByRunId)}>{r.retriedByRunId}</a>]);
  if (r.waitStep) facts.push(["Waiting at", r.resumeAt ? `${r.waitStep} until ${when(r.resumeAt)}` : r.waitStep]);
  return facts;
}

export function RunDetailPage({ id }: { id: string }) {
  const run = useSignal<Run | null>(null);
  const error = useSignal<unknown>(null);
  const { error: actionError, call } = useCall();
  const live = useSignal(false);
  const retryVersion = useSignal<"original" | "latest">("original");

  useEffect(() => {
    let watcher: { stop(): void } | undefined;
    api
      .get<Run>(`/api/runs/${id}`)
      .then((res) => {
        run.value = res.data;
        if (TERMINAL_RUN_STATUSES.has(res.data.status)) return;
        live.value = true;
        watcher = watchRun(id, {
          // The run was set just above before watching it, and nothing sets it back to null.
          run: (update) => {
            const current = run.value;
            if (current) run.value = { ...current, ...update, steps: current.steps };
          },
          step: (step: RunStep) => {
            const current = run.value;
            if (!current) return;
            const steps = [...(current.steps ?? [])];
            const at = steps.findIndex((s) => s.id === step.id);
            if (at >= 0) steps[at] = { ...steps[at], ...step };
            else steps.push(step);
            run.value = { ...current, steps };
          },
          end: () => {
            live.value = false;
            api
              .get<Run>(`/api/runs/${id}`)
              .then((res) => {
                run.value = res.data;
              })
              .catch(() => undefined);
          },
        });
      })
      .catch((e) => {
        error.value = e;
      });
    return () => watcher?.stop();
  }, [id]);

  if (error.value)
    return (
      <main class="page">
        <ErrorNote error={error.value} />
        <a href={href.runs()}>Back to runs</a>
      </main>
    );
  const r = run.value;
  if (!r)
    return (
      <main class="page">
        <p class="muted">Loading run…</p>
      </main>
    );
  const retry = (from: "failed_step" | "start") =>
    call(async () => {
      const res = await api.post<Run>(`/api/runs/${id}/retry`, { from, version: retryVersion.value });
      navigate(href.run(res.data.id));
    });
  const cancel = () =>
    call(async () => {
      const res = await api.post<Run>(`/api/runs/${id}/cancel`);
      run.value = { ...r, ...res.data, steps: r.steps };
    });
  return (
    <main class="page run-detail">
      <header class="page-head">
        <a href={href.runs()} class="back" aria-label="Back to runs">
          ←
        </a>
        <h1>
          Run of <a href={href.editor(r.workflowId)}>{r.workflowName ?? "workflow"}</a>
        </h1>
        <StatusBadge status={r.status} />
        {live.value && (
          <span class="live-dot" role="status">
            live
          </span>
        )}
        <span class="spacer" />
        {!TERMINAL_RUN_STATUSES.has(r.status) && (
          <button type="button" class="danger" onClick={cancel}>
            Cancel run
          </button>
        )}
        {TERMINAL_RUN_STATUSES.has(r.status) && (
          <>
            <label class="field inline">
              <span>Version</span>
              <select
                value={retryVersion.value}
                onChange={(e) => {
                  retryVersion.value = (e.target as HTMLSelectElement).value as "original" | "latest";
                }}
              >
                <option value="original">as it ran</option>
                <option value="latest">latest</option>
              </select>
            </label>
            {r.status === "failed" && (
              <button type="button" onClick={() => retry("failed_step")}>
                Retry from failed step
              </button>
            )}
            <button type="button" onClick={() => retry("start")}>
              Retry from start
            </button>
          </>
        )}
      </header>
      <ErrorNote error={actionError.value} />
      <dl class="facts">
        {runFacts(r).map(([term, value]) => (
          <Fragment key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
      <ErrorParagraph class="note note-error" alert message={r.errorMessage} />
      <details>
        <summary>Trigger data</summary>
        <JsonView value={r.triggerData} label="Trigger data" />
      </details>
      <h2>Steps</h2>
      {(r.steps ?? []).length === 0 &&
        (r.status === "completed" && (r.stepTotal ?? 0) > 0 ? (
          // A successful run of a workflow whose settings.saveRuns keeps failed runs only (docs/engine.md, "Run saving").
          <p class="muted" data-steps-not-kept>
            {r.stepTotal} step{r.stepTotal === 1 ? "" : "s"} ran; their inputs and outputs were not kept (the workflow saves the steps of failed runs only).
          </p>
        ) : (
          <p class="muted">No steps recorded yet.</p>
        ))}
      <ol class="run-steps">
        {(r.steps ?? []).map((step) => (
          <li key={step.id} class={`run-step status-border-${step.status}`} data-step={step.nodeId}>
            <div class="row">
              <StatusBadge status={step.status} />
              <strong>{step.displayName || step.nodeId}</strong>
              <span class="muted">
                {step.nodeId}
                {step.pieceId ? ` · ${step.pieceId}.${step.actionId}` : ""}
              </span>
              <span class="spacer" />
              <span class="muted">
                {duration(step.durationMs)}
                {step.retryCount ? ` · ${step.retryCount} retries` : ""}
              </span>
            </div>
            <ErrorParagraph class="error-text" message={step.errorMessage} />
            <details>
              <summary>Input</summary>
              <JsonView value={step.inputData} label={`Input of ${step.nodeId}`} />
            </details>
            <details open={step.status !== "completed" ? undefined : true}>
              <summary>Output</summary>
              <JsonView value={step.outputData} label={`Output of ${step.nodeId}`} />
            </details>
          </li>
        ))}
      </ol>
    </main>
  );
}
