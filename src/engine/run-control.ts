/**
 * What a user does to a run: cancel it (pending, running or paused) or retry a finished one as a new run —
 * from the failed step (the outputs before it are copied into the new run and replayed) or from the start,
 * with the original definition or the latest.
 */
import { AppError, notFound } from "../http/errors";
import { newId, stepIdOf } from "../lib/ids";
import type { RunT, RunTriggerType } from "../schema/run";
import { type RunRow, runFromRow, type StepRow } from "../store/run-rows";
import type { ReplayEntry } from "./run-execution";
import type { RunLifecycle } from "./run-lifecycle";
import type { RunStarter, StartRunInput } from "./run-start";
import { FINISHED, FRESH_RUN, type PendingRun, type RunTable } from "./run-table";
import type { WriteOp } from "../store/run-writes";
import type { Resumes } from "./resumes";
import type { Waiters } from "./waiters";
import type { ClusterLinks } from "./cluster-links";

export interface RetryOptions {
  from?: "failed_step" | "start";
  version?: "original" | "latest";
}

export class RunControl {
  constructor(
    private readonly t: RunTable,
    private readonly parts: { lifecycle: RunLifecycle; waiters: Waiters; resumes: Resumes; starter: RunStarter; links: ClusterLinks | null },
  ) {}

  /** Cancels a pending, running or paused run; a finished run is refused (409) unless already cancelled. */
  async cancel(workspaceId: string, runId: string): Promise<RunT> {
    const t = this.t;
    const row = await t.rowNow(runId);
    if (!row || row.workspace_id !== workspaceId) throw notFound(`run ${runId}`);
    if (row.status === "cancelled") return runFromRow(row);
    if (FINISHED.has(row.status)) {
      throw new AppError(
        "CONFLICT",
        `run ${runId} already ${row.status}; only pending, running or paused runs can be cancelled (retry it with POST /api/runs/${runId}/retry)`,
      );
    }
    const exec = t.executing.get(runId);
    if (exec) {
      exec.stop("cancelled");
      const finished = await this.parts.waiters.waitForRow(runId, 10_000);
      return runFromRow(finished ?? row);
    }
    const pending = t.queue.get(runId);
    const links = this.parts.links;
    const me = t.instanceId;
    if (!pending && links && me !== null && row.owner !== me && row.status !== "paused") {
      // A cluster: the instance executing or queueing the run cancels it; one that died (or nobody, for a run
      // waiting for a worker) has it taken first, so that no instance starts it meanwhile.
      if (links.heldElsewhere(row)) {
        links.forwardCancel(row);
        return runFromRow(await this.storedEnd(runId, 10_000));
      }
      if (!(await t.claims.takeRun(runId, me, row.owner))) return runFromRow(await this.storedEnd(runId, 10_000));
      row.owner = me;
    }
    if (pending) {
      t.queue.withdraw(runId);
      pending.row.status = "cancelled";
    }
    this.parts.resumes.clear(runId);
    const target = pending?.row ?? row;
    target.error_message = "cancelled";
    await this.parts.lifecycle.finish(target, { kind: "cancelled" });
    return runFromRow(target);
  }

  /** The stored row once it is finished, or as it stands after `ms` (a run another instance holds). */
  private async storedEnd(runId: string, ms: number): Promise<RunRow> {
    const clock = this.t.clock;
    const deadline = clock.now() + ms;
    for (;;) {
      const row = (await this.t.reads.getRow(runId)) as RunRow;
      if (FINISHED.has(row.status) || clock.now() > deadline) return row;
      await clock.sleep(50);
    }
  }

  /**
   * Retries a finished run as a new run. `from: failed_step` reuses the recorded outputs of the steps
   * before the failure (copied into the new run) and executes from the failed step on; `start` runs all.
   * `version: original` executes the same definition; `latest` the live version (production) or the draft (test).
   */
  async retry(workspaceId: string, runId: string, options: RetryOptions): Promise<RunT> {
    const t = this.t;
    const from = options.from ?? "failed_step";
    const version = options.version ?? "original";
    const original = await t.rowNow(runId);
    if (!original || original.workspace_id !== workspaceId) throw notFound(`run ${runId}`);
    if (!FINISHED.has(original.status)) {
      throw new AppError(
        "CONFLICT",
        `run ${runId} is ${original.status}; only a finished run (completed, failed or cancelled) can be retried — cancel it first (POST /api/runs/${runId}/cancel)`,
      );
    }
    if (from === "failed_step" && original.status !== "failed") {
      throw new AppError(
        "VALIDATION_FAILED",
        `run ${runId} ${original.status === "completed" ? "completed" : "was cancelled"}, so it has no failed step to retry from; use "from": "start" (allowed: failed_step, start)`,
      );
    }
    const reuse = from === "failed_step" ? await this.stepsBeforeFailure(runId) : { copied: [], replay: [], startedFromStep: null };
    const { pending, definitionText } =
      version === "latest" ? await this.latest(original, reuse.startedFromStep) : await this.sameDefinition(original, reuse.startedFromStep);
    const newRow = pending.row;
    const copies = reuse.copied.map((r, i) => ({ ...r, id: stepIdOf(newRow.id, i + 1), run_id: newRow.id, seq: i + 1 }));
    pending.replay = reuse.replay.map((entry, i) => ({ ...entry, stepId: copies[i]?.id ?? entry.stepId }));
    newRow.step_total = copies.length;
    newRow.step_failed = copies.filter((r) => r.status === "failed").length;
    newRow.event_seq = copies.length;
    await t.writes.write([
      ...this.parts.starter.insertOps(pending, definitionText),
      ...copies.map((copy): WriteOp => ({ op: "insertStep", row: copy })),
      { op: "patchRun", id: runId, patch: { retried_by_run_id: newRow.id } },
    ]);
    original.retried_by_run_id = newRow.id;
    t.o.observer?.runStarted(newRow);
    t.queue.add(pending);
    return runFromRow(newRow);
  }

  /** The recorded steps before the last failed one, to copy into the retry and replay there. */
  private async stepsBeforeFailure(runId: string): Promise<{ copied: StepRow[]; replay: ReplayEntry[]; startedFromStep: string | null }> {
    const rows = await this.t.reads.steps(runId);
    let failAt = rows.findLastIndex((r) => r.status === "failed");
    if (failAt < 0) failAt = rows.length - 1;
    const startedFromStep = rows[failAt]?.node_id ?? null;
    const before = rows.slice(0, Math.max(0, failAt)).filter((r) => r.status === "completed" || r.status === "skipped" || r.status === "failed");
    const truncated = before.find((r) => r.output_truncated);
    if (truncated) {
      throw new AppError(
        "VALIDATION_FAILED",
        `step "${truncated.node_id}" of run ${runId} stored only a truncated output (over WEFT_STEP_OUTPUT_LIMIT), so its result cannot be reused; retry with "from": "start"`,
      );
    }
    const replay = before.map((r) => ({
      nodeId: r.node_id,
      stepId: r.id,
      status: r.status,
      output: r.output_data === null ? null : JSON.parse(r.output_data),
      error: r.error_message,
    }));
    return { copied: before, replay, startedFromStep };
  }

  /** A retry of the live version (production) or the draft (test), as a new start of the workflow. */
  private latest(original: RunRow, startedFromStep: string | null): Promise<{ pending: PendingRun; definitionText: string | null }> {
    const input: StartRunInput = {
      workspaceId: original.workspace_id,
      workflowId: original.workflow_id,
      environment: original.environment,
      triggerType: original.trigger_type as RunTriggerType,
      triggerData: JSON.parse(original.trigger_data),
      parent: original.parent_run_id ? { runId: original.parent_run_id, depth: original.depth - 1 } : undefined,
    };
    return this.parts.starter.prepare(input, { retry_of_run_id: original.id, started_from_step: startedFromStep });
  }

  /** A retry of the very definition the original run executed. */
  private async sameDefinition(original: RunRow, startedFromStep: string | null): Promise<{ pending: PendingRun; definitionText: string | null }> {
    const t = this.t;
    const definition = await t.definitionOf(original);
    const row: RunRow = {
      ...original,
      ...FRESH_RUN,
      id: newId(),
      owner: t.owner,
      started_at: new Date(t.clock.now()).toISOString(),
      started_from_step: startedFromStep,
      retry_of_run_id: original.id,
    };
    return { pending: await t.pendingOf(row, definition), definitionText: await t.reads.definition(original.definition_hash) };
  }
}
