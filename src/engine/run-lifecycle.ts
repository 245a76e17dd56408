/**
 * A dispatched run from `running` to its end: the dispatcher hands a PendingRun to `execute`, the executor
 * walks its tree, and the run pauses (its slot freed, its replay log kept) or finishes (completed, failed,
 * cancelled). Only what changed is written, and nothing that an insert still in the batch will carry; once
 * the end is committed, streams, waiters and run-finished listeners hear of it.
 */
import { sha256 } from "../lib/ids";
import type { SaveRuns } from "../schema/workflow";
import type { RunPatch, RunRow, StepRow } from "../store/run-rows";
import type { QueuedOp, WriteOp } from "../store/run-writes";
import { runFromRow } from "../store/run-rows";
import type { Executor, RunOutcome } from "./executor";
import { errorMessage } from "./invoke-action";
import { isoTime } from "./iso-time";
import { RunExecution } from "./run-execution";
import type { StartedRuns } from "./run-start";
import type { PauseState, PendingRun, RunTable } from "./run-table";
import type { Waiters } from "./waiters";

export type EndOutcome = Exclude<RunOutcome, { kind: "paused" }>;

export class RunLifecycle {
  /** Called when a run ends (its end committed): error workflows, run_finished triggers, a cluster's claims and links. */
  private readonly finishedListeners: Array<(run: RunRow) => void> = [];
  private finished = 0;

  constructor(
    private readonly t: RunTable,
    private readonly executor: Executor,
    /** What the starter knows of the runs it started: their inserts on the way, their trace context (run-start.ts). */
    private readonly started: StartedRuns,
    /** Who waits for runs' ends (waiters.ts): told once an end is committed. */
    private readonly waiters: Waiters,
    /** Arms the timer of a run that paused until a time (resumes.ts). */
    private readonly scheduleResume: (runId: string, resumeAt: string) => void,
  ) {}

  /** Runs that ended here (Engine.stats). */
  get finishedCount(): number {
    return this.finished;
  }

  onFinished(listener: (run: RunRow) => void) {
    this.finishedListeners.push(listener);
  }

  async execute(p: PendingRun): Promise<void> {
    const t = this.t;
    const started = this.started;
    t.queue.taken(p);
    const row = p.row;
    if (row.status === "cancelled") {
      t.queue.release(p);
      return;
    }
    const resumed = row.wait_step !== null || row.resume_mode !== null;
    row.status = "running";
    row.event_seq++;
    row.wait_step = null;
    row.resume_mode = null;
    row.resume_at = null;
    // Evaluated at commit time: a run that already ended in the same batch needs no `running` write.
    const runningSeq = row.event_seq;
    if (started.untakenInsert(row.id) === undefined)
      t.writes.fire(() => {
        if (row.status !== "running" || started.carried(row, runningSeq) || started.isLost(row.id)) return null;
        return {
          op: "patchRun",
          id: row.id,
          patch: resumed
            ? { status: "running", event_seq: row.event_seq, wait_step: null, resume_mode: null, resume_at: null }
            : { status: "running", event_seq: row.event_seq },
        };
      });
    t.emitRun(row);
    const exec = new RunExecution(row, p.definition, {
      clock: t.clock,
      timeoutMs: p.definition.settings?.timeoutSeconds ? p.definition.settings.timeoutSeconds * 1000 : t.limits.timeoutMs,
      activeMsBefore: p.activeMsBefore,
      replay: p.replay,
      resume: p.resume,
      secrets: p.secrets,
      triggerOutput: p.triggerOutput,
    });
    exec.context.variables = p.variables;
    exec.pinned = p.pinned;
    t.executing.add(exec);
    let outcome: RunOutcome;
    try {
      outcome = await this.executor.execute(exec);
    } catch (error) {
      outcome = { kind: "failed", message: `internal error: ${errorMessage(error)}` };
    }
    t.executing.delete(row.id);
    if (started.isLost(row.id)) {
      t.queue.release(p);
      return;
    }
    try {
      if (outcome.kind === "paused") await this.pause(exec, outcome);
      else await this.finish(row, outcome, exec.stepsComplete ? exec.steps : undefined, p.definition.settings?.saveRuns);
    } catch (error) {
      t.o.log.error("could not record the end of a run", { runId: row.id, error: errorMessage(error) });
    } finally {
      t.queue.release(p);
    }
  }

  /**
   * Ends a run: writes what changed, then tells streams, waiters and listeners once it is committed. `save`
   * (the workflow's settings.saveRuns) says what is kept of a successful run (docs/engine.md, "Run saving").
   */
  async finish(row: RunRow, outcome: EndOutcome, steps?: StepRow[], save: SaveRuns = "all") {
    const t = this.t;
    const now = new Date(t.clock.now());
    const wasPaused = row.state !== null || row.resume_token_hash !== null || row.wait_step !== null;
    row.status = outcome.kind;
    row.finished_at = isoTime(now.getTime());
    row.duration_ms = Math.max(0, now.getTime() - Date.parse(row.started_at));
    row.error_message = outcome.kind === "failed" ? outcome.message : outcome.kind === "cancelled" ? (row.error_message ?? "cancelled") : null;
    row.event_seq++;
    // Only what changed is written: the common case is five columns.
    const patch: RunPatch = {
      status: row.status,
      finished_at: row.finished_at,
      duration_ms: row.duration_ms,
      step_total: row.step_total,
      event_seq: row.event_seq,
    };
    if (row.error_message !== null) patch.error_message = row.error_message;
    if (row.step_failed > 0) patch.step_failed = row.step_failed;
    if (row.tags !== "[]") patch.tags = row.tags;
    if (row.response !== null) patch.response = row.response;
    if (wasPaused) Object.assign(patch, { state: null, wait_step: null, resume_mode: null, resume_at: null, resume_token_hash: null });
    row.state = null;
    row.wait_step = null;
    row.resume_mode = null;
    row.resume_at = null;
    row.resume_token_hash = null;
    const seq = row.event_seq;
    // Remembered now, read only once the end is committed (until then `settling` answers for the run).
    t.rememberEnded(row, steps);
    // Not inserted yet: the insert carries the ended row, and its commit is the one to wait for (a failed
    // insert is the starter's error; the run was stopped and nothing more of it is written).
    const started = this.started;
    const insert = started.untakenInsert(row.id) !== undefined ? started.unackedInsert(row.id) : undefined;
    const end: QueuedOp = () => (started.carried(row, seq) || started.isLost(row.id) ? null : { op: "patchRun", id: row.id, patch });
    // Whoever waits for the run (`?wait=`, a sub-flow call, a synchronous webhook) gets it as before from memory.
    if (outcome.kind === "completed" && save !== "all") await t.settle(row, insert ? this.unsavedInsert(row, save, insert) : this.unsavedEnd(row, save, end));
    else await t.settle(row, insert ? insert.catch(() => {}) : [end]);
    this.ended(row, steps);
  }

  /**
   * A successful run of a workflow that does not keep it whole, its insert still queued (the usual run of
   * main-thread steps): its steps ("failed") or its row and steps ("none": only its count) are taken out of the
   * queued ops, so they are never written. Answers the commit to wait for.
   */
  private unsavedInsert(row: RunRow, save: Exclude<SaveRuns, "all">, insert: Promise<void>): Promise<void> {
    const started = this.started;
    const ops = started.untakenInsert(row.id)!;
    const kept = ops.filter(
      (op) => typeof op === "function" || (op.op !== "insertStep" && op.op !== "updateStep" && (save === "failed" || op.op !== "putDefinition")),
    );
    ops.length = 0;
    if (save === "failed") ops.push(...kept);
    else
      ops.push(() => {
        started.insertTaken(row);
        return started.isLost(row.id) ? null : { op: "countRun", row };
      });
    // What is left to write is a finished run's summary row or its count, nothing a crash would make redo: its
    // starter answers now, not after that commit.
    started.releaseStarter(row.id);
    return insert.catch(() => {});
  }

  /**
   * As unsavedInsert for a run whose row is written already (a worker step waited for its insert; a run that
   * paused): its step rows are deleted ("failed"), or the run with them, counted all the same ("none").
   */
  private unsavedEnd(row: RunRow, save: Exclude<SaveRuns, "all">, end: QueuedOp): QueuedOp[] {
    const lost = () => this.started.isLost(row.id);
    if (save === "failed") return [() => (lost() ? null : ({ op: "dropSteps", runId: row.id } satisfies WriteOp)), end];
    return [
      () => (lost() ? null : ({ op: "deleteRuns", ids: [row.id] } satisfies WriteOp)),
      () => (lost() ? null : ({ op: "countRun", row } satisfies WriteOp)),
    ];
  }

  /** After the final write committed: streams, waiters and follow-up listeners learn the run ended. */
  private ended(row: RunRow, steps?: StepRow[]) {
    const t = this.t;
    this.finished++;
    t.o.observer?.runFinished(row, this.started.traceparentOf(row.id));
    this.started.forgetTraceparent(row.id);
    t.executing.clearWait(row.id);
    t.emitRun(row);
    t.events.emit(row.id, () => ({ type: "end", id: row.event_seq + 1, run: runFromRow(row) }));
    this.waiters.runEnded(row, steps);
    for (const listener of this.finishedListeners) {
      try {
        listener(row);
      } catch (error) {
        t.o.log.warn("run-finished listener failed", { runId: row.id, error: errorMessage(error) });
      }
    }
  }

  private async pause(exec: RunExecution, outcome: Extract<RunOutcome, { kind: "paused" }>) {
    const row = exec.row;
    row.status = "paused";
    row.wait_step = outcome.stepName;
    row.resume_mode = outcome.mode;
    row.resume_at = outcome.resumeAt;
    row.resume_token_hash = outcome.resumeToken ? sha256(outcome.resumeToken) : null;
    const state: PauseState = { log: exec.log, activeMs: exec.activeMs() };
    row.state = JSON.stringify(state);
    row.event_seq++;
    const patch = {
      status: row.status,
      wait_step: row.wait_step,
      resume_mode: row.resume_mode,
      resume_at: row.resume_at,
      resume_token_hash: row.resume_token_hash,
      state: row.state,
      tags: row.tags,
      response: row.response,
      step_total: row.step_total,
      step_failed: row.step_failed,
      event_seq: row.event_seq,
    };
    await this.t.settle(row, [{ op: "patchRun", id: row.id, patch }]);
    this.t.emitRun(row);
    if (row.resume_at) this.scheduleResume(row.id, row.resume_at);
  }
}
