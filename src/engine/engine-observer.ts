/**
 * What the engine tells an observer as it happens (src/core/metrics.ts counts it for /metrics,
 * src/core/tracing.ts turns it into spans, src/core/log-stream/ sends run events on): a run started, a run
 * finished, a step is starting, a step finished, and — through the run writer it owns — each batch of writes
 * committed. Plain facts, told once each, on the engine's own thread; an observer keeps its own state and
 * must be cheap. The rows are the engine's own (never copied for this), typed by the few columns an observer
 * may read. `traceparent` is the W3C context the run was started with, when it had one (docs/operations.md,
 * "Traces"); the engine keeps it in memory only.
 */
import type { WriteObserver } from "../store/run-writes";

/** The columns of a run an observer reads (a RunRow has them). */
export interface ObservedRun {
  id: string;
  workflow_id: string;
  workflow_name: string;
  workspace_id: string;
  trigger_type: string;
  environment: string;
  status: string;
  version_number: number | null;
  executed_version_number: number | null;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  error_message: string | null;
  parent_run_id: string | null;
}

/** The columns of a step an observer reads (a StepRow has them). */
export interface ObservedStep {
  id: string;
  node_id: string;
  node_type: string;
  piece_id: string | null;
  action_id: string | null;
  status: string;
  started_at: string | null;
  duration_ms: number | null;
  error_message: string | null;
}

/** A step about to be handed to its action (StepHost.invoke): a retry of the same step has the same id. */
export interface StartingStep {
  id: string;
  name: string;
  pieceId: string;
  actionId: string;
}

export interface EngineObserver extends WriteObserver {
  /** A new run's row is committed (a start, a schedule's or a poll's run, a retry). It may come after its first steps. */
  runStarted(run: ObservedRun, traceparent?: string): void;
  /** A run ended and its end is committed; `status` is completed, failed or cancelled. */
  runFinished(run: ObservedRun, traceparent?: string): void;
  /** A step ended (completed or failed) after `duration_ms`; skipped, paused and running rows are not told. */
  stepFinished(step: ObservedStep, run: ObservedRun, traceparent?: string): void;
  /**
   * A step's action is about to run. A tracing observer answers the `traceparent` the step's outgoing calls
   * carry (its span for the step); undefined leaves them the run's own context.
   */
  stepStarting?(step: StartingStep, run: ObservedRun, traceparent?: string): string | undefined;
}

/** One observer that tells each of `observers` in turn; a step's traceparent is the last one answered. */
export function observeAll(...observers: (EngineObserver | undefined)[]): EngineObserver | undefined {
  const list = observers.filter((o): o is EngineObserver => o !== undefined);
  if (list.length <= 1) return list[0];
  const starting = list.filter((o) => o.stepStarting);
  return {
    runStarted: (run, traceparent) => {
      for (const o of list) o.runStarted(run, traceparent);
    },
    runFinished: (run, traceparent) => {
      for (const o of list) o.runFinished(run, traceparent);
    },
    stepFinished: (step, run, traceparent) => {
      for (const o of list) o.stepFinished(step, run, traceparent);
    },
    stepStarting:
      starting.length === 0
        ? undefined
        : (step, run, traceparent) => {
            let answer: string | undefined;
            for (const o of starting) answer = o.stepStarting!(step, run, traceparent) ?? answer;
            return answer;
          },
    batchCommitted: (writes, seconds) => {
      for (const o of list) o.batchCommitted(writes, seconds);
    },
  };
}
