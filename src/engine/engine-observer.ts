/**
 * What the engine tells an observer as it happens (src/core/metrics.ts counts it for /metrics): a run started,
 * a run finished, a step finished, and — through the run writer it owns — each batch of writes committed.
 * Plain facts, told once each, on the engine's own thread; an observer keeps its own state and must be cheap.
 * The rows are the engine's own (never copied for this), typed by the few columns an observer may read.
 */
import type { WriteObserver } from "../store/run-writes";

/** The columns of a run an observer reads (a RunRow has them). */
export interface ObservedRun {
  workflow_id: string;
  trigger_type: string;
}

/** The columns of a step an observer reads (a StepRow has them). */
export interface ObservedStep {
  node_type: string;
  piece_id: string | null;
  action_id: string | null;
  status: string;
  duration_ms: number | null;
}

export interface EngineObserver extends WriteObserver {
  /** A new run's row is committed (a start, a schedule's or a poll's run, a retry). */
  runStarted(run: ObservedRun): void;
  /** A run ended and its end is committed; `status` is completed, failed or cancelled. */
  runFinished(run: ObservedRun & { status: string }): void;
  /** A step ended (completed or failed) after `duration_ms`; skipped, paused and running rows are not told. */
  stepFinished(step: ObservedStep): void;
}
