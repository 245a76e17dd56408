/**
 * Hands pending runs to execution in order, honouring each workflow's `settings.concurrencyLimit`
 * (excess runs wait as pending, first in first out) and `settings.maintenanceMode` (production runs
 * wait; test runs proceed), and a global ceiling on runs executing at once.
 * One lane per workflow and environment: test runs in the editor never hold up production runs.
 */
import type { SettingsT } from "../schema/workflow";

export interface Dispatchable {
  id: string;
  workflowId: string;
  environment: "production" | "test";
}

interface Lane<T extends Dispatchable> {
  queue: T[];
  head: number;
  running: number;
  limit: number;
  maintenance: boolean;
  environment: "production" | "test";
}

export class Dispatcher<T extends Dispatchable> {
  private readonly lanes = new Map<string, Lane<T>>();
  private active = 0;
  private scheduled = false;
  private paused = false;

  constructor(
    private readonly maxActive: number,
    private readonly start: (item: T) => void,
  ) {}

  get activeCount(): number {
    return this.active;
  }

  get pendingCount(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.length - lane.head;
    return n;
  }

  private key(workflowId: string, environment: string) {
    return `${workflowId}|${environment}`;
  }

  private lane(workflowId: string, environment: "production" | "test"): Lane<T> {
    const key = this.key(workflowId, environment);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { queue: [], head: 0, running: 0, limit: Number.POSITIVE_INFINITY, maintenance: false, environment };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** Whether a workflow has a lane in `environment`: runs waiting or executing, or settings in force. */
  hasLane(workflowId: string, environment: "production" | "test"): boolean {
    return this.lanes.has(this.key(workflowId, environment));
  }

  /** The workflows with runs waiting in their lane of `environment` (held back by their settings, or by the ceiling). */
  waitingWorkflows(environment: "production" | "test"): string[] {
    const ids: string[] = [];
    for (const [key, lane] of this.lanes) if (lane.environment === environment && lane.queue.length > lane.head) ids.push(key.slice(0, key.lastIndexOf("|")));
    return ids;
  }

  /** The settings in force for a workflow's lane (from the newest definition seen, or a publish). */
  setSettings(workflowId: string, environment: "production" | "test", settings: SettingsT | undefined) {
    const lane = this.lane(workflowId, environment);
    lane.limit = settings?.concurrencyLimit && settings.concurrencyLimit > 0 ? settings.concurrencyLimit : Number.POSITIVE_INFINITY;
    lane.maintenance = settings?.maintenanceMode === true;
    this.schedule();
  }

  add(item: T, settings?: SettingsT) {
    const lane = this.lane(item.workflowId, item.environment);
    if (settings !== undefined) {
      lane.limit = settings?.concurrencyLimit && settings.concurrencyLimit > 0 ? settings.concurrencyLimit : Number.POSITIVE_INFINITY;
      lane.maintenance = settings?.maintenanceMode === true;
    }
    lane.queue.push(item);
    this.schedule();
  }

  /** Takes a waiting run out of its lane (cancelled while pending); false when it is not waiting. */
  remove(item: Dispatchable): boolean {
    const lane = this.lanes.get(this.key(item.workflowId, item.environment));
    if (!lane) return false;
    for (let i = lane.head; i < lane.queue.length; i++) {
      if (lane.queue[i].id === item.id) {
        lane.queue.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  isWaiting(item: Dispatchable): boolean {
    const lane = this.lanes.get(this.key(item.workflowId, item.environment));
    if (!lane) return false;
    for (let i = lane.head; i < lane.queue.length; i++) if (lane.queue[i].id === item.id) return true;
    return false;
  }

  /** Why a waiting run has not started, in words for the run's `waiting`; undefined when it is not held back. */
  waitingReason(item: Dispatchable): string | undefined {
    const lane = this.lanes.get(this.key(item.workflowId, item.environment));
    if (!lane || !this.isWaiting(item)) return undefined;
    if (lane.maintenance && lane.environment === "production") return "the workflow's maintenance mode to end";
    if (lane.running >= lane.limit) return `a concurrency slot (the workflow's concurrencyLimit is ${lane.limit}, all in use)`;
    if (this.active >= this.maxActive) return `an execution slot (${this.maxActive} runs are executing, the most at once)`;
    return undefined;
  }

  /** A run left execution (finished or paused): its slot is free. */
  release(item: Dispatchable) {
    const lane = this.lanes.get(this.key(item.workflowId, item.environment));
    if (lane) lane.running = Math.max(0, lane.running - 1);
    this.active = Math.max(0, this.active - 1);
    this.schedule();
  }

  /** Stops handing out runs (shutdown); waiting runs stay pending in the database. */
  pause() {
    this.paused = true;
  }

  private schedule() {
    if (this.scheduled || this.paused) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  dispatch() {
    if (this.paused) return;
    for (const [key, lane] of this.lanes) {
      while (
        lane.head < lane.queue.length &&
        this.active < this.maxActive &&
        lane.running < lane.limit &&
        !(lane.maintenance && lane.environment === "production")
      ) {
        const item = lane.queue[lane.head];
        lane.queue[lane.head++] = undefined as unknown as T;
        lane.running++;
        this.active++;
        this.start(item);
      }
      if (lane.head >= lane.queue.length) {
        lane.queue = [];
        lane.head = 0;
      } else if (lane.head > 1024 && lane.head * 2 > lane.queue.length) {
        lane.queue = lane.queue.slice(lane.head);
        lane.head = 0;
      }
      if (lane.queue.length === 0 && lane.running === 0 && lane.limit === Number.POSITIVE_INFINITY && !lane.maintenance) this.lanes.delete(key);
      if (this.active >= this.maxActive) return;
    }
  }
}
