/** "Test run": the draft runs with a payload as the trigger input; the result lands on each step. */
import { useSignal } from "@preact/signals";
import { api } from "../../api";
import { Dialog } from "../../components/dialog";
import { ErrorNote } from "../../components/error-note";
import type { EditorStore } from "./editor-store";
import { bindText } from "../../bind";

export function TestRunDialog({ store, onClose }: { store: EditorStore; onClose(): void }) {
  const saved = store.workflow.value?.testPayloads ?? {};
  const initial = saved.default ?? Object.values(saved)[0] ?? {};
  const text = useSignal(JSON.stringify(initial, null, 2));
  const error = useSignal<unknown>(null);
  const run = async (event: Event) => {
    event.preventDefault();
    let payload: unknown;
    try {
      payload = JSON.parse(text.value || "{}");
    } catch (e) {
      error.value = new Error(`the payload is not valid JSON: ${(e as Error).message}`);
      return;
    }
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      error.value = new Error("the payload must be a JSON object; it becomes trigger.body");
      return;
    }
    // Remember the payload for next time; a failure to store it must not block the run.
    void api.put(`/api/workflows/${store.id}/test-payloads`, { ...saved, default: payload }).catch(() => undefined);
    onClose();
    await store.runTest(payload);
  };
  return (
    <Dialog title="Test run" onClose={onClose}>
      <form class="stack" onSubmit={run}>
        <label class="field" for="test-payload">
          <span>Payload (JSON object; the steps read it as trigger.body)</span>
          <textarea id="test-payload" class="mono" rows={10} {...bindText(text)} />
        </label>
        <ErrorNote error={error.value} />
        <div class="row">
          <button type="submit" class="primary">
            Run test
          </button>
        </div>
      </form>
    </Dialog>
  );
}
