/**
 * The workflow's settings (the definition's `settings`): time limit, concurrency, error workflow,
 * maintenance mode, automatic publishing of fixes, what is kept of its runs (saveRuns) and how long and how
 * many of them are kept. They
 * are part of the draft: saving here is an edit like any other (autosaved, published with the rest), except
 * retention, which the server reads from the saved draft at its next sweep. An empty field means the
 * instance's default.
 */
import { type Signal, useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../../api";
import { Dialog } from "../../components/dialog";
import { SAVE_RUNS_LABELS } from "../../format";
import type { EditorStore } from "./editor-store";
import { bindChecked, bindSelect } from "../../bind";

interface NumberField {
  key: "timeoutSeconds" | "concurrencyLimit" | "retentionDays" | "retentionMaxRuns";
  label: string;
  min: number;
  max: number;
  help: string;
}

const NUMBERS: NumberField[] = [
  { key: "timeoutSeconds", label: "Time limit (seconds)", min: 1, max: 86_400, help: "A run still going after this fails. Empty: the instance's limit." },
  { key: "concurrencyLimit", label: "Runs at once", min: 1, max: 1000, help: "Live runs beyond this wait as pending. Empty: no limit." },
  {
    key: "retentionDays",
    label: "Keep runs for (days)",
    min: 0,
    max: 36_500,
    help: "Finished runs older than this are deleted; 0 keeps them. Empty: the instance's setting.",
  },
  {
    key: "retentionMaxRuns",
    label: "Keep at most (runs)",
    min: 0,
    max: 1_000_000_000,
    help: "The oldest finished runs beyond this are deleted; 0: no cap. Empty: the workspace's cap counts this workflow's runs.",
  },
];

function Check({ value, label }: { value: Signal<boolean>; label: string }) {
  return (
    <label class="check">
      <input type="checkbox" {...bindChecked(value)} /> {label}
    </label>
  );
}

export function SettingsDialog({ store, onClose }: { store: EditorStore; onClose(): void }) {
  const settings = (store.definition.value?.settings ?? {}) as Record<string, unknown>;
  const text = useSignal<Record<string, string>>(Object.fromEntries(NUMBERS.map((f) => [f.key, settings[f.key] === undefined ? "" : String(settings[f.key])])));
  const errorWorkflowId = useSignal(typeof settings.errorWorkflowId === "string" ? settings.errorWorkflowId : "");
  const maintenanceMode = useSignal(settings.maintenanceMode === true);
  const autoPublishFixes = useSignal(settings.autoPublishFixes === true);
  const saveRuns = useSignal(typeof settings.saveRuns === "string" ? settings.saveRuns : "all");
  const others = useSignal<Array<{ id: string; name: string }> | null>(null);
  const problem = useSignal<string | null>(null);

  useEffect(() => {
    void api
      .get<Array<{ id: string; name: string }>>("/api/workflows", { limit: 100 })
      .then((res) => {
        others.value = res.data.filter((w) => w.id !== store.id);
      })
      .catch(() => {
        others.value = [];
      });
  }, [store.id]);

  const save = (event: Event) => {
    event.preventDefault();
    const def = store.definition.value;
    if (!def) return;
    const next: Record<string, unknown> = { ...(def.settings ?? {}) };
    for (const field of NUMBERS) {
      const raw = (text.value[field.key] ?? "").trim();
      if (raw === "") {
        delete next[field.key];
        continue;
      }
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < field.min || n > field.max) {
        problem.value = `${field.label}: a whole number from ${field.min.toLocaleString("en-US")} to ${field.max.toLocaleString("en-US")}, or empty`;
        return;
      }
      next[field.key] = n;
    }
    if (errorWorkflowId.value) next.errorWorkflowId = errorWorkflowId.value;
    else delete next.errorWorkflowId;
    if (maintenanceMode.value) next.maintenanceMode = true;
    else delete next.maintenanceMode;
    if (autoPublishFixes.value) next.autoPublishFixes = true;
    else delete next.autoPublishFixes;
    if (saveRuns.value !== "all") next.saveRuns = saveRuns.value;
    else delete next.saveRuns;
    problem.value = null;
    store.change({ ...def, settings: next });
    onClose();
  };

  return (
    <Dialog title="Workflow settings" onClose={onClose}>
      <form class="stack" onSubmit={save} aria-label="Workflow settings">
        {NUMBERS.map((field) => (
          <div class="field" key={field.key}>
            <label for={`setting-${field.key}`}>{field.label}</label>
            <input
              id={`setting-${field.key}`}
              inputMode="numeric"
              value={text.value[field.key]}
              aria-describedby={`setting-${field.key}-help`}
              onInput={(e) => {
                text.value = { ...text.value, [field.key]: (e.target as HTMLInputElement).value };
              }}
            />
            <span class="help" id={`setting-${field.key}-help`}>
              {field.help}
            </span>
          </div>
        ))}
        <div class="field">
          <label for="setting-errorWorkflowId">Error workflow</label>
          <select id="setting-errorWorkflowId" {...bindSelect(errorWorkflowId)}>
            <option value="">None</option>
            {/* The stored choice stays selectable while the list loads (or if it is not among the first 100). */}
            {errorWorkflowId.value && !others.value?.some((w) => w.id === errorWorkflowId.value) && (
              <option value={errorWorkflowId.value}>{errorWorkflowId.value}</option>
            )}
            {(others.value ?? []).map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
          <span class="help">Started with a summary of each failed live run of this workflow.</span>
        </div>
        <div class="field">
          <label for="setting-saveRuns">Save runs</label>
          <select id="setting-saveRuns" aria-describedby="setting-saveRuns-help" {...bindSelect(saveRuns)}>
            {Object.entries(SAVE_RUNS_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          <span class="help" id="setting-saveRuns-help">
            Failed and cancelled runs are always kept whole. Every run still counts in the run chart and the metrics. Takes effect for live runs once published.
          </span>
        </div>
        <Check value={maintenanceMode} label="Maintenance mode: hold live runs as pending (test runs go on)" />
        <Check value={autoPublishFixes} label="Publish valid saves of a live workflow at once" />
        {problem.value && (
          <p class="field-error" role="alert">
            {problem.value}
          </p>
        )}
        <div class="row">
          <button type="submit" class="primary">
            Apply settings
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
