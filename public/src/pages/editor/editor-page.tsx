/** The editor: header actions, the step tree, and the panel of the selected step. */
import { useSignal } from "@preact/signals";
import { useEffect, useMemo } from "preact/hooks";
import { ErrorNote } from "../../components/error-note";
import { duration, ErrorText, StatusBadge } from "../../format";
import { href } from "../../router";
import type { ActionNode, Definition } from "../../types";
import { EditorNotice, HistoryButtons, useEditorShortcuts } from "./editor-commands";
import { createEditorStore, type EditorStore } from "./editor-store";
import { PiecePicker, type Pick } from "./piece-picker";
import { SettingsDialog } from "./settings-dialog";
import { StepPanel } from "./step-panel";
import { StepTree } from "./step-tree";
import { TestRunDialog } from "./test-run-dialog";
import { NEW_LOOP, NEW_ROUTER, findStep, insertStep, uniqueName, updateStep, type Slot } from "./tree";
import { TagsEditor } from "./tags-editor";
import { VariablesDialog } from "./variables-dialog";
import { VersionsDialog } from "./versions-dialog";
import { WebhookBox } from "./webhook-box";
import { setTo } from "../../bind";

type PickerState = { mode: "insert"; slot: Slot; label: string } | { mode: "replace"; name: string } | { mode: "trigger" } | null;

export function nodeFromPick(def: Definition, pick: Pick): ActionNode {
  if (pick.kind === "router") return NEW_ROUTER(uniqueName(def, "router"));
  if (pick.kind === "loop") return NEW_LOOP(uniqueName(def, "loop"));
  if (pick.kind !== "piece") throw new Error("a trigger cannot be a step");
  return { name: uniqueName(def, pick.id), displayName: pick.name, type: "PIECE", pieceId: pick.piece.id, actionId: pick.id, config: {} };
}

function SaveStatus({ store }: { store: EditorStore }) {
  const state = store.saveState.value;
  const text = { saved: "All changes saved", pending: "Unsaved changes…", saving: "Saving…", error: "Not saved", conflict: "Not saved: conflict" }[state];
  return (
    <span class={`save-state save-${state}`} role="status" aria-live="polite">
      {text}
    </span>
  );
}

type EditorDialog = "test" | "versions" | "variables" | "settings";

function Header({ store, open }: { store: EditorStore; open(dialog: EditorDialog): void }) {
  const wf = store.workflow.value;
  // EditorPage renders the header only once the workflow is loaded.
  if (!wf) return null;
  const errors = store.diagnostics.value?.errors.length ?? 0;
  return (
    <header class="editor-head">
      <div class="head-row">
        <a href={href.workflows()} class="back" aria-label="Back to workflows">
          ←
        </a>
        <input
          class="title-input"
          aria-label="Workflow name"
          value={wf.name}
          onChange={(e) => {
            const name = (e.target as HTMLInputElement).value.trim();
            if (name && name !== wf.name) void store.rename(name);
          }}
        />
        <StatusBadge status={wf.status} />
        {wf.hasUnpublishedChanges && wf.latestVersionId && <span class="badge">unpublished changes</span>}
        <SaveStatus store={store} />
        <span class="spacer" />
        <span class={`diag-count${errors ? " has-errors" : ""}`} aria-live="polite">
          {store.diagnostics.value ? (errors ? `${errors} problem${errors > 1 ? "s" : ""}` : "Valid") : ""}
        </span>
        <button type="button" onClick={() => open("test")} disabled={store.busy.value === "test"}>
          {store.busy.value === "test" ? "Testing…" : "Test run"}
        </button>
        {wf.status === "active" && (
          <button type="button" onClick={() => store.unpublish()} disabled={!!store.busy.value}>
            Unpublish
          </button>
        )}
        <PublishButton store={store} />
      </div>
      {/* The toolbar: editing aids on the left, the workflow's other settings on the right. */}
      <div class="head-row toolbar">
        <HistoryButtons store={store} />
        <TagsEditor tags={wf.tags} onChange={(tags) => store.setTags(tags)} busy={store.saveState.value === "conflict"} />
        <span class="spacer" />
        <button type="button" class="small" onClick={() => open("variables")}>
          Variables
        </button>
        <button type="button" class="small" onClick={() => open("versions")}>
          Versions
        </button>
        <button type="button" class="small" onClick={() => open("settings")} disabled={store.saveState.value === "conflict"}>
          Settings
        </button>
      </div>
    </header>
  );
}

/** "Publish" for a workflow not live, "Publish changes" when the draft differs from the live version, else a disabled "Published". */
function PublishButton({ store }: { store: EditorStore }) {
  const wf = store.workflow.value;
  // Rendered by Header, which needs the workflow loaded.
  if (!wf) return null;
  const upToDate = wf.status === "active" && !wf.hasUnpublishedChanges && store.saveState.value === "saved";
  const label = store.busy.value === "publish" ? "Publishing…" : upToDate ? "Published" : wf.status === "active" ? "Publish changes" : "Publish";
  return (
    <button
      type="button"
      class={upToDate ? "published" : "primary"}
      onClick={() => store.publish()}
      disabled={!!store.busy.value || upToDate}
      title={upToDate ? "The live version is this draft: nothing to publish" : undefined}
    >
      {label}
    </button>
  );
}

function TestRunSummary({ store }: { store: EditorStore }) {
  const run = store.testRun.value;
  if (!run) return null;
  return (
    <div class="test-summary" role="status" aria-label="Last test run">
      Test run <StatusBadge status={run.status} /> {duration(run.durationMs)}
      {run.errorMessage && (
        <span class="error-text">
          {" — "}
          <ErrorText message={run.errorMessage} />
        </span>
      )}{" "}
      <a href={href.run(run.id)}>Open run</a>
    </div>
  );
}

export function EditorPage({ id }: { id: string }) {
  const store = useMemo(() => createEditorStore(id), [id]);
  const picker = useSignal<PickerState>(null);
  const dialog = useSignal<EditorDialog | null>(null);
  useEditorShortcuts(store);
  useEffect(() => {
    void store.load();
    const beforeUnload = (event: BeforeUnloadEvent) => {
      if (store.saveState.value === "pending" || store.saveState.value === "saving") {
        event.preventDefault();
        void store.save();
      }
    };
    window.addEventListener("beforeunload", beforeUnload);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      store.dispose();
    };
  }, [store]);

  if (store.loadError.value)
    return (
      <main class="page">
        <ErrorNote error={store.loadError.value} />
        <a href={href.workflows()}>Back to workflows</a>
      </main>
    );
  const wf = store.workflow.value;
  const def = store.definition.value;
  if (!wf || !def)
    return (
      <main class="page">
        <p class="muted">Loading workflow…</p>
      </main>
    );

  const onPick = (pick: Pick) => {
    const state = picker.value;
    picker.value = null;
    if (!state) return;
    if (state.mode === "trigger") {
      store.change(
        updateStep(def, def.trigger.name, (t) => {
          const keep = { name: t.name, nextAction: (t as ActionNode).nextAction };
          for (const key of Object.keys(t)) Reflect.deleteProperty(t, key);
          if (pick.kind === "manual") Object.assign(t, { ...keep, displayName: "Manual trigger", type: "manual", config: {} });
          else if (pick.kind === "piece")
            Object.assign(t, { ...keep, displayName: pick.name, type: pick.triggerType ?? "webhook", pieceId: pick.piece.id, actionId: pick.id, config: {} });
          if (!keep.nextAction) delete (t as ActionNode).nextAction;
        }),
      );
      store.selected.value = def.trigger.name;
      return;
    }
    if (state.mode === "replace") {
      const fresh = nodeFromPick(def, pick);
      store.change(
        updateStep(def, state.name, (n) => {
          const keep = { name: n.name, nextAction: n.nextAction, onErrorAction: n.onErrorAction, skip: n.skip };
          for (const key of Object.keys(n)) Reflect.deleteProperty(n, key);
          Object.assign(n, { ...fresh, ...Object.fromEntries(Object.entries(keep).filter(([, v]) => v !== undefined)) });
        }),
      );
      return;
    }
    const node = nodeFromPick(def, pick);
    store.change(insertStep(def, state.slot, node));
    store.selected.value = node.name;
  };

  const selectedNode = store.selected.value ? findStep(def, store.selected.value) : undefined;
  const general = store.diagnosticsByStep.value.get("") ?? [];
  return (
    <main class="editor">
      <Header
        store={store}
        open={(d) => {
          dialog.value = d;
        }}
      />
      {store.saveState.value === "conflict" && (
        <div class="note note-error conflict" role="alert">
          <span>
            This workflow was changed elsewhere (another tab, person or script) after you opened it, so your last edits were <strong>not saved</strong>. Editing
            is paused until you choose.
          </span>
          <details class="small-text">
            <summary>What the server said</summary>
            {String((store.saveError.value as Error)?.message ?? "")}
          </details>
          <span class="row">
            <button type="button" onClick={() => store.reload()}>
              Load the latest version (drop my edits)
            </button>
            <button type="button" class="danger" onClick={() => store.overwrite()}>
              Overwrite with my version
            </button>
          </span>
        </div>
      )}
      {store.saveState.value === "error" && <ErrorNote error={store.saveError.value} />}
      <EditorNotice store={store} />
      <ErrorNote
        error={store.actionError.value}
        onDismiss={() => {
          store.actionError.value = null;
        }}
      />
      {general.length > 0 && (
        <ul class="diagnostics" aria-label="Problems of the workflow">
          {general.map((d, i) => (
            <li key={i} class={d.severity}>
              {d.path ? <code>{d.path}</code> : null} {d.message}
            </li>
          ))}
        </ul>
      )}
      {def.trigger.type === "webhook" && <WebhookBox store={store} workflow={wf} />}
      <TestRunSummary store={store} />
      <div class="editor-body">
        <StepTree
          store={store}
          onAdd={(slot, label) => {
            picker.value = { mode: "insert", slot, label };
          }}
        />
        <aside class="side" aria-label="Selected step">
          {selectedNode ? (
            <StepPanel
              key={selectedNode.name}
              store={store}
              onChangeKind={(name) => {
                picker.value = name === def.trigger.name ? { mode: "trigger" } : { mode: "replace", name };
              }}
              onAddErrorHandler={(name) => {
                picker.value = { mode: "insert", slot: { owner: name, kind: "error" }, label: `Add an error handler to ${name}` };
              }}
            />
          ) : (
            <p class="muted">Select a step to configure it, or press + to add one.</p>
          )}
        </aside>
      </div>
      {picker.value && (
        <PiecePicker
          mode={picker.value.mode === "trigger" ? "trigger" : "action"}
          title={picker.value.mode === "trigger" ? "Choose the trigger" : picker.value.mode === "replace" ? "Replace the step" : picker.value.label}
          onPick={onPick}
          onClose={setTo(picker, null)}
        />
      )}
      {dialog.value === "test" && <TestRunDialog store={store} onClose={setTo(dialog, null)} />}
      {dialog.value === "versions" && <VersionsDialog store={store} onClose={setTo(dialog, null)} />}
      {dialog.value === "settings" && <SettingsDialog store={store} onClose={setTo(dialog, null)} />}
      {dialog.value === "variables" && <VariablesDialog workflowId={store.id} onClose={setTo(dialog, null)} />}
    </main>
  );
}
