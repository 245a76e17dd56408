/**
 * Follows one run live: the SSE stream `GET /api/runs/{id}/stream` (events `run`, `step`, `end`),
 * falling back to polling `GET /api/runs/{id}` when the stream is unavailable.
 */
import { api } from "./api";
import { TERMINAL_RUN_STATUSES } from "./format";
import type { Run, RunStep } from "./types";

export interface RunWatcher {
  stop(): void;
}

export function watchRun(id: string, handlers: { run(run: Partial<Run>): void; step(step: RunStep): void; end(): void }): RunWatcher {
  let stopped = false;
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = () => {
    if (stopped) return;
    stopped = true;
    source?.close();
    if (timer) clearTimeout(timer);
    handlers.end();
  };
  const parse = (event: MessageEvent) => {
    try {
      return JSON.parse(event.data);
    } catch {
      return undefined;
    }
  };
  const poll = async () => {
    if (stopped) return;
    try {
      const res = await api.get<Run>(`/api/runs/${id}`);
      handlers.run(res.data);
      for (const step of res.data.steps ?? []) handlers.step(step);
      if (TERMINAL_RUN_STATUSES.has(res.data.status)) return finish();
    } catch {
      /* keep polling; the page shows the last state */
    }
    timer = setTimeout(poll, 1000);
  };
  if (typeof EventSource === "undefined") {
    void poll();
  } else {
    source = new EventSource(`/api/runs/${id}/stream`);
    source.addEventListener("run", (event) => {
      const data = parse(event as MessageEvent);
      if (data) handlers.run(data.run ?? data);
    });
    source.addEventListener("step", (event) => {
      const data = parse(event as MessageEvent);
      if (data) handlers.step(data.step ?? data);
    });
    source.addEventListener("end", (event) => {
      const data = parse(event as MessageEvent);
      if (data && (data.status || data.run)) handlers.run(data.run ?? data);
      finish();
    });
    source.onerror = () => {
      // A closed or refused stream: switch to polling rather than reconnecting forever.
      if (stopped) return;
      source?.close();
      source = undefined;
      void poll();
    };
  }
  return {
    stop: () => {
      stopped = true;
      source?.close();
      if (timer) clearTimeout(timer);
    },
  };
}
