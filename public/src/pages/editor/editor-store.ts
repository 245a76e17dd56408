/**
 * One open workflow in the editor: the draft definition, autosave with `expectedRev` (a conflict
 * stops saving and is shown; nothing is overwritten silently), undo and redo of draft edits (saved
 * like any edit), live diagnostics from the one gate, publish/unpublish, restore, and test runs whose
 * step results are drawn on the tree.
 */
import { batch, computed, signal } from "@preact/signals";
import { ApiError, api } from "../../api";
import { TERMINAL_RUN_STATUSES } from "../../format";
import { watchRun } from "../../run-stream";
import type { Definition, Diagnostics, Run, RunStep, Workflow } from "../../types";
import { createHistory, describeEdit } from "./history";
import { findStep, stepForPath } from "./tree";

export const AUTOSAVE_DELAY_MS = 600;

export type SaveState = "saved" | "pending" | "saving" | "error" | "conflict";

export function createEditorStore(id: string) {
  const workflow = signal<Workflow | null>(null);
  const definition = signal<Definition | null>(null);
  const selected = signal<string | null>(null);
  const saveState = signal<SaveState>("saved");
  const saveError = signal<unknown>(null);
  const loadError = signal<unknown>(null);
  const actionError = signal<unknown>(null);
  const diagnostics = signal<Diagnostics | null>(null);
  const testRun = signal<Run | null>(null);
  const busy = signal<string | null>(null);
  /** Bumped by restore/reload/undo/redo so open forms re-read the definition. */
  const generation = signal(0);
  /** A short message about the last clipboard or history action ("Copied greet", "nothing to paste"). */
  const notice = signal<{ kind: "info" | "error"; text: string } | null>(null);
  const history = createHistory<Definition>();
  const canUndo = signal(false);
  const canRedo = signal(false);
  const showHistory = () => {
    canUndo.value = history.canUndo();
    canRedo.value = history.canRedo();
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  let saving: Promise<void> | undefined;
  let dirty = false;
  /** Name and tags waiting to be saved; they go in the same PUT (and the same expectedRev chain) as the draft. */
  let meta: { name?: string; tags?: string[] } = {};
  let watcher: { stop(): void } | undefined;

  const stepResults = computed(() => {
    const map = new Map<string, RunStep>();
    for (const step of testRun.value?.steps ?? []) map.set(step.nodeId, step);
    return map;
  });

  /** Diagnostics grouped by the step their path points into ("" for the whole workflow). */
  const diagnosticsByStep = computed(() => {
    const map = new Map<string, Array<{ severity: "error" | "warning"; message: string; path: string; allowed?: unknown[] }>>();
    const def = definition.value;
    const d = diagnostics.value;
    if (!def || !d) return map;
    const add = (severity: "error" | "warning") => (item: Diagnostics["errors"][number]) => {
      const step = stepForPath(def, item.path) ?? "";
      map.set(step, [...(map.get(step) ?? []), { severity, message: item.message, path: item.path, allowed: item.allowed }]);
    };
    d.errors.forEach(add("error"));
    d.warnings.forEach(add("warning"));
    return map;
  });

  async function load() {
    try {
      const res = await api.get<Workflow>(`/api/workflows/${id}`);
      batch(() => {
        workflow.value = res.data;
        definition.value = res.data.definition;
        saveState.value = "saved";
        saveError.value = null;
        loadError.value = null;
        generation.value++;
        // Undo steps were edits of the draft just replaced; they would undo someone else's version.
        history.clear();
        showHistory();
      });
      void validate();
    } catch (error) {
      loadError.value = error;
    }
  }

  async function validate() {
    const def = definition.value;
    if (!def) return;
    try {
      const res = await api.post<Diagnostics>("/api/workflows/validate", def, { workflowId: id });
      if (definition.value === def) diagnostics.value = res.data;
    } catch (error) {
      // A refusal before the gate (e.g. an unknown key) is itself a diagnostic of the whole workflow.
      if (error instanceof ApiError && error.status === 400)
        diagnostics.value = { valid: false, errors: [{ path: "", code: error.code, message: error.message }], warnings: [] };
    }
  }

  function change(next: Definition) {
    if (saveState.value === "conflict") return; // editing stops until the conflict is resolved
    const before = definition.value;
    if (before) {
      history.record(before, describeEdit(before, next));
      showHistory();
    }
    queueDraft(next);
  }

  /** Shows `next` and saves it after AUTOSAVE_DELAY_MS, through the one save queue. */
  function queueDraft(next: Definition) {
    definition.value = next;
    dirty = true;
    saveState.value = "pending";
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void save(), AUTOSAVE_DELAY_MS);
  }

  /** Goes back (undo) or forward (redo) one history entry; saved like any other edit. False when there is none. */
  function travel(direction: "undo" | "redo"): boolean {
    const current = definition.value;
    if (saveState.value === "conflict" || !current) return false;
    const target = direction === "undo" ? history.undo(current) : history.redo(current);
    showHistory();
    if (!target) return false;
    batch(() => {
      queueDraft(target);
      generation.value++;
      if (selected.value !== null && !findStep(target, selected.value)) selected.value = null;
    });
    return true;
  }
  const undo = () => travel("undo");
  const redo = () => travel("redo");

  const hasMeta = () => meta.name !== undefined || meta.tags !== undefined;

  async function runSave() {
    while ((dirty || hasMeta()) && saveState.value !== "conflict") {
      const withDefinition = dirty;
      dirty = false;
      const def = definition.value;
      const current = workflow.value;
      // Saves start from change() and changeMeta(), which edit a loaded workflow; load() sets both at once.
      if (!def || !current) throw new Error("the editor saved a workflow it has not loaded");
      const sent = meta;
      meta = {};
      saveState.value = "saving";
      try {
        const res = await api.put<Workflow>(`/api/workflows/${id}`, {
          ...sent,
          ...(withDefinition ? { definition: def } : {}),
          expectedRev: current.definitionRev,
        });
        // Name and tags typed while this save was in flight stay as typed until their own save.
        workflow.value = { ...res.data, ...meta };
        if (!dirty) {
          // Keep what the server normalised (filled pins) unless the user typed on meanwhile.
          definition.value = res.data.definition ?? def;
          saveState.value = "saved";
          saveError.value = null;
        }
      } catch (error) {
        meta = { ...sent, ...meta };
        if (withDefinition) dirty = true;
        if (error instanceof ApiError && error.code === "REVISION_CONFLICT") {
          saveState.value = "conflict";
          saveError.value = error;
          return;
        }
        saveState.value = "error";
        saveError.value = error;
        dirty = false;
        meta = {};
        return;
      }
    }
    void validate();
  }

  function save(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (!saving)
      saving = runSave().finally(() => {
        saving = undefined;
      });
    return saving;
  }

  /** Saves what is pending now; throws when the draft could not be saved. */
  async function flush() {
    if (saveState.value === "pending" || dirty) {
      dirty = true;
      await save();
    } else if (saving) await saving;
    if (saveState.value === "conflict" || saveState.value === "error") throw saveError.value;
  }

  /** Conflict resolution: drop local edits and take the server's draft. */
  const reload = () => {
    dirty = false;
    meta = {};
    return load();
  };

  /** Conflict resolution: write the local draft over the newer one, knowingly. */
  async function overwrite() {
    const mine = definition.value;
    // Offered only on a save conflict, so the draft is loaded.
    if (!mine) throw new Error("there is no draft to overwrite with");
    const res = await api.get<Workflow>(`/api/workflows/${id}`);
    workflow.value = { ...res.data, ...meta };
    saveState.value = "pending";
    saveError.value = null;
    definition.value = mine;
    dirty = true;
    await save();
  }

  /**
   * Publish, unpublish, restore and test runs take turns: each answer replaces the workflow shown, so a
   * restore clicked while a publish is still in flight must not be overwritten by the publish's answer.
   */
  let actions: Promise<void> = Promise.resolve();
  function act(label: string, fn: () => Promise<void>): Promise<void> {
    const turn = actions.then(async () => {
      busy.value = label;
      actionError.value = null;
      try {
        await fn();
      } catch (error) {
        actionError.value = error;
      } finally {
        busy.value = null;
      }
    });
    actions = turn;
    return turn;
  }

  const publish = () =>
    act("publish", async () => {
      await flush();
      try {
        const res = await api.post<Workflow>(`/api/workflows/${id}/publish`);
        workflow.value = res.data;
      } catch (error) {
        // The gate's refusal carries its diagnostics: draw them on the steps they name.
        const details = error instanceof ApiError ? (error.details as Partial<Diagnostics> | undefined) : undefined;
        if (details && Array.isArray(details.errors)) diagnostics.value = { valid: false, errors: details.errors, warnings: details.warnings ?? [] };
        throw error;
      }
    });

  const unpublish = () =>
    act("unpublish", async () => {
      const res = await api.post<Workflow>(`/api/workflows/${id}/unpublish`);
      workflow.value = res.data;
    });

  /** Name and tags save at once, queued with the draft so that our own saves never conflict with each other. */
  function changeMeta(patch: { name?: string; tags?: string[] }) {
    if (saveState.value === "conflict" || !workflow.value) return;
    meta = { ...meta, ...patch };
    workflow.value = { ...workflow.value, ...patch };
    if (saveState.value === "saved" || saveState.value === "error") saveState.value = "pending";
    void save();
  }
  const rename = (name: string) => changeMeta({ name });
  const setTags = (tags: string[]) => changeMeta({ tags });

  const restore = (versionId: string) =>
    act("restore", async () => {
      await flush().catch(() => undefined);
      const current = workflow.value;
      // The versions dialog opens from the loaded editor.
      if (!current) throw new Error("the workflow is not loaded");
      const res = await api.post<Workflow>(`/api/workflows/${id}/versions/${versionId}/restore`, { expectedRev: current.definitionRev });
      const before = definition.value;
      batch(() => {
        // A restore is undone like an edit: the draft before it is saved back as a new revision.
        if (before) history.record(before, describeEdit(before, res.data.definition));
        showHistory();
        workflow.value = res.data;
        definition.value = res.data.definition;
        saveState.value = "saved";
        generation.value++;
      });
      void validate();
    });

  /** Runs the draft as a test run with `payload` and follows it until it ends. */
  const runTest = (payload: unknown) =>
    act("test", async () => {
      await flush();
      watcher?.stop();
      const res = await api.post<Run>(`/api/workflows/${id}/run`, payload ?? {}, { environment: "test", wait: 30 });
      testRun.value = res.data;
      if (!res.data.steps || !TERMINAL_RUN_STATUSES.has(res.data.status)) await follow(res.data.id);
    });

  async function refreshRun(runId: string) {
    const res = await api.get<Run>(`/api/runs/${runId}`);
    testRun.value = res.data;
  }

  function follow(runId: string): Promise<void> {
    return new Promise((resolve) => {
      watcher = watchRun(runId, {
        // runTest sets the run before following it, and nothing sets it back to null.
        run: (run) => {
          const current = testRun.value;
          if (current) testRun.value = { ...current, ...run, steps: current.steps };
        },
        step: (step) => {
          const current = testRun.value;
          if (!current) return;
          const steps = [...(current.steps ?? [])];
          const at = steps.findIndex((s) => s.id === step.id || s.nodeId === step.nodeId);
          if (at >= 0) steps[at] = { ...steps[at], ...step };
          else steps.push(step);
          testRun.value = { ...current, steps };
        },
        end: () => {
          void refreshRun(runId)
            .catch(() => undefined)
            .finally(resolve);
        },
      });
    });
  }

  function dispose() {
    if (timer) {
      clearTimeout(timer);
      void save();
    }
    watcher?.stop();
  }

  return {
    id,
    workflow,
    definition,
    selected,
    saveState,
    saveError,
    loadError,
    actionError,
    diagnostics,
    diagnosticsByStep,
    testRun,
    stepResults,
    busy,
    generation,
    notice,
    canUndo,
    canRedo,
    load,
    validate,
    change,
    undo,
    redo,
    save,
    flush,
    reload,
    overwrite,
    publish,
    unpublish,
    rename,
    setTags,
    restore,
    runTest,
    refreshRun,
    dispose,
  };
}

export type EditorStore = ReturnType<typeof createEditorStore>;
