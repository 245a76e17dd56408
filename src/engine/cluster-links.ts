/**
 * What crosses instances of a cluster, on the bus (store/bus.ts, LISTEN/NOTIFY):
 * - `weft_control` {to, op, runId, workspaceId}: a request to the instance that holds a run — `cancel` it, or
 *   `watch` it (announce its changes: someone on another instance streams it);
 * - `weft_run` {runId, end}: a watched run changed; its changes are committed before this is sent, so whoever
 *   follows it reads them from the database, in order of their event ids. A worker also announces the end of
 *   every run it took from an `api` instance's intake (someone there may wait for it);
 * - `weft_wake` {}: runs wait in the shared queue (an `api` instance stored them): workers claim some;
 * - `weft_reply` {runId, reply}: a run taken from an `api` instance's intake replied to its webhook
 *   (webhook.respond): the instance holding the caller answers with it.
 * Alone (SQLite) nothing here runs.
 */
import type { RunT } from "../schema/run";
import { type Bus, openBus } from "../store/bus";
import type { RunRow } from "../store/run-rows";
import { errorMessage } from "./invoke-action";
import { FINISHED, type RunTable } from "./run-table";
import type { WebhookReply } from "./step-context";
import type { Waiters } from "./waiters";

interface ControlMessage {
  to: string;
  op: "cancel" | "watch";
  runId: string;
  workspaceId: string;
}

interface RunChanged {
  runId: string;
  end?: boolean;
}

interface Reply {
  runId: string;
  reply: WebhookReply;
}

export interface ClusterActions {
  cancel(workspaceId: string, runId: string): Promise<RunT>;
  /** A reply from the worker executing a run this instance stored: to whoever waits for it here. */
  deliverReply(runId: string, reply: WebhookReply): void;
  /** The bus says runs wait in the shared queue. */
  workArrived(): void;
  /** Calls `listener` when a run ends here (run-lifecycle.ts). */
  onFinished(listener: (run: RunRow) => void): void;
}

/** Wake-ups an `api` instance sends at most this often: one tells every worker to look at the whole queue. */
const WAKE_EVERY_MS = 2;

export class ClusterLinks {
  private bus: Bus | null = null;
  private readonly followers = new Map<string, Set<() => void>>();
  private readonly announcing = new Map<string, () => void>();
  /** Runs this instance claimed from nobody (an `api` instance's intake): their webhook reply and end are announced on the bus. */
  private readonly remoteIntake = new Set<string>();
  private wakeTimer: ReturnType<typeof setTimeout> | undefined;
  private pollTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly t: RunTable,
    /** Who waits here for runs' ends and replies (waiters.ts): runs executed elsewhere end for them through here. */
    private readonly waiters: Waiters,
    private readonly me: string,
    private readonly actions: ClusterActions,
  ) {
    // A run taken from an `api` instance's intake: its webhook reply and its end go back over the bus.
    waiters.onReply((runId, reply) => {
      if (this.remoteIntake.has(runId)) this.bus?.publish("weft_reply", { runId, reply } satisfies Reply);
    });
    actions.onFinished((row) => {
      if (this.remoteIntake.delete(row.id)) this.bus?.publish("weft_run", { runId: row.id, end: true } satisfies RunChanged);
    });
  }

  start(): void {
    const log = this.t.o.log;
    this.bus = openBus(this.t.o.db, (error) => log.warn("cluster bus", { error: errorMessage(error) }));
    if (!this.bus) return;
    const listen = (channel: string, listener: (message: never) => void) =>
      this.bus!.subscribe(channel, listener as (message: unknown) => void).catch((error) =>
        log.error("cannot listen on the cluster bus; runs held by other instances are followed by polling", { channel, error: errorMessage(error) }),
      );
    void listen("weft_control", (message: ControlMessage) => this.onControl(message));
    void listen("weft_run", (message: RunChanged) => this.onRunChanged(message));
    void listen("weft_reply", (message: Reply) => this.onReply(message));
    if (this.t.executes) void listen("weft_wake", () => this.actions.workArrived());
    // Waiters here for runs executing elsewhere also look at the database once a second (a lost notification).
    this.pollTimer = setInterval(() => this.checkRemoteWaiters(), 1000);
    this.pollTimer.unref?.();
  }

  /** A run claimed from an `api` instance's intake (claims.ts): its reply and its end go back over the bus. */
  tookFromIntake(runId: string): void {
    this.remoteIntake.add(runId);
  }

  /** Tells the workers that runs wait in the shared queue (coalesced: one notification per burst). */
  wakeWorkers(): void {
    if (this.wakeTimer) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.bus?.publish("weft_wake", {});
    }, WAKE_EVERY_MS);
  }

  async stop(): Promise<void> {
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const off of this.announcing.values()) off();
    this.announcing.clear();
    await this.bus?.close();
    this.bus = null;
  }

  /** True when another instance that is alive holds the run: only it may change it. */
  heldElsewhere(row: RunRow): boolean {
    const owner = row.owner;
    return owner !== null && owner !== this.me && (this.t.o.cluster?.aliveIds().has(owner) ?? false);
  }

  /** Asks the run's owner to cancel it. */
  forwardCancel(row: RunRow): void {
    this.send(row, "cancel");
  }

  /**
   * Follows a run held elsewhere: its owner is asked to announce the run's changes, and `changed` is called on
   * each (and should also look again on a timer: a notification can be lost while the bus reconnects).
   * Calling it again re-asks the owner (the run may have changed hands). Returns the function that stops.
   */
  follow(row: RunRow, changed: () => void): () => void {
    let set = this.followers.get(row.id);
    if (!set) {
      set = new Set();
      this.followers.set(row.id, set);
    }
    set.add(changed);
    this.send(row, "watch");
    return () => {
      const current = this.followers.get(row.id);
      current?.delete(changed);
      if (current?.size === 0) this.followers.delete(row.id);
    };
  }

  private send(row: RunRow, op: ControlMessage["op"]): void {
    if (!row.owner) return;
    this.bus?.publish("weft_control", { to: row.owner, op, runId: row.id, workspaceId: row.workspace_id } satisfies ControlMessage);
  }

  private onControl(message: ControlMessage): void {
    if (message.to !== this.me || typeof message.runId !== "string") return;
    if (message.op === "cancel") {
      this.actions
        .cancel(message.workspaceId, message.runId)
        .catch((error) => this.t.o.log.warn("a cancel sent by another instance failed", { runId: message.runId, error: errorMessage(error) }));
    } else if (message.op === "watch") {
      this.announce(message.runId);
    }
  }

  /** Announces the changes of a run held here (once committed) until it ends; a run not executing here is announced once. */
  private announce(runId: string): void {
    const t = this.t;
    const publish = (end: boolean) => {
      void t.writes.drain().then(() => this.bus?.publish("weft_run", { runId, end } satisfies RunChanged));
    };
    if (this.announcing.has(runId)) return;
    if (!t.executing.has(runId) && !t.queue.has(runId)) {
      publish(false);
      return;
    }
    const off = t.events.subscribe(runId, (event) => {
      const end = event.type === "end" || (event.type === "run" && event.run.status === "paused");
      publish(event.type === "end");
      if (end) {
        off();
        this.announcing.delete(runId);
      }
    });
    this.announcing.set(runId, off);
  }

  private onRunChanged(message: RunChanged): void {
    const followers = this.followers.get(message.runId);
    if (followers) for (const changed of [...followers]) changed();
    if (message.end) {
      this.waiters.noticeEnd(message.runId);
      this.endedElsewhere(message.runId, true).catch(() => {}); // the look once a second tries again
    }
  }

  private onReply(message: Reply): void {
    if (typeof message.runId !== "string" || !message.reply) return;
    if (this.waiters.wantsReply(message.runId)) this.actions.deliverReply(message.runId, message.reply);
  }

  /**
   * Whoever waits here for the end of a run executed elsewhere gets its stored row, once it is finished: at
   * its end notice, or by the look once a second when the notice is overdue (a reply sent before it wins).
   */
  private async endedElsewhere(runId: string, noticed = false): Promise<void> {
    const t = this.t;
    const held = () => t.holds(runId);
    const waiters = this.waiters;
    if (!waiters.waitsForEnd(runId) || held()) return;
    const row = await t.reads.getRow(runId);
    // Read again after the read: whoever waited may have been answered meanwhile, or the run taken over here.
    if (!waiters.waitsForEnd(runId) || held() || !row || !FINISHED.has(row.status) || (!noticed && waiters.endedLately(row))) return;
    waiters.runEnded(row);
  }

  private checkRemoteWaiters(): void {
    for (const runId of this.waiters.runsWaitedFor()) this.endedElsewhere(runId).catch(() => {}); // tried again in a second
  }
}
