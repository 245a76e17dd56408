/**
 * Walks a definition tree for one run (docs/engine.md "From start to finish", "Errors, retries, sub-flows"):
 * PIECE steps (with the piece's retry policy), ROUTER (first branch whose conditions hold, else the
 * fallback branch, then nextAction), LOOP_ON_ITEMS (body once per item, iteration outputs collected),
 * `skip`, `onErrorAction`, the run's time limit, cancellation, the per-run memory budget and pauses.
 *
 * Resuming (after a pause, a restart, or a retry from the failed step) walks the same tree again and
 * takes each already-finished step's result from the replay log instead of running it.
 *
 * One file on purpose: the walk is one recursive algorithm (chains, branches, loops and error branches
 * call each other and share the run's stop, budget and replay state); where each step runs is step-host.ts.
 */
import { stepIdOf } from "../lib/ids";
import { isoTime } from "./iso-time";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { ActionDef, PauseRequest } from "../pieces-sdk/types";
import type { ActionNodeT, BranchT } from "../schema/workflow";
import type { StepRow } from "../store/run-rows";
import { ConditionError, conditionHolds, type ResolvedCondition } from "./conditions";
import { ExpressionError, resolveValueFast as resolveValue } from "./expressions";
import type { ActionOutcome } from "./invoke-action";
import type { ReplayEntry, RunExecution } from "./run-execution";
import type { EngineLimits } from "./run-table";
import { maskSecrets, serializeCapped, serializeMasked } from "./step-data";
import type { StepEffects } from "./step-context";

export interface StepCall {
  node: ActionNodeT;
  action: ActionDef;
  config: Record<string, unknown>;
  stepId: string;
  resumePayload?: Record<string, unknown>;
}

export type RunOutcome =
  | { kind: "completed" }
  | { kind: "failed"; message: string }
  | { kind: "cancelled" }
  | { kind: "paused"; stepName: string; stepId: string; mode: "time" | "webhook"; resumeAt: string | null; resumeToken: string | null };

/** Longest a loop iterates without yielding the thread, ms. */
const LOOP_SLICE_MS = 10;

export interface ExecutorHost {
  readonly pieces: PieceRegistry;
  /** What a step and a run may hold and do (run-table.ts). */
  readonly limits: EngineLimits;
  /**
   * Does this step have side effects (not `pure`)? Such steps get a committed `running` row before they
   * start, so a restart knows they may have acted and never repeats them (wherever they run).
   */
  recordsStart(call: StepCall): boolean;
  /** Pinned output of a step (test runs): the step is not executed. */
  pinned(run: RunExecution, stepName: string): { found: boolean; output?: unknown };
  /** Runs one action: inline for pure steps, else in a worker. Resolves (never rejects) once it ends or the run stops. */
  invoke(run: RunExecution, call: StepCall): ActionOutcome | Promise<ActionOutcome>;
  /**
   * Persists a step row (batched) and announces it; `update` completes a row written when the step paused.
   * `durable`: the returned promise settles once the row is committed (or its commit failed).
   */
  writeStep(run: RunExecution, row: StepRow, update: boolean, durable?: boolean): void | Promise<void>;
  /** Tags, the sub-flow response: applied to the run as soon as a step produced them. */
  applyEffects(run: RunExecution, effects: StepEffects): void;
}

/** Ends the walk: the run failed, paused or was cancelled. */
class RunStop extends Error {
  constructor(readonly outcome: RunOutcome) {
    super(outcome.kind);
  }
}

/** A step failed (its row is written); the node's onErrorAction may handle it. */
class StepFailed extends Error {}

const MB = 1024 * 1024;

/** The columns of a step row that say whose step it is: its run, its place among the run's events, its node. */
function stepHead(run: RunExecution, node: ActionNodeT, id: string) {
  return {
    id,
    run_id: run.row.id,
    seq: ++run.row.event_seq,
    node_id: node.name,
    node_type: node.type,
    piece_id: node.pieceId ?? null,
    action_id: node.actionId ?? null,
    display_name: node.displayName ?? null,
  };
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing (undefined)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `a string (${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)})`;
  return `a ${typeof value}`;
}

export class Executor {
  constructor(private readonly host: ExecutorHost) {}

  async execute(run: RunExecution): Promise<RunOutcome> {
    try {
      await this.chain(run, run.definition.trigger.nextAction);
      this.checkAlive(run);
      return { kind: "completed" };
    } catch (error) {
      if (error instanceof RunStop) return error.outcome;
      if (error instanceof StepFailed) return { kind: "failed", message: error.message };
      return { kind: "failed", message: `internal error while executing the run: ${(error as Error)?.message ?? error}` };
    }
  }

  private checkAlive(run: RunExecution) {
    if (!run.stopReason && run.clock.now() > run.deadline) run.stop("timeout");
    if (run.stopReason) throw new RunStop(this.stopOutcome(run));
  }

  private stopOutcome(run: RunExecution): RunOutcome {
    if (run.stopReason === "cancelled") return { kind: "cancelled" };
    const limit = Math.round(
      (run.definition.settings?.timeoutSeconds ? run.definition.settings.timeoutSeconds * 1000 : run.deadline - run.segmentStartedAt + run.activeMsBefore) /
        1000,
    );
    const where = run.currentStep ? ` while step "${run.currentStep}" was running` : "";
    return {
      kind: "failed",
      message: `run exceeded its time limit of ${limit} s${where}; raise settings.timeoutSeconds (1–86400) or make the steps faster`,
    };
  }

  private async chain(run: RunExecution, first: ActionNodeT | undefined): Promise<void> {
    for (let node = first; node; node = node.nextAction) {
      this.checkAlive(run);
      await this.node(run, node);
    }
  }

  private async node(run: RunExecution, node: ActionNodeT): Promise<void> {
    if (node.skip) return this.skipped(run, node);
    try {
      if (node.type === "PIECE") await this.piece(run, node);
      else if (node.type === "ROUTER") await this.router(run, node);
      else if (node.type === "LOOP_ON_ITEMS") await this.loop(run, node);
      else this.fail(run, node, run.clock.now(), `step type "${node.type}" is unknown; use PIECE, ROUTER or LOOP_ON_ITEMS`, null);
    } catch (error) {
      if (!(error instanceof StepFailed)) throw error;
      if (!node.onErrorAction) throw new RunStop({ kind: "failed", message: error.message });
      // Handled: the error chain runs, then the run continues with the failed step's nextAction.
      await this.chain(run, node.onErrorAction);
    }
  }

  // ------------------------------------------------------------ recording

  /** Writes the step row and updates the context, the loop collector and the replay log. */
  private record(
    run: RunExecution,
    node: ActionNodeT,
    fields: { id?: string; status: string; input: unknown; output: unknown; error: string | null; retryCount?: number; startedAt: number; update?: boolean },
  ): void {
    const finishedAt = run.clock.now();
    if (!fields.update && run.row.step_total >= this.host.limits.runMaxSteps) {
      throw new RunStop({
        kind: "failed",
        message: `run reached its limit of ${this.host.limits.runMaxSteps} executed steps at step "${node.name}" (loop iterations count each step); process fewer items per run or raise WEFT_RUN_MAX_STEPS`,
      });
    }
    let output = fields.output === undefined ? null : fields.output;
    const input = serializeMasked(fields.input ?? {}, run.secrets, this.host.limits.outputLimit);
    let stored = serializeCapped(run.secrets.length ? maskSecrets(output, run.secrets, false) : output, this.host.limits.outputLimit);
    const tooLarge = stored.size > this.host.limits.stepMaxOutput && fields.status !== "failed";
    if (tooLarge) {
      // The step's output is not kept: the step fails, naming the limit (its onErrorAction may still handle it).
      fields = {
        ...fields,
        status: "failed",
        error: `output of step "${node.name}" is ${(stored.size / MB).toFixed(1)} MB of JSON; the limit is ${Math.round(this.host.limits.stepMaxOutput / MB)} MB per step — return less data, or raise WEFT_STEP_MAX_OUTPUT_MB`,
      };
      output = null;
      stored = serializeCapped(null, this.host.limits.outputLimit);
    }
    const id = fields.id ?? stepIdOf(run.row.id, run.row.step_total + 1);
    const row: StepRow = {
      ...stepHead(run, node, id),
      status: fields.status,
      input_data: input.text,
      output_data: stored.text,
      output_truncated: stored.truncated ? 1 : 0,
      error_message: fields.error,
      retry_count: fields.retryCount ?? 0,
      started_at: isoTime(fields.startedAt),
      finished_at: fields.status === "paused" ? null : isoTime(finishedAt),
      duration_ms: fields.status === "paused" ? null : finishedAt - fields.startedAt,
    };
    if (!fields.update) run.row.step_total++;
    if (fields.status === "failed") run.row.step_failed++;
    this.host.writeStep(run, row, fields.update === true);
    this.remember(run, { nodeId: node.name, stepId: id, status: fields.status, output, error: fields.error });
    if (tooLarge) throw new StepFailed(`step "${node.name}" failed: ${fields.error}`);
    if (fields.status === "paused") return;
    run.memoryUsed += stored.size;
    if (run.memoryUsed > this.host.limits.memoryBudget) {
      throw new RunStop({
        kind: "failed",
        message: `run exceeded its memory budget of ${Math.round(this.host.limits.memoryBudget / MB)} MB (step outputs and loop results held ${(run.memoryUsed / MB).toFixed(1)} MB after step "${node.name}"); process fewer items per run or raise WEFT_RUN_MEMORY_MB`,
      });
    }
  }

  /** Context entry, loop iteration and replay log for a finished (or replayed) step. */
  private remember(run: RunExecution, entry: ReplayEntry): void {
    const value = { output: entry.output, status: entry.status, error: entry.error === null ? null : { message: entry.error } };
    run.context[entry.nodeId] = value;
    const loop = run.loops[run.loops.length - 1];
    if (loop && entry.status !== "paused") loop.current[entry.nodeId] = entry.output;
    run.log.push(entry);
  }

  private replayed(run: RunExecution, node: ActionNodeT): ReplayEntry | "resume" | undefined {
    const entry = run.takeReplay(node.name);
    if (!entry) return undefined;
    if (entry.status === "paused") {
      run.log.push(entry);
      return "resume";
    }
    this.remember(run, entry);
    if (entry.status === "failed") throw new StepFailed(`step "${node.name}" failed: ${entry.error ?? "error"}`);
    return entry;
  }

  private fail(
    run: RunExecution,
    node: ActionNodeT,
    startedAt: number,
    message: string,
    input: unknown,
    extra: { id?: string; retryCount?: number; update?: boolean } = {},
  ): never {
    this.record(run, node, { ...extra, status: "failed", input, output: null, error: message, startedAt });
    throw new StepFailed(`step "${node.name}" failed: ${message}`);
  }

  /**
   * A `running` row for a step with side effects; completed later by an update of the same row.
   * Committed BEFORE the step is handed over (crash safety, docs/security.md): a restart that finds the row
   * knows the step may have acted and fails the run instead of repeating it; a restart that does not find
   * it knows the step never started. Resolves with the commit's error, if any.
   */
  private async writeRunning(run: RunExecution, node: ActionNodeT, id: string, startedAt: number, config: unknown): Promise<Error | undefined> {
    const input = serializeMasked(config ?? {}, run.secrets, this.host.limits.outputLimit);
    run.row.step_total++;
    const committed = this.host.writeStep(
      run,
      {
        ...stepHead(run, node, id),
        status: "running",
        input_data: input.text,
        output_data: null,
        output_truncated: 0,
        error_message: null,
        retry_count: 0,
        started_at: isoTime(startedAt),
        finished_at: null,
        duration_ms: null,
      },
      false,
      true,
    );
    try {
      await committed;
      return undefined;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private skipped(run: RunExecution, node: ActionNodeT): void {
    if (this.replayed(run, node)) return;
    this.record(run, node, { status: "skipped", input: {}, output: null, error: null, startedAt: run.clock.now() });
  }

  // ------------------------------------------------------------ PIECE

  private async piece(run: RunExecution, node: ActionNodeT): Promise<void> {
    // A step safe to repeat that a restart interrupted runs again, once, on its own row (recovery rules, docs/engine.md).
    const retrying = run.peekReplay(node.name)?.status === "retry" ? run.takeReplay(node.name) : undefined;
    const replay = retrying ? undefined : this.replayed(run, node);
    if (replay && replay !== "resume") return;
    const resuming = replay === "resume" ? run.log[run.log.length - 1] : undefined;
    if (resuming) run.log.pop(); // the paused entry is replaced by the step's real result below
    const startedAt = run.clock.now();
    const reused = resuming ?? retrying;
    const ids = reused ? { id: reused.stepId, update: true } : {};
    run.currentStep = node.name;
    const pieceId = node.pieceId ?? "";
    const actionId = node.actionId ?? "";
    // The version the step pins (installed packages can hold several side by side).
    const piece = this.host.pieces.get(pieceId, node.pieceVersion);
    if (!piece) this.fail(run, node, startedAt, `piece "${pieceId}" is not served here; available pieces: ${this.pieceIds()}`, node.config ?? {}, ids);
    const action = piece && Object.hasOwn(piece.actions, actionId) ? piece.actions[actionId] : undefined;
    if (!action)
      this.fail(
        run,
        node,
        startedAt,
        `piece "${pieceId}" has no action "${actionId}"; its actions: ${Object.keys(piece!.actions).join(", ") || "none"}`,
        node.config ?? {},
        ids,
      );

    let config: Record<string, unknown>;
    try {
      config = (await resolveValue(node.config ?? {}, run.context)) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof ExpressionError) this.fail(run, node, startedAt, error.message, node.config ?? {}, ids);
      throw error;
    }

    const pinned = this.host.pinned(run, node.name);
    if (pinned.found) {
      this.record(run, node, { ...ids, status: "completed", input: { pinned: true }, output: pinned.output, error: null, startedAt });
      run.currentStep = undefined;
      return;
    }

    const maxAttempts = Math.max(1, Math.min(10, action!.retry?.maxAttempts ?? 1));
    const backoffMs = Math.max(0, action!.retry?.backoffMs ?? 0);
    // The id of the step this one becomes (step_total counts it once its row is written, below or in record()).
    const stepId = reused?.stepId ?? stepIdOf(run.row.id, run.row.step_total + 1);
    let rowWritten = reused !== undefined;
    if (!rowWritten && this.host.recordsStart({ node, action: action!, config, stepId })) {
      const notRecorded = await this.writeRunning(run, node, stepId, startedAt, config);
      rowWritten = true;
      if (notRecorded) {
        this.fail(
          run,
          node,
          startedAt,
          `could not record that the step started (${notRecorded.message}), so it was not run; retry the run once the database accepts writes again`,
          config,
          { id: stepId, update: true },
        );
      }
    }
    let attempt = 0;
    let outcome: ActionOutcome = { kind: "error", message: "stopped", effects: { tags: [] } };
    // A run stopped while its running row was being committed does not start the step.
    while (!run.stopReason) {
      attempt++;
      outcome = await this.host.invoke(run, { node, action: action!, config, stepId, resumePayload: resuming ? (run.resume?.payload ?? {}) : undefined });
      this.host.applyEffects(run, outcome.effects);
      if (outcome.kind !== "error" || attempt >= maxAttempts || run.stopReason) break;
      const wait = backoffMs * 2 ** (attempt - 1);
      if (run.clock.now() + wait > run.deadline) break;
      await this.sleep(run, wait);
      if (run.stopReason) break;
    }
    const retryCount = Math.max(0, attempt - 1) + (retrying ? 1 : 0);
    const record = { id: stepId, update: rowWritten, retryCount, startedAt, input: config };

    if (run.stopReason) {
      const stop = this.stopOutcome(run);
      this.record(run, node, {
        ...record,
        status: run.stopReason === "cancelled" ? "cancelled" : "failed",
        output: null,
        error: stop.kind === "failed" ? stop.message : "run cancelled",
      });
      throw new RunStop(stop);
    }
    if (outcome.kind === "error") this.fail(run, node, startedAt, outcome.message, config, record);
    if (outcome.kind === "pause") return this.pause(run, node, outcome.pause, outcome.effects.resumeToken ?? null, record);
    this.record(run, node, { ...record, status: "completed", output: outcome.output, error: null });
    run.currentStep = undefined;
  }

  private pause(
    run: RunExecution,
    node: ActionNodeT,
    pause: PauseRequest,
    resumeToken: string | null,
    record: { id: string; update: boolean; retryCount: number; startedAt: number; input: unknown },
  ): never {
    if (pause.mode === "webhook" && !resumeToken) {
      this.fail(
        run,
        node,
        record.startedAt,
        'the step paused for a webhook but created no resume links; call ctx.resumeUrls() before ctx.pause({ mode: "webhook" })',
        record.input,
        record,
      );
    }
    this.record(run, node, { ...record, status: "paused", output: pause.data ?? {}, error: null });
    throw new RunStop({ kind: "paused", stepName: node.name, stepId: record.id, mode: pause.mode, resumeAt: pause.resumeAt ?? null, resumeToken });
  }

  private sleep(run: RunExecution, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = run.clock.setTimeout(done, ms);
      function done() {
        run.clock.clearTimeout(timer);
        run.abort.signal.removeEventListener("abort", done);
        resolve();
      }
      run.abort.signal.addEventListener("abort", done, { once: true });
    });
  }

  private pieceIds(): string {
    const ids = (this.host.pieces as { ids?: () => string[] }).ids?.() ?? [];
    return ids.join(", ") || "none";
  }

  // ------------------------------------------------------------ ROUTER

  private async router(run: RunExecution, node: ActionNodeT): Promise<void> {
    const branches = node.branches ?? [];
    const replay = this.replayed(run, node);
    let chosen: BranchT | undefined;
    if (replay && replay !== "resume") {
      const name = (replay.output as { branch?: string } | null)?.branch;
      chosen = branches.find((b) => b.name === name);
    } else {
      const startedAt = run.clock.now();
      const evaluated: Array<{ branch: string; conditions: Array<Array<ResolvedCondition & { holds: boolean }>> }> = [];
      try {
        for (const branch of branches) {
          if (branch.conditions.length === 0) continue;
          const groups: Array<Array<ResolvedCondition & { holds: boolean }>> = [];
          for (const group of branch.conditions) {
            const resolved: Array<ResolvedCondition & { holds: boolean }> = [];
            for (const condition of group) {
              const c: ResolvedCondition = {
                field: await resolveValue(condition.field, run.context),
                operator: condition.operator,
                value: await resolveValue(condition.value, run.context),
              };
              resolved.push({ ...c, holds: conditionHolds(c) });
            }
            groups.push(resolved);
          }
          // OR over groups, AND inside a group.
          const holds = groups.some((group) => group.every((c) => c.holds));
          evaluated.push({ branch: branch.name, conditions: groups });
          if (holds) {
            chosen = branch;
            break;
          }
        }
      } catch (error) {
        if (error instanceof ExpressionError || error instanceof ConditionError) this.fail(run, node, startedAt, error.message, { evaluated });
        throw error;
      }
      chosen ??= branches.find((b) => b.conditions.length === 0);
      this.record(run, node, { status: "completed", input: { evaluated }, output: { branch: chosen?.name ?? null }, error: null, startedAt });
    }
    if (chosen?.firstAction) await this.chain(run, chosen.firstAction);
  }

  // ------------------------------------------------------------ LOOP_ON_ITEMS

  private async loop(run: RunExecution, node: ActionNodeT): Promise<void> {
    // A loop that failed before iterating (handled by its onErrorAction) replays as that failure.
    if (run.peekReplay(node.name)?.status === "failed") this.replayed(run, node);
    const startedAt = run.clock.now();
    const source = node.config?.items;
    let items: unknown;
    try {
      items = await resolveValue(source, run.context);
    } catch (error) {
      if (error instanceof ExpressionError) this.fail(run, node, startedAt, error.message, { items: source });
      throw error;
    }
    if (!Array.isArray(items)) {
      this.fail(run, node, startedAt, `config.items must resolve to an array; ${JSON.stringify(source)} gave ${describeValue(items)}`, { items: source });
    }
    const list = items as unknown[];
    if (list.length > this.host.limits.loopMaxItems) {
      this.fail(
        run,
        node,
        startedAt,
        `config.items has ${list.length} items; a loop iterates at most ${this.host.limits.loopMaxItems} — split the work into smaller runs, or raise WEFT_LOOP_MAX_ITEMS`,
        { items: source, count: list.length },
      );
    }
    const iterations: Record<string, unknown>[] = [];
    const collector = { current: {} as Record<string, unknown> };
    run.loops.push(collector);
    let slice = performance.now();
    try {
      for (let index = 0; index < list.length; index++) {
        // Pure steps run synchronously: a long loop hands the thread back every few milliseconds, so the
        // server keeps answering (and other runs progress) while it iterates.
        if (performance.now() - slice > LOOP_SLICE_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
        this.checkAlive(run);
        run.context[node.name] = { item: list[index], index, output: null, status: "running", error: null };
        collector.current = {};
        await this.chain(run, node.firstLoopAction);
        iterations.push(collector.current);
      }
    } finally {
      run.loops.pop();
    }
    if (this.replayed(run, node)) return;
    const last = list.length - 1;
    this.record(run, node, { status: "completed", input: { items: source, count: list.length }, output: { iterations }, error: null, startedAt });
    const entry = run.context[node.name] as Record<string, unknown>;
    entry.item = last >= 0 ? list[last] : null;
    entry.index = last;
  }
}
