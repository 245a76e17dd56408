/** Published versions, newest first; restore copies one over the draft (production stays untouched). */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../../api";
import { Dialog } from "../../components/dialog";
import { ErrorNote } from "../../components/error-note";
import { when } from "../../format";
import type { VersionSummary } from "../../types";
import { useCall } from "../../use-call";
import type { EditorStore } from "./editor-store";

export function VersionsDialog({ store, onClose }: { store: EditorStore; onClose(): void }) {
  const versions = useSignal<VersionSummary[] | null>(null);
  const { error, call } = useCall();
  useEffect(() => {
    void call(async () => {
      const res = await api.get<VersionSummary[]>(`/api/workflows/${store.id}/versions`, { limit: 100 });
      versions.value = [...res.data].sort((a, b) => b.number - a.number);
    });
  }, []);
  return (
    <Dialog title="Version history" onClose={onClose}>
      <ErrorNote error={error.value} />
      {versions.value?.length === 0 && <p class="muted">No published versions yet. Publishing creates one.</p>}
      {versions.value === null && !error.value && <p class="muted">Loading…</p>}
      <ul class="versions">
        {(versions.value ?? []).map((version) => (
          <li key={version.id}>
            <span>
              <strong>Version {version.number}</strong>
              {version.live && <span class="badge status-active">live</span>}
            </span>
            <span class="muted">
              {when(version.createdAt)} · {version.triggerType}
            </span>
            <button
              type="button"
              class="small"
              aria-label={`Restore version ${version.number}`}
              disabled={store.busy.value === "restore"}
              onClick={async () => {
                await store.restore(version.id);
                if (!store.actionError.value) onClose();
                else error.value = store.actionError.value;
              }}
            >
              Restore
            </button>
          </li>
        ))}
      </ul>
      <p class="help">Restoring rewrites the draft only; the live version keeps running until you publish.</p>
    </Dialog>
  );
}
