/** The selected step: its names, what it does, its configuration, diagnostics and last test result. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../../api";
import { projection } from "../../catalog";
import { CommitInput } from "../../components/commit-input";
import { ErrorNote } from "../../components/error-note";
import { JsonView } from "../../components/json-view";
import { duration, ErrorParagraph, StatusBadge } from "../../format";
import type { ActionNode, StepNode, Workflow } from "../../types";
import { ConfigForm, dataPaths, type DataPath } from "./config-form";
import { ConnectionPicker } from "./connection-picker";
import type { EditorStore } from "./editor-store";
import { ExpressionInput, ExpressionPicker } from "./expression-input";
import { RouterEditor } from "./router-editor";
import { LastProductionRun, ResultTabs, resultTab, triggerStep } from "./step-results";
import { earlierSteps, findStep, moveStep, removeStep, renameStep, updateStep } from "./tree";

export function availablePaths(store: EditorStore, stepName: string, triggerSample?: unknown): DataPath[] {
  const def = store.definition.value;
  const wf = store.workflow.value;
  const out: DataPath[] = [];
  // Called by the step panel, which shows only once the definition is loaded.
  if (!def) return out;
  for (const name of earlierSteps(def, stepName)) {
    const result = store.stepResults.value.get(name);
    if (name === def.trigger.name) {
      // Real data first (last test, pinned), else the trigger's declared example.
      const data = result?.outputData ?? wf?.pinnedData?.[name]?.data ?? store.testRun.value?.triggerData ?? triggerSample;
      out.push(...(data ? dataPaths("trigger", data) : [{ label: "trigger.body", expression: "trigger.body" }]));
    } else {
      const data = result?.outputData ?? wf?.pinnedData?.[name]?.data;
      out.push(...(data !== undefined ? dataPaths(`${name}.output`, data) : [{ label: `${name}.output`, expression: `${name}.output` }]));
    }
  }
  return out;
}

const KIND_TEXT: Record<string, string> = {
  ROUTER: "Router: the run takes the first branch whose conditions hold",
  LOOP_ON_ITEMS: "Loop: the steps inside run once per item",
};

/** A step as the panel edits it: any kind, with the fields of an action step. */
type EditedStep = StepNode & Partial<ActionNode>;

export function StepPanel({
  store,
  onChangeKind,
  onAddErrorHandler,
}: {
  store: EditorStore;
  onChangeKind(name: string): void;
  onAddErrorHandler(name: string): void;
}) {
  // The editor shows this panel only for a selected step of a loaded definition; the hooks below run either way.
  const def = store.definition.value;
  const name = store.selected.value;
  const node = def && name !== null ? (findStep(def, name) as (StepNode & Partial<ActionNode>) | undefined) : undefined;
  const renameError = useSignal<string | null>(null);
  const pinError = useSignal<unknown>(null);
  const triggerSample = useSignal<unknown>(undefined);
  const triggerPiece = def?.trigger.pieceId;
  const triggerId = def?.trigger.actionId;
  useEffect(() => {
    if (!triggerPiece || !triggerId) return;
    projection("triggers", triggerPiece, triggerId)
      .then((p) => {
        triggerSample.value = p.sampleData ?? undefined;
      })
      .catch(() => undefined);
  }, [triggerPiece, triggerId]);
  if (!def || !node) return <p class="muted">That step no longer exists.</p>;
  const isTrigger = node === def.trigger || node.name === def.trigger.name;
  const diags = store.diagnosticsByStep.value.get(node.name) ?? [];
  const testRun = store.testRun.value;
  // The trigger has no step record: what it passed on is the run's trigger data.
  const result = store.stepResults.value.get(node.name) ?? (isTrigger && testRun ? triggerStep(testRun, node.name) : undefined);
  const pinned = store.workflow.value?.pinnedData?.[node.name];
  const paths = availablePaths(store, node.name, triggerSample.value);
  const patch = (fn: (n: EditedStep) => void) => store.change(updateStep(def, node.name, fn));
  /** A handler that sets one field of the step to the value it is given. */
  const setField =
    <K extends keyof EditedStep>(key: K) =>
    (value: EditedStep[K]) =>
      patch((n) => {
        n[key] = value;
      });
  const setItems = (items: string) =>
    patch((n) => {
      n.config = { ...n.config, items };
    });
  const idBase = `step-${node.name}`.replace(/[^A-Za-z0-9_-]/g, "_");

  const pin = async (data: unknown) => {
    pinError.value = null;
    try {
      await store.flush();
      await api.put(`/api/workflows/${store.id}/pinned-data/${encodeURIComponent(node.name)}`, { data });
      const res = await api.get<Workflow>(`/api/workflows/${store.id}`);
      // The panel shows only in a loaded editor, and the workflow is never unset once loaded.
      const current = store.workflow.value;
      if (current) store.workflow.value = { ...current, pinnedData: res.data.pinnedData, definitionRev: res.data.definitionRev };
    } catch (error) {
      pinError.value = error;
    }
  };
  const unpin = async () => {
    pinError.value = null;
    try {
      await api.del(`/api/workflows/${store.id}/pinned-data/${encodeURIComponent(node.name)}`);
      const res = await api.get<Workflow>(`/api/workflows/${store.id}`);
      // The panel shows only in a loaded editor, and the workflow is never unset once loaded.
      const current = store.workflow.value;
      if (current) store.workflow.value = { ...current, pinnedData: res.data.pinnedData, definitionRev: res.data.definitionRev };
    } catch (error) {
      pinError.value = error;
    }
  };

  return (
    <section class="panel" aria-labelledby={`${idBase}-title`}>
      <header class="panel-head">
        <h2 id={`${idBase}-title`}>{node.displayName || node.name}</h2>
        <p class="muted">
          {isTrigger ? `Trigger · ${node.type}` : node.type === "PIECE" ? `${node.pieceId} · ${node.actionId}` : (KIND_TEXT[node.type] ?? node.type)}
        </p>
      </header>

      {diags.length > 0 && (
        <ul class="diagnostics" aria-label={`Problems of ${node.name}`}>
          {diags.map((d, i) => (
            <li key={i} class={d.severity}>
              {d.message}
              {d.allowed && d.allowed.length > 0 && <span class="muted"> Allowed: {d.allowed.map(String).join(", ")}</span>}
            </li>
          ))}
        </ul>
      )}

      <div class="name-grid">
        <div class="field">
          <label for={`${idBase}-display`}>Display name</label>
          <CommitInput id={`${idBase}-display`} value={node.displayName ?? ""} onCommit={setField("displayName")} />
        </div>
        <div class="field">
          <label for={`${idBase}-name`}>Step name</label>
          <CommitInput
            id={`${idBase}-name`}
            value={node.name}
            aria-describedby={`${idBase}-name-help`}
            onCommit={(text) => {
              const next = text.trim();
              if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(next)) {
                renameError.value = "use letters, digits and _ (not starting with a digit)";
                return;
              }
              try {
                store.change(renameStep(def, node.name, next));
                store.selected.value = next;
                renameError.value = null;
              } catch (error) {
                renameError.value = (error as Error).message;
              }
            }}
          />
          {renameError.value && (
            <span class="field-error" role="alert">
              {renameError.value}
            </span>
          )}
        </div>
      </div>
      <p class="help name-help" id={`${idBase}-name-help`}>
        Later steps read this step's output as <code>{`{{${node.name}.output}}`}</code>.
      </p>

      <div class="row step-actions">
        <button type="button" class="small" onClick={() => onChangeKind(node.name)}>
          {isTrigger ? "Change trigger" : node.type === "PIECE" ? "Change action" : "Replace step"}
        </button>
        {!isTrigger && (
          <button type="button" class="small" onClick={() => store.change(moveStep(def, node.name, "up"))} aria-label={`Move ${node.name} up`}>
            ↑ Up
          </button>
        )}
        {!isTrigger && (
          <button
            type="button"
            class="small"
            onClick={() => store.change(moveStep(def, node.name, "down"))}
            aria-label={`Move ${node.name} down`}
            disabled={!node.nextAction}
          >
            ↓ Down
          </button>
        )}
        {!isTrigger && !node.onErrorAction && (
          <button type="button" class="small" onClick={() => onAddErrorHandler(node.name)}>
            Add error handler
          </button>
        )}
        {!isTrigger && (
          <button
            type="button"
            class="small danger"
            onClick={() => {
              const nested = (node.branches ?? []).some((b) => b.firstAction) || node.firstLoopAction || node.onErrorAction;
              if (nested && !confirm(`Delete ${node.name} with the steps inside it?`)) return;
              store.selected.value = null;
              store.change(removeStep(def, node.name));
            }}
          >
            Delete step
          </button>
        )}
      </div>

      {!isTrigger && (
        <label class="check">
          <input
            type="checkbox"
            checked={!!node.skip}
            onChange={(e) =>
              patch((n) => {
                if ((e.target as HTMLInputElement).checked) n.skip = true;
                else delete n.skip;
              })
            }
          />
          Skip this step (the run moves on without it)
        </label>
      )}

      {node.pieceId && node.actionId && (
        <>
          <ConnectionPicker
            pieceId={node.pieceId}
            actionId={node.actionId}
            kind={isTrigger ? "triggers" : "actions"}
            value={node.connectionId}
            onChange={(connectionId) =>
              patch((n) => {
                if (connectionId) n.connectionId = connectionId;
                else delete n.connectionId;
              })
            }
          />
          <h3>Configuration</h3>
          <ConfigForm
            key={`${node.name}-${store.generation.value}`}
            kind={isTrigger ? "triggers" : "actions"}
            pieceId={node.pieceId}
            actionId={node.actionId}
            stepName={node.name}
            config={node.config ?? {}}
            connectionId={node.connectionId}
            paths={paths}
            onChange={setField("config")}
          />
        </>
      )}

      {node.type === "ROUTER" && (
        <>
          <h3>Branches</h3>
          <RouterEditor
            key={`${node.name}-${store.generation.value}`}
            stepName={node.name}
            branches={node.branches ?? []}
            paths={paths}
            // Each branch keeps its steps as branches are edited, reordered or removed.
            onChange={setField("branches")}
          />
        </>
      )}

      {node.type === "LOOP_ON_ITEMS" && (
        <div class="field">
          <label for={`${idBase}-items`}>Items (an expression that gives a list)</label>
          <ExpressionInput
            id={`${idBase}-items`}
            label="Items"
            placeholder="{{trigger.body.items}}"
            value={String(node.config?.items ?? "")}
            paths={paths}
            onCommit={setItems}
          />
          <ExpressionPicker paths={paths} label="Items" onInsert={setItems} />
        </div>
      )}

      <ResultTabs idBase={idBase}>
        {resultTab.value === "production" ? (
          <LastProductionRun workflowId={store.id} stepName={node.name} isTrigger={isTrigger} idBase={idBase} />
        ) : (
          <section id={`${idBase}-results`} aria-label={`Test result of ${node.name}`}>
            {!result && <p class="muted">Run a test to see this step's input and output here.</p>}
            {result && (
              <>
                <p>
                  <StatusBadge status={result.status} />
                  {result.durationMs !== null && result.durationMs !== undefined ? ` ${duration(result.durationMs)}` : ""}
                  {result.retryCount ? ` · ${result.retryCount} retries` : ""}
                </p>
                <ErrorParagraph class="note note-error" alert message={result.errorMessage} />
                {!isTrigger && (
                  <details>
                    <summary>Input</summary>
                    <JsonView value={result.inputData} label={`Input of ${node.name}`} />
                  </details>
                )}
                <h4>{isTrigger ? "Trigger data" : "Output"}</h4>
                <JsonView value={result.outputData} label={`Output of ${node.name}`} />
                {result.outputData !== undefined && !isTrigger && (
                  <button type="button" class="small" onClick={() => pin(result.outputData)}>
                    Pin this output
                  </button>
                )}
              </>
            )}
            {pinned && (
              <p class="note">
                Output pinned {pinned.stale ? "(stale: the step changed since) " : ""}— test runs use it instead of running the step.{" "}
                <button type="button" class="link" onClick={unpin}>
                  Unpin
                </button>
              </p>
            )}
            <ErrorNote error={pinError.value} />
          </section>
        )}
      </ResultTabs>
    </section>
  );
}
