/**
 * Long-lived subscriptions: `subscription`-type triggers of live workflows (an MQTT topic, a mailbox
 * with IDLE…). One subscription is open per live workflow while the trigger service runs; publish opens
 * it (or re-opens it for a new version), unpublish and shutdown close it. Each event the piece emits
 * becomes a production run, and `emit` resolves only once that run is stored durably, so a piece can
 * acknowledge its broker then and nothing acknowledged is lost. A subscription that fails to open, or
 * reports it broke, is closed and opened again after a back-off (1 s doubling, at most 60 s); its state
 * is shown in GET /api/workflows/{id}/trigger.
 * In a cluster each subscription is open on one instance only, the holder of its lease (./ownership.ts); the
 * others keep it on standby. At every lease renewal (`sync`) an instance learns of subscriptions published,
 * republished or unpublished on another one, closes what it lost and opens what it could take — a dead
 * owner's subscription once its lease lapses.
 */
import type { Logger } from "../../http/logger";
import type { Subscription, TriggerDef } from "../../pieces-sdk/types";
import type { TriggerNodeT } from "../../schema/workflow";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import { claimOrLog, type Ownership, SUBSCRIPTION_LEASE } from "./ownership";
import type { LiveWorkflow, SubscriptionRuns, TriggerRuntime, TriggerWorkflows } from "./ports";

export interface SubscriptionsOptions {
  pieces: PieceRegistry;
  runs: SubscriptionRuns;
  runtime: TriggerRuntime;
  log: Logger;
  /** Who holds which subscription in a cluster (`soleOwner`: this process holds every one). */
  ownership: Ownership;
  /** Live workflows: in a cluster, `sync` reads what other instances published and unpublished. */
  workflows?: TriggerWorkflows;
  /** First back-off after a failure, ms (doubled each time, at most maxBackoffMs). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

interface Wanted {
  workflowId: string;
  workspaceId: string;
  versionId: string;
  trigger: TriggerNodeT;
}

interface Entry extends Wanted {
  open?: Subscription;
  opening?: Promise<void>;
  retry?: ReturnType<typeof setTimeout>;
  failures: number;
  since: string | null;
  lastError: string | null;
  events: number;
  /** Bumped on every (re)open and close: callbacks of an older subscription are ignored. */
  generation: number;
}

export class Subscriptions {
  private readonly entries = new Map<string, Entry>();
  private running = false;

  constructor(private readonly o: SubscriptionsOptions) {}

  /** Publish: this version's subscription should be open (re-opened when the version changed). */
  enable(wanted: Wanted): void {
    const current = this.entries.get(wanted.workflowId);
    if (current && current.versionId === wanted.versionId && JSON.stringify(current.trigger) === JSON.stringify(wanted.trigger)) return;
    if (current) void this.close(current);
    const entry: Entry = { ...wanted, failures: 0, since: null, lastError: null, events: 0, generation: 0 };
    this.entries.set(wanted.workflowId, entry);
    if (this.running) this.open(entry);
  }

  /** Unpublish: close it. */
  async disable(workflowId: string): Promise<void> {
    const entry = this.entries.get(workflowId);
    if (!entry) return;
    this.entries.delete(workflowId);
    // Not waited for: closing may take the piece's time; close() logs its own failure.
    void this.close(entry);
    await this.o.ownership.drop(SUBSCRIPTION_LEASE + workflowId);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const entry of this.entries.values()) this.open(entry);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all([...this.entries.values()].map((entry) => this.close(entry)));
  }

  /**
   * In a cluster, at every lease renewal: adopt subscriptions another instance published (their leases name
   * them), follow republish and unpublish done elsewhere, close what this instance lost, open what it can take.
   */
  async sync(): Promise<void> {
    const workflows = this.o.workflows;
    if (!this.running || !this.o.ownership.shared || !workflows) return;
    for (const name of await this.o.ownership.known(SUBSCRIPTION_LEASE)) {
      const workflowId = name.slice(SUBSCRIPTION_LEASE.length);
      if (this.entries.has(workflowId)) continue;
      const live = await workflows.live(workflowId);
      // Not live any more (unpublished while its holder was down): nobody is to hold it.
      if (!this.follow(workflowId, live, await this.subscriptionOf(live, workflows))) await this.o.ownership.drop(name);
    }
    for (const entry of [...this.entries.values()]) {
      const live = await workflows.live(entry.workflowId);
      const moved = live?.versionId !== entry.versionId;
      // Read before the check below, so that nothing is awaited between the check and what follows it.
      const trigger = moved ? await this.subscriptionOf(live, workflows) : undefined;
      // Disabled or replaced meanwhile.
      if (this.entries.get(entry.workflowId) !== entry) continue;
      if (moved) {
        // Republished (the new version's subscription replaces it) or unpublished on another instance.
        if (!this.follow(entry.workflowId, live, trigger)) await this.disable(entry.workflowId);
      } else if ((entry.open || entry.opening) && !this.o.ownership.holds(SUBSCRIPTION_LEASE + entry.workflowId)) {
        this.o.log.info("subscription taken over by another instance; closing it here", { workflowId: entry.workflowId });
        void this.close(entry);
      } else this.open(entry);
    }
  }

  /** The subscription trigger of a live workflow's version; undefined when it is not live or its trigger is not one. */
  private async subscriptionOf(live: LiveWorkflow | null, workflows: TriggerWorkflows): Promise<TriggerNodeT | undefined> {
    const trigger = live ? (await workflows.versionDefinition(live.versionId))?.trigger : undefined;
    return trigger?.type === "subscription" ? trigger : undefined;
  }

  /** Wants the live version's subscription of a workflow (`trigger`: `subscriptionOf` it); false when the workflow has none. */
  private follow(workflowId: string, live: LiveWorkflow | null, trigger: TriggerNodeT | undefined): boolean {
    if (!live || !trigger) return false;
    this.enable({ workflowId, workspaceId: live.workspaceId, versionId: live.versionId, trigger });
    return true;
  }

  async status(workflowId: string) {
    const entry = this.entries.get(workflowId);
    if (!entry) return null;
    return {
      open: entry.open !== undefined,
      since: entry.since,
      events: entry.events,
      failures: entry.failures,
      lastError: entry.lastError,
      // In a cluster: the instance holding it open (it may be another one than the instance answering).
      ...(this.o.ownership.shared ? { owner: await this.o.ownership.holder(SUBSCRIPTION_LEASE + workflowId) } : {}),
    };
  }

  /** Holds (or now takes) the subscription's lease; a database error counts as not holding it until the next sync. */
  private owns(workflowId: string): Promise<boolean> {
    return claimOrLog(
      this.o.ownership,
      SUBSCRIPTION_LEASE + workflowId,
      workflowId,
      this.o.log,
      "subscription lease could not be taken; trying again at the next renewal",
    );
  }

  private definition(entry: Entry): TriggerDef {
    const { pieceId, actionId } = entry.trigger;
    const def = pieceId && actionId ? this.o.pieces.get(pieceId)?.triggers[actionId] : undefined;
    if (!def?.subscribe) throw new Error(`trigger ${pieceId}/${actionId} is not a subscription served here`);
    return def;
  }

  private open(entry: Entry): void {
    if (!this.running || entry.open || entry.opening || entry.retry) return;
    const generation = ++entry.generation;
    const current = () => this.entries.get(entry.workflowId) === entry && entry.generation === generation && this.running;
    entry.opening = (async () => {
      try {
        // Another instance holds it open: this one waits on standby (sync tries again at every renewal).
        if (!(await this.owns(entry.workflowId)) || !current()) return;
        const def = this.definition(entry);
        const { connectionId, pieceId, config } = entry.trigger;
        const auth = connectionId ? await this.o.runtime.auth({ workspaceId: entry.workspaceId, connectionId, pieceId: pieceId! }) : undefined;
        const subscription = await def.subscribe!({
          config: config ?? {},
          auth,
          fetch: this.o.runtime.fetch,
          workflowId: entry.workflowId,
          emit: async (payload) => {
            if (!current()) throw new Error("the subscription was closed");
            const { runId } = await this.o.runs.enqueue(
              {
                workspaceId: entry.workspaceId,
                workflowId: entry.workflowId,
                environment: "production",
                triggerType: "subscription",
                triggerData: { body: payload, headers: {}, query: {} },
              },
              { awaitReply: false, timeoutMs: 0 },
            );
            entry.events++;
            return runId;
          },
          lastEvent: async () => ((await this.o.runs.recentTriggerBodies(entry.workflowId, 1))[0] ?? null) as Record<string, unknown> | null,
          recentEvents: (limit) => this.o.runs.recentTriggerBodies(entry.workflowId, limit) as Promise<Record<string, unknown>[]>,
          fail: (error) => {
            if (current()) this.broke(entry, error);
          },
          log: (message, fields) => this.o.log.info(message, { workflowId: entry.workflowId, ...fields }),
        });
        if (!current()) {
          await subscription.close();
          return;
        }
        entry.open = subscription;
        entry.since = new Date().toISOString();
        entry.failures = 0;
        entry.lastError = null;
        this.o.log.info("subscription open", { workflowId: entry.workflowId, trigger: `${entry.trigger.pieceId}/${entry.trigger.actionId}` });
      } catch (error) {
        if (current()) this.broke(entry, error as Error);
      } finally {
        entry.opening = undefined;
      }
    })();
  }

  /** Closes what is open and opens again after the back-off. */
  private broke(entry: Entry, error: Error): void {
    entry.failures++;
    entry.lastError = error.message;
    const open = entry.open;
    entry.open = undefined;
    entry.since = null;
    entry.generation++;
    if (open) void Promise.resolve(open.close()).catch(() => undefined);
    const base = this.o.backoffMs ?? 1_000;
    const delay = Math.min(this.o.maxBackoffMs ?? 60_000, base * 2 ** Math.min(entry.failures - 1, 16));
    this.o.log.warn("subscription failed; opening it again later", {
      workflowId: entry.workflowId,
      error: error.message,
      retryInMs: delay,
      failures: entry.failures,
    });
    entry.retry = setTimeout(() => {
      entry.retry = undefined;
      if (this.running && this.entries.get(entry.workflowId) === entry) this.open(entry);
    }, delay);
    entry.retry.unref?.();
  }

  private async close(entry: Entry): Promise<void> {
    entry.generation++;
    if (entry.retry) clearTimeout(entry.retry);
    entry.retry = undefined;
    await entry.opening?.catch(() => undefined);
    const open = entry.open;
    entry.open = undefined;
    entry.since = null;
    if (open)
      await Promise.resolve(open.close()).catch((error) =>
        this.o.log.warn("closing a subscription failed", { workflowId: entry.workflowId, error: (error as Error).message }),
      );
  }
}
