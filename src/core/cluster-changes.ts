/**
 * What every instance of a cluster keeps in memory of the shared database, kept the same everywhere. A change
 * is announced on the bus after its commit (`weft_settings` {what, id?}), and every instance — the sender too —
 * drops or re-reads what it keeps of it:
 * - `network`: Settings → Network's allowed ranges, put in force for the main thread, the worker threads and
 *   the piece hosts (core/network.ts);
 * - `tokens`: an API token was revoked; the principals of bearer tokens are read again (core/identity.ts);
 * - `workflow` {id}: published, unpublished or its webhook token rotated (also a live workflow deleted): its
 *   webhook target, its production definition, the live event-triggered workflows and the settings of its
 *   lanes (maintenanceMode, concurrencyLimit) are read again (src/app.ts);
 * - `git` {id}: a workspace's git sync settings were saved or removed: its pull schedule is read again
 *   (core/git/sync.ts), so the instance holding the schedule's lease may be any of them.
 * A notification sent while an instance's bus reconnects is lost to it, so each instance also re-reads all of
 * them every `recheckMs` (2 s) and once its bus listens; an instance that was restarting reads everything as
 * it starts. Alone (SQLite) there is no bus and no timer: every change is made in the one process, which
 * applies it as it makes it.
 *
 *   changes.follow("network", () => settings.reload(), () => settings.reload());
 *   changes.announce({ what: "network" }); // after the commit
 */
import type { Logger } from "../http/logger";
import { type Bus, openBus } from "../store/bus";
import type { Db } from "../store/db";

export type ChangeKind = "network" | "tokens" | "workflow" | "git";

export interface Change {
  what: ChangeKind;
  /** The workflow's id (`workflow`), the workspace's (`git`). */
  id?: string;
}

interface Follower {
  what: ChangeKind;
  onChange: (change: Change) => void | Promise<void>;
  recheck: () => void | Promise<void>;
}

/** The bus channel of these announcements. */
const CHANNEL = "weft_settings";

/** How often everything is read again, should a notification have been lost; within this a change is everywhere. */
export const RECHECK_MS = 2_000;

export interface ClusterChangesOptions {
  db: Db;
  log: Logger;
  recheckMs?: number;
}

export class ClusterChanges {
  private readonly followers: Follower[] = [];
  private bus: Bus | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly o: ClusterChangesOptions) {}

  /** `onChange` hears every announcement of `what`, this instance's own included; `recheck` re-reads it all (timer, start). */
  follow(what: ChangeKind, onChange: (change: Change) => void | Promise<void>, recheck: () => void | Promise<void>): void {
    this.followers.push({ what, onChange, recheck });
  }

  /** Tells every instance, this one included, of a change already committed. Alone: nothing to tell. */
  announce(change: Change): void {
    this.bus?.publish(CHANNEL, change);
  }

  /**
   * In a cluster: listens on the bus and starts the timer. Resolves once it listens; what was committed before
   * then is found by the re-read that follows (`weft serve` does not wait: what was read as the app was built
   * is in force meanwhile). Alone: nothing to do.
   */
  async start(): Promise<void> {
    if (this.bus) return;
    const bus = openBus(this.o.db, (error) => this.o.log.warn("cluster bus (shared settings)", { error: errorText(error) }));
    this.bus = bus;
    if (!bus) return;
    const recheckMs = this.o.recheckMs ?? RECHECK_MS;
    this.timer = setInterval(() => void this.recheck(), recheckMs);
    this.timer.unref?.();
    // Whatever ends after stop() (which closes the bus) is not this instance's concern any more.
    const running = () => this.bus === bus;
    await bus
      .subscribe(CHANNEL, (message) => {
        const change = message as Change | null;
        for (const follower of this.followers) if (follower.what === change?.what) void this.guarded(follower, () => follower.onChange(change));
      })
      .then(async () => {
        if (running()) await this.recheck();
      })
      .catch((error) => {
        if (!running()) return;
        this.o.log.error("cannot listen on the cluster bus; changes made on other instances apply at the next re-read", {
          error: errorText(error),
          recheckSeconds: recheckMs / 1000,
        });
      });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const bus = this.bus;
    this.bus = null;
    await bus?.close();
  }

  /** Every follower reads again what it keeps; settles when all have. */
  async recheck(): Promise<void> {
    await Promise.all(this.followers.map((follower) => this.guarded(follower, follower.recheck)));
  }

  private async guarded(follower: Follower, work: () => void | Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.o.log.warn("could not apply a change made on another instance; trying again at the next re-read", { what: follower.what, error: errorText(error) });
    }
  }
}

const errorText = (error: unknown) => String((error as Error)?.message ?? error);
