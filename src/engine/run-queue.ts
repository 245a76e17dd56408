/**
 * The runs this process has queued and not yet handed to execution: the dispatcher's lanes (dispatcher.ts) and
 * the runs in them by id. Starting, resuming, retrying and recovering add runs here; the dispatcher hands them
 * to execution (run-lifecycle.ts), and cancel or a failed insert takes them out. On an `api` instance of a
 * cluster a run is handed off to the workers instead (engine.ts sets `handOff`).
 */
import type { Environment } from "../schema/run";
import type { FlowVersionT } from "../schema/workflow";
import type { RunRow } from "../store/run-rows";
import type { Dispatcher } from "./dispatcher";
import type { ReplayEntry } from "./run-execution";

/** A run the dispatcher holds or hands to execution: its row and everything it executes with. */
export interface PendingRun {
  id: string;
  workflowId: string;
  environment: Environment;
  row: RunRow;
  definition: FlowVersionT;
  variables: Record<string, unknown>;
  secrets: string[];
  pinned: Record<string, unknown>;
  triggerOutput: unknown;
  replay?: ReplayEntry[];
  resume?: { payload: Record<string, unknown> };
  activeMsBefore?: number;
}

export class RunQueue {
  private readonly byId = new Map<string, PendingRun>();
  /** An `api` instance: where a run goes instead of this process's queue (set by the engine). */
  handOff: (p: PendingRun) => void = () => {
    throw new Error("this instance does not execute runs and has nowhere to hand them");
  };

  constructor(
    private readonly dispatcher: Dispatcher<PendingRun>,
    /** False on an `api` instance: it stores runs and leaves their execution to workers. */
    private readonly executes: boolean,
  ) {}

  /** Queues a run in its workflow's lane (or hands it off on an `api` instance). */
  add(p: PendingRun) {
    if (!this.executes) return this.handOff(p);
    this.byId.set(p.id, p);
    this.dispatcher.add(p, p.definition.settings ?? {});
  }

  /** The queued run, if it is queued here. */
  get(runId: string): PendingRun | undefined {
    return this.byId.get(runId);
  }

  has(runId: string): boolean {
    return this.byId.has(runId);
  }

  /** The dispatcher handed the run to execution: it is no longer queued. */
  taken(p: PendingRun) {
    this.byId.delete(p.id);
  }

  /** The run ended executing (or was not executed): its slot in the lane is free. */
  release(p: PendingRun) {
    this.dispatcher.release(p);
  }

  /** Takes a queued run out of its lane (cancel, a failed insert); answers it when it was queued. */
  withdraw(runId: string): PendingRun | undefined {
    const p = this.byId.get(runId);
    if (p) {
      this.byId.delete(runId);
      this.dispatcher.remove(p);
    }
    return p;
  }

  /** Runs waiting in the lanes. */
  get pendingCount(): number {
    return this.dispatcher.pendingCount;
  }

  /** What a run queued here waits for (a concurrency limit, maintenance mode, the engine's ceiling); undefined when not queued or not held back. */
  waitingReason(run: { id: string; workflowId: string; environment: Environment }): string | undefined {
    return this.byId.has(run.id) ? this.dispatcher.waitingReason(run) : undefined;
  }
}
