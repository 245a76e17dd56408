/**
 * Start-up recovery of every run a stopped or killed process left unfinished (docs/engine.md "Recovery
 * rules"): pending runs are queued again in order; paused ones get their timers back (an approval keeps
 * waiting); a run left `running` replays its recorded steps and continues — unless a step was running when
 * the process died: a `read` step runs again once, any other step fails the run with a message saying so.
 * In a cluster the same rules recover the runs this instance claims from an instance that died.
 */
import type { RunRow, StepRow } from "../store/run-rows";
import { errorMessage } from "./invoke-action";
import type { EndOutcome } from "./run-lifecycle";
import type { StartedRuns } from "./run-start";
import type { PauseState, PendingRun, RunTable } from "./run-table";

export interface RecoveryLinks {
  /** What the starter knows of the runs it started (run-start.ts): a run still being inserted is held here. */
  started: StartedRuns;
  scheduleResume(runId: string, resumeAt: string): void;
  finish(row: RunRow, outcome: EndOutcome): Promise<void>;
}

/**
 * Recovers `rows`: every unfinished run at start-up, or the runs just claimed from an instance that died. Their
 * workflows' variables are read first (the rows were read before: a run started meanwhile is not among them);
 * then every run is queued or resumed at once. Never rejects: a run that cannot be recovered fails.
 */
export async function recoverRuns(t: RunTable, read: RunRow[], links: RecoveryLinks): Promise<void> {
  // A run this process holds already (started while the rows were read) is not recovered a second time.
  const rows = read.filter(
    (row) => t.rowInMemory(row.id) === undefined && links.started.untakenInsert(row.id) === undefined && links.started.unackedInsert(row.id) === undefined,
  );
  // A batch holds many runs of few workflows: their variables are read once per workflow and definition.
  const variablesRead = new Map<string, { variables: Record<string, unknown>; secrets: string[] }>();
  const keyOf = (row: RunRow) => `${row.workflow_id}\u0000${row.definition_hash}`;
  for (const row of rows) {
    if (row.status === "paused" || variablesRead.has(keyOf(row))) continue;
    try {
      variablesRead.set(keyOf(row), await t.variablesOf(row, await t.definitionOf(row)));
    } catch {
      // The definition is missing: the loop below fails the run with that error.
    }
  }
  for (const row of rows) {
    try {
      if (row.status === "paused") {
        if (row.resume_at) links.scheduleResume(row.id, row.resume_at);
        continue;
      }
      const definition = await t.definitionOf(row);
      const base = t.pendingFor(row, definition, variablesRead.get(keyOf(row)) ?? { variables: definition.variables ?? {}, secrets: [] });
      if (row.status === "pending") {
        const state = row.state ? (JSON.parse(row.state) as PauseState) : undefined;
        t.queue.add(
          state ? { ...base, replay: state.log, resume: { payload: state.payload ?? { resumedBy: "restart" } }, activeMsBefore: state.activeMs } : base,
        );
        continue;
      }
      await recoverRunning(t, links, row, base);
    } catch (error) {
      t.o.log.error("could not recover run", { runId: row.id, error: errorMessage(error) });
      row.error_message = `interrupted by a restart and could not be resumed: ${errorMessage(error)}`;
      void links.finish(row, { kind: "failed", message: row.error_message });
    }
  }
}

async function recoverRunning(t: RunTable, links: RecoveryLinks, row: RunRow, base: PendingRun) {
  const steps = await t.reads.steps(row.id);
  let interrupted = steps.find((s) => s.status === "running");
  // A step that only reads (sideEffects "read") is safe to repeat: it runs again, once. The mark of that
  // retry (retry_count 1 on its running row) is committed first, so a second restart fails the run instead.
  let retry: StepRow | undefined;
  if (interrupted && interrupted.retry_count === 0 && t.o.pieces.action(interrupted.piece_id ?? "", interrupted.action_id ?? "")?.sideEffects === "read") {
    retry = { ...interrupted, retry_count: 1 };
    t.writes.fire({ op: "updateStep", row: retry });
    interrupted = undefined;
  }
  const truncated = steps.find((s) => s.output_truncated && s.status !== "running");
  if (interrupted || truncated) {
    const message = interrupted
      ? `interrupted by a restart while step "${interrupted.node_id}" was running; it may have partly happened, so it is not repeated automatically — retry the run (POST /api/runs/${row.id}/retry)`
      : `interrupted by a restart; step "${truncated?.node_id}" stored only a truncated output, so the run cannot resume — retry it (POST /api/runs/${row.id}/retry with "from": "start")`;
    if (interrupted) {
      const failed: StepRow = {
        ...interrupted,
        status: "failed",
        error_message: "interrupted by a restart",
        finished_at: new Date(t.clock.now()).toISOString(),
      };
      t.writes.fire({ op: "updateStep", row: failed });
    }
    row.step_total = steps.length;
    row.step_failed = steps.filter((s) => s.status === "failed").length + (interrupted ? 1 : 0);
    row.event_seq = Math.max(row.event_seq, ...steps.map((s) => s.seq));
    void links.finish(row, { kind: "failed", message });
    return;
  }
  // Every recorded step finished: replay them and continue with the next one (nothing runs twice).
  row.step_total = steps.length;
  row.step_failed = steps.filter((s) => s.status === "failed").length;
  row.event_seq = Math.max(row.event_seq, ...steps.map((s) => s.seq), 0);
  row.status = "pending";
  t.writes.fire({
    op: "patchRun",
    id: row.id,
    patch: { status: "pending", step_total: row.step_total, step_failed: row.step_failed, event_seq: row.event_seq },
  });
  const state = row.state ? (JSON.parse(row.state) as PauseState) : undefined;
  // A step still `paused` was being resumed when the process died: it is resumed again with the same payload.
  const resumedStep = steps.some((s) => s.status === "paused");
  t.queue.add({
    ...base,
    replay: steps.map((s) =>
      s.id === retry?.id
        ? { nodeId: s.node_id, stepId: s.id, status: "retry", output: null, error: null }
        : { nodeId: s.node_id, stepId: s.id, status: s.status, output: s.output_data === null ? null : JSON.parse(s.output_data), error: s.error_message },
    ),
    activeMsBefore: state?.activeMs,
    ...(resumedStep ? { resume: { payload: state?.payload ?? { resumedBy: "restart" } } } : {}),
  });
}
