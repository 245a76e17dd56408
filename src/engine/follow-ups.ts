/**
 * What a finished production run starts (docs/engine.md "Errors, retries, sub-flows"):
 * - a failed run starts its workflow's `settings.errorWorkflowId` with triggerType `error`;
 * - live workflows whose trigger is `runs.on_error` (type error) or `runs.on_run_finished` (type run_finished)
 *   start when their trigger's filter accepts the run (the piece's `matches`).
 * The trigger input (`trigger.body`) is `{ run: <summary> }`. Runs started this way never start further
 * follow-ups, and a workflow never reacts to its own runs, so no chain can loop.
 */
import type { Logger } from "../http/logger";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { RunTriggerType } from "../schema/run";
import type { RunRow } from "../store/run-rows";
import type { Engine } from "./engine";
import { errorMessage } from "./invoke-action";
import type { LiveTriggerWorkflow, WorkflowSource } from "./workflow-source";

const EVENT_TRIGGERS: Record<string, RunTriggerType> = { error: "error", run_finished: "run_finished" };
const CACHE_MS = 5_000;

export function runSummary(row: RunRow) {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workflowName: row.workflow_name,
    status: row.status,
    triggerType: row.trigger_type,
    environment: row.environment,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    errorMessage: row.error_message ?? undefined,
    tags: JSON.parse(row.tags) as string[],
  };
}

export class FollowUps {
  private live: Promise<LiveTriggerWorkflow[]> | undefined;
  private loadedAt = 0;

  constructor(
    private readonly engine: Engine,
    private readonly source: () => WorkflowSource | undefined,
    private readonly pieces: PieceRegistry,
    private readonly log: Logger,
  ) {
    engine.onFinished((row) => this.finished(row));
  }

  /** Publish or unpublish happened: the set of live event-triggered workflows may have changed. */
  invalidate() {
    this.live = undefined;
  }

  private liveEventWorkflows(): Promise<LiveTriggerWorkflow[]> {
    const now = this.engine.clock.now();
    if (!this.live || now - this.loadedAt > CACHE_MS) {
      const live = this.source()?.liveWithTriggerTypes(Object.keys(EVENT_TRIGGERS)) ?? Promise.resolve([]);
      this.live = live;
      this.loadedAt = now;
      // A failed read is not kept: the next finished run reads again.
      live.catch(() => {
        if (this.live === live) this.live = undefined;
      });
    }
    return this.live;
  }

  private finished(row: RunRow) {
    if (row.environment !== "production" || row.trigger_type === "error" || row.trigger_type === "run_finished") return;
    // Built only when something follows up (most finished runs start nothing).
    let summary: ReturnType<typeof runSummary> | undefined;
    const summaryOf = () => (summary ??= runSummary(row));
    const started = new Set<string>();
    const start = (workflowId: string, triggerType: RunTriggerType) => {
      if (started.has(`${workflowId}|${triggerType}`) || workflowId === row.workflow_id) return;
      started.add(`${workflowId}|${triggerType}`);
      this.engine
        .startRun({ workspaceId: row.workspace_id, workflowId, environment: "production", triggerType, input: { run: summaryOf() } })
        .catch((error) => this.log.warn("follow-up workflow could not start", { runId: row.id, workflowId, triggerType, error: errorMessage(error) }));
    };
    if (row.status === "failed") {
      // Not waited for either: a definition that cannot be read starts no error workflow, and says so.
      this.errorWorkflowOf(row).then(
        (errorWorkflowId) => errorWorkflowId && start(errorWorkflowId, "error"),
        (error) => this.log.warn("could not read the failed run's error workflow", { runId: row.id, error: errorMessage(error) }),
      );
    }
    // Not waited for (the run has ended; what follows it starts on its own): a failed read is logged.
    void this.liveEventWorkflows().then(
      (candidates) => this.startFollowers(row, candidates, summaryOf, start),
      (error) => this.log.warn("could not list event-triggered workflows", { error: errorMessage(error) }),
    );
  }

  private startFollowers(
    row: RunRow,
    candidates: LiveTriggerWorkflow[],
    summaryOf: () => ReturnType<typeof runSummary>,
    start: (workflowId: string, triggerType: RunTriggerType) => void,
  ) {
    for (const candidate of candidates) {
      if (candidate.workspaceId !== row.workspace_id) continue;
      const triggerType = EVENT_TRIGGERS[candidate.trigger.type];
      if (!triggerType) continue;
      const trigger =
        candidate.trigger.pieceId && candidate.trigger.actionId ? this.pieces.trigger(candidate.trigger.pieceId, candidate.trigger.actionId) : undefined;
      const event = { ...summaryOf(), workflowId: row.workflow_id, status: row.status };
      let accepts: boolean;
      try {
        accepts = trigger?.matches ? trigger.matches(candidate.trigger.config ?? {}, event) : triggerType === "error" ? row.status === "failed" : true;
      } catch {
        accepts = false;
      }
      if (accepts) start(candidate.workflowId, triggerType);
    }
  }

  private readonly errorWorkflowByDefinition = new Map<string, string | null>();

  private async errorWorkflowOf(row: RunRow): Promise<string | undefined> {
    let id = this.errorWorkflowByDefinition.get(row.definition_hash);
    if (id === undefined) {
      const definition = await this.engine.definitionOf(row).catch(() => null);
      id = definition?.settings?.errorWorkflowId ?? null;
      if (this.errorWorkflowByDefinition.size > 1000) this.errorWorkflowByDefinition.clear();
      this.errorWorkflowByDefinition.set(row.definition_hash, id);
    }
    return id ?? undefined;
  }
}
