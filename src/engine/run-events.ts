/**
 * Live events of runs for whoever listens (the SSE stream, waiters): `run` (status changed), `step`
 * (a step row was written), `end` (the run finished). Events are built only when someone listens to
 * that run, so the hot path pays nothing for streams nobody opened.
 */
import type { RunT, StepT } from "../schema/run";

export type RunEvent = { type: "run"; id: number; run: RunT } | { type: "step"; id: number; step: StepT } | { type: "end"; id: number; run: RunT };

type Listener = (event: RunEvent) => void;

export class RunEvents {
  private readonly listeners = new Map<string, Set<Listener>>();

  listening(runId: string): boolean {
    return this.listeners.has(runId);
  }

  subscribe(runId: string, listener: Listener): () => void {
    let set = this.listeners.get(runId);
    if (!set) {
      set = new Set();
      this.listeners.set(runId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(runId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(runId);
    };
  }

  emit(runId: string, build: () => RunEvent): void {
    const set = this.listeners.get(runId);
    if (!set) return;
    const event = build();
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch {
        // A broken listener (a closed stream) must not stop the run.
      }
    }
  }
}
