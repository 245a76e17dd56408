/** The workflow's webhook URL with copy, and "listen for a test event" through the test URL. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../../api";
import type { Run, Workflow } from "../../types";
import type { EditorStore } from "./editor-store";

/** `workflow` is the store's loaded workflow; the editor page passes it once it has checked it is there. */
export function WebhookBox({ store, workflow: wf }: { store: EditorStore; workflow: Workflow }) {
  const copied = useSignal(false);
  const listening = useSignal(false);
  const url = wf.webhookUrl ?? (wf.webhookToken ? `${location.origin}/webhook/${wf.webhookToken}` : null);
  useEffect(() => {
    if (!listening.value) return;
    // A request to the test URL starts a test run; pick up the first one that starts after now.
    const since = new Date().toISOString();
    let stopped = false;
    const tick = async () => {
      if (stopped) return;
      try {
        const res = await api.get<Run[]>("/api/runs", { workflowId: wf.id, environment: "test", limit: 1 });
        const run = res.data[0];
        if (run && run.startedAt && run.startedAt >= since) {
          listening.value = false;
          await store.refreshRun(run.id);
          return;
        }
      } catch {
        /* keep listening */
      }
      setTimeout(tick, 1000);
    };
    void tick();
    return () => {
      stopped = true;
    };
  }, [listening.value]);
  if (!url) {
    return <p class="muted webhook">The webhook URL appears once the draft with its webhook trigger is saved.</p>;
  }
  const live = wf.status === "active";
  return (
    <div class="webhook" role="group" aria-label="Webhook">
      <div class="row">
        <label for="webhook-url">Webhook URL {live ? "(live)" : "(answers 404 until published)"}</label>
        <input id="webhook-url" readOnly value={url} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <button
          type="button"
          class="small"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(url);
            } catch {
              const input = document.getElementById("webhook-url") as HTMLInputElement;
              input.select();
              document.execCommand?.("copy");
            }
            copied.value = true;
            setTimeout(() => {
              copied.value = false;
            }, 1500);
          }}
        >
          {copied.value ? "Copied" : "Copy"}
        </button>
        <button
          type="button"
          class="small"
          aria-pressed={listening.value}
          onClick={() => {
            listening.value = !listening.value;
          }}
        >
          {listening.value ? "Stop listening" : "Listen for test event"}
        </button>
      </div>
      {listening.value && (
        <p class="help" role="status">
          Send a request to <code>{url}/test</code>; it runs the draft and shows the result here.
        </p>
      )}
    </div>
  );
}
