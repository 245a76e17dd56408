/**
 * The in-memory state of one run while it executes: its row (mirrored, written back by the engine),
 * the expression context, the replay log that resumes it, and the budgets it runs under.
 */
import type { Clock } from "../lib/clock";
import type { FlowVersionT } from "../schema/workflow";
import type { ActionOutcome } from "./invoke-action";
import type { RunRow } from "../store/run-rows";

/** One finished step as the replay log keeps it: enough to rebuild the context without running it again. */
export interface ReplayEntry {
  nodeId: string;
  stepId: string;
  status: string;
  output: unknown;
  error: string | null;
}

export interface ResumeRequest {
  /** The payload the paused step is resumed with (approval decision, timer). */
  payload: Record<string, unknown>;
}

export type StopReason = "cancelled" | "timeout";

export class RunExecution {
  readonly context: Record<string, unknown>;
  private controller: AbortController | undefined;
  private stoppedPromise: Promise<ActionOutcome> | undefined;
  stopReason: StopReason | undefined;
  /** Wall-clock deadline (ms since epoch) from settings.timeoutSeconds minus time already spent. */
  deadline: number;
  memoryUsed = 0;
  /** Steps recorded in this execution and replayed ones, in order: persisted as `state` when the run pauses. */
  readonly log: ReplayEntry[] = [];
  /** Loop bodies being executed, innermost last: each collects the step outputs of its current iteration. */
  readonly loops: Array<{ current: Record<string, unknown> }> = [];
  /** Secret values to mask in step input and output (decrypted variables, credentials). */
  readonly secrets: string[];
  /** Step rows written by this execution, latest version of each (the finished run's reply needs no read). */
  readonly steps: import("../store/run-rows").StepRow[] = [];
  /** False when earlier steps were replayed, or a long run outgrew MAX_KEPT_STEPS: the rows are only in the database. */
  stepsComplete: boolean;
  /** Name of the step now running (for timeout messages). */
  currentStep: string | undefined;
  /** Step name → pinned output a test run uses instead of running the step. */
  pinned: Record<string, unknown> = {};
  private readonly replay = new Map<string, ReplayEntry[]>();
  /** Time spent executing before this segment (runs that paused), for the timeout. */
  readonly activeMsBefore: number;
  readonly segmentStartedAt: number;
  /** The engine's clock: the deadline, the active time and the steps' times are read from it. */
  readonly clock: Clock;

  constructor(
    readonly row: RunRow,
    readonly definition: FlowVersionT,
    options: {
      clock: Clock;
      timeoutMs: number;
      activeMsBefore?: number;
      replay?: ReplayEntry[];
      resume?: ResumeRequest;
      secrets?: string[];
      triggerOutput: unknown;
    },
  ) {
    this.clock = options.clock;
    this.segmentStartedAt = options.clock.now();
    this.activeMsBefore = options.activeMsBefore ?? 0;
    this.stepsComplete = !options.replay || options.replay.length === 0;
    this.deadline = this.segmentStartedAt + Math.max(0, options.timeoutMs - this.activeMsBefore);
    this.secrets = options.secrets ?? [];
    this.resume = options.resume;
    for (const entry of options.replay ?? []) {
      const queue = this.replay.get(entry.nodeId);
      if (queue) queue.push(entry);
      else this.replay.set(entry.nodeId, [entry]);
    }
    this.context = {
      trigger: options.triggerOutput,
      variables: definition.variables ?? {},
      run: {
        id: row.id,
        environment: row.environment,
        workflowId: row.workflow_id,
        workflowName: row.workflow_name,
        triggerType: row.trigger_type,
        startedAt: row.started_at,
      },
    };
  }

  readonly resume: ResumeRequest | undefined;

  /** The next recorded result of `nodeId`, consumed; undefined when the step must really run. */
  takeReplay(nodeId: string): ReplayEntry | undefined {
    const queue = this.replay.get(nodeId);
    if (!queue || queue.length === 0) return undefined;
    return queue.shift();
  }

  peekReplay(nodeId: string): ReplayEntry | undefined {
    return this.replay.get(nodeId)?.[0];
  }

  get replaying(): boolean {
    for (const queue of this.replay.values()) if (queue.length > 0) return true;
    return false;
  }

  /** Total time spent executing, including earlier segments. */
  activeMs(): number {
    return this.activeMsBefore + (this.clock.now() - this.segmentStartedAt);
  }

  /**
   * Aborted when the run stops. Created on first use: most runs never stop and many never hand a signal
   * to anything that waits, so the controller and its listener are not paid for on every run.
   */
  get abort(): AbortController {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopReason) this.controller.abort(this.stopReason);
    }
    return this.controller;
  }

  /** Resolves when the run is stopped (cancel, timeout): a step still running on this thread is raced against it. */
  get stopped(): Promise<ActionOutcome> {
    if (!this.stoppedPromise) {
      const signal = this.abort.signal;
      this.stoppedPromise = new Promise((resolve) => {
        const done = () => resolve({ kind: "error", message: String(this.stopReason ?? "stopped"), effects: { tags: [] } });
        if (signal.aborted) done();
        else signal.addEventListener("abort", done, { once: true });
      });
    }
    return this.stoppedPromise;
  }

  stop(reason: StopReason) {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * The runs executing in this process, and what their running steps say they wait for (ctx.waiting): shown live,
 * never stored. The lifecycle (run-lifecycle.ts) adds and removes runs, the step host (step-host.ts) the waits;
 * the rest of the engine only looks.
 */
export class ExecutingRuns {
  private readonly byId = new Map<string, RunExecution>();
  private readonly waits = new Map<string, { step: string; reason: string; since: string }>();

  get(runId: string): RunExecution | undefined {
    return this.byId.get(runId);
  }

  has(runId: string): boolean {
    return this.byId.has(runId);
  }

  get size(): number {
    return this.byId.size;
  }

  values(): IterableIterator<RunExecution> {
    return this.byId.values();
  }

  add(exec: RunExecution) {
    this.byId.set(exec.row.id, exec);
  }

  delete(runId: string) {
    this.byId.delete(runId);
  }

  /** What the run's running step waits for, if it said so. */
  waitOf(runId: string): { step: string; reason: string; since: string } | undefined {
    return this.waits.get(runId);
  }

  /** A step says it waits (reason) or goes on (null); false when nothing changed. */
  setWait(runId: string, step: string, reason: string | null, now: number): boolean {
    if (reason === null) return this.waits.delete(runId);
    this.waits.set(runId, { step, reason, since: new Date(now).toISOString() });
    return true;
  }

  /** The run ended: what its step waited for is gone. */
  clearWait(runId: string) {
    if (this.waits.size) this.waits.delete(runId);
  }
}
