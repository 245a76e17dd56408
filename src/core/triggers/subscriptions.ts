/**
 * Long-lived subscriptions: `subscription`-type triggers of live workflows (an MQTT topic, a mailbox
 * with IDLE…). One subscription is open per live workflow while the trigger service runs; publish opens
 * it (or re-opens it for a new version), unpublish and shutdown close it. Each event the piece emits
 * becomes a production run, and `emit` resolves only once that run is stored durably, so a piece can
 * acknowledge its broker then and nothing acknowledged is lost. A subscription that fails to open, or
 * reports it broke, is closed and opened again after a back-off (1 s doubling, at most 60 s); its state
 * is shown in GET /api/workflows/{id}/trigger.
 */
import type { Logger } from "../../http/logger";
import type { Subscription, TriggerDef } from "../../pieces-sdk/types";
import type { TriggerNodeT } from "../../schema/workflow";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { SubscriptionRuns, TriggerRuntime } from "./ports";

export interface SubscriptionsOptions {
  pieces: PieceRegistry;
  runs: SubscriptionRuns;
  runtime: TriggerRuntime;
  log: Logger;
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
  disable(workflowId: string): void {
    const entry = this.entries.get(workflowId);
    if (!entry) return;
    this.entries.delete(workflowId);
    void this.close(entry);
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

  status(workflowId: string) {
    const entry = this.entries.get(workflowId);
    if (!entry) return null;
    return { open: entry.open !== undefined, since: entry.since, events: entry.events, failures: entry.failures, lastError: entry.lastError };
  }

  private definition(entry: Entry): TriggerDef {
    const { pieceId, actionId } = entry.trigger;
    const def = pieceId && actionId ? this.o.pieces.get(pieceId)?.triggers[actionId] : undefined;
    if (!def?.subscribe) throw new Error(`trigger ${pieceId}/${actionId} is not a subscription in this fleet`);
    return def;
  }

  private open(entry: Entry): void {
    if (entry.open || entry.opening || entry.retry) return;
    const generation = ++entry.generation;
    const current = () => this.entries.get(entry.workflowId) === entry && entry.generation === generation && this.running;
    entry.opening = (async () => {
      try {
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
