/**
 * The poller: `poll`-type triggers of live workflows, each on its interval.
 *
 * A poll row holds the durable baseline: the ids already seen ("id" dedupe) or the newest item
 * time ("time" dedupe). The first poll after the first enable only takes the baseline, so historic
 * items never fire. Later polls start one run per new item and store the new baseline in the same
 * transaction as those runs, so a crash neither loses nor repeats an item. Republishing a live
 * workflow keeps the row (and the baseline); unpublish deletes it, so the next publish starts over
 * with a fresh baseline (docs/api.md "6. Unpublish and the webhook token"). A failing poll is recorded
 * (`failures`, `lastError`) and retried with exponential backoff: interval × 2^failures, at most 1 h.
 * In a cluster each poll has one owner (./ownership.ts): an instance polls a due row only while it holds the
 * row's lease, and commits the items only if it still holds it; the others skip the row, and take it over
 * once the owner's lease lapses. A tick never overlaps the one before it: a second call waits for the first.
 */
import { InTurn } from "../../lib/in-turn";
import type { Logger } from "../../http/logger";
import type { PollDedupe, TriggerDef } from "../../pieces-sdk/types";
import type { Storage } from "../../store/port";
import type { PollRow } from "../../store/triggers";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { Clock } from "../../lib/clock";
import { DueLoop } from "./due-loop";
import { claimOrLog, type Ownership, POLL_LEASE } from "./ownership";
import type { TriggerRunStarter, TriggerRuntime, TriggerWorkflows } from "./ports";

/** How many seen ids a baseline keeps (newest first); older ids fall out. */
export const MAX_SEEN_IDS = 2000;
const BATCH = 50;

export type Baseline = { strategy: "id"; ids: Array<string | number> } | { strategy: "time"; time: number | null };

export interface PollerOptions {
  storage: Storage;
  clock: Clock;
  workflows: TriggerWorkflows;
  runs: TriggerRunStarter;
  pieces: PieceRegistry;
  log: Logger;
  runtime: TriggerRuntime;
  /** Who polls which row in a cluster (`soleOwner`: this process polls every row). */
  ownership: Ownership;
  maxBackoffMs?: number;
  pollTimeoutMs?: number;
}

export interface PollOutcome {
  workflowId: string;
  /** "baseline": the first poll, nothing fired; "fired": runs started for new items; "failed". */
  result: "baseline" | "fired" | "failed" | "skipped";
  runIds: string[];
  error?: string;
}

const DEFAULT_DEDUPE: PollDedupe = {
  strategy: "id",
  key: (item) => (item && typeof item === "object" && "id" in item ? (item as any).id : JSON.stringify(item)),
};

export class Poller {
  /** Ticks one at a time. */
  private readonly turns = new InTurn();
  private readonly loop: DueLoop;
  /** The last tick left due rows to other instances: the next due instant is theirs, not a reason to wake. */
  private othersDue = false;

  constructor(private readonly o: PollerOptions) {
    this.loop = new DueLoop({
      tick: () => this.tick(),
      nextDue: async () => (this.othersDue ? null : o.storage.triggers.polls.nextAt()),
      maxSleepMs: 1000,
      clock: o.clock,
      log: o.log,
      messages: { tickFailed: "poller tick failed", readFailed: "poller could not read its next poll time; looking again shortly" },
    });
  }

  /**
   * Publish: start polling a live version. An existing row keeps its baseline (republish); the
   * interval and version follow the new version.
   */
  async enable(
    workflowId: string,
    workspaceId: string,
    versionId: string,
    pieceId: string,
    triggerId: string,
    intervalSeconds: number,
    /** The unit to write in (its `atomically` joins it); by default one of its own. */
    within: Storage = this.o.storage,
  ): Promise<void> {
    // One unit: the row written back keeps the baseline and times a poll on another instance stored meanwhile (it stores in a unit too).
    await within.atomically(async (unit) => {
      const store = unit.triggers;
      const now = this.o.clock.now();
      const existing = await store.polls.get(workflowId);
      if (existing && existing.piece_id === pieceId && existing.trigger_id === triggerId) {
        const intervalChanged = existing.interval_seconds !== intervalSeconds;
        // Unchanged (the start-up reconcile re-enables every live poll): nothing to write, no fsync.
        if (!intervalChanged && existing.workspace_id === workspaceId && existing.version_id === versionId) return;
        await store.polls.put({
          ...existing,
          workspace_id: workspaceId,
          version_id: versionId,
          interval_seconds: intervalSeconds,
          next_poll_at: intervalChanged ? Math.min(existing.next_poll_at, now + intervalSeconds * 1000) : existing.next_poll_at,
          updated_at: now,
        });
        return;
      }
      await store.polls.put({
        workflow_id: workflowId,
        workspace_id: workspaceId,
        version_id: versionId,
        piece_id: pieceId,
        trigger_id: triggerId,
        interval_seconds: intervalSeconds,
        next_poll_at: now,
        baseline: null,
        last_poll_at: null,
        last_success_at: null,
        failures: 0,
        last_error: null,
        updated_at: now,
      });
    });
  }

  /** Unpublish: stop polling and forget the baseline. */
  /** `within`: the unit to write in (the lease is dropped in it too); by default one of its own. */
  async disable(workflowId: string, within: Storage = this.o.storage): Promise<void> {
    // A unit: a poll stored on another instance meanwhile (a unit, read then written) does not bring the row back.
    await within.atomically(async (unit) => {
      if (await unit.triggers.polls.delete(workflowId)) await this.o.ownership.drop(POLL_LEASE + workflowId, unit.leases);
    });
  }

  async status(workflowId: string) {
    const row = await this.o.storage.triggers.polls.get(workflowId);
    if (!row) return null;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return {
      intervalSeconds: row.interval_seconds,
      nextPollAt: iso(row.next_poll_at),
      lastPollAt: iso(row.last_poll_at),
      lastSuccessAt: iso(row.last_success_at),
      hasBaseline: row.baseline !== null,
      failures: row.failures,
      lastError: row.last_error,
      // In a cluster: the instance polling it (GET /api/fleet lists them).
      ...(this.o.ownership.shared ? { owner: await this.o.ownership.holder(POLL_LEASE + workflowId) } : {}),
    };
  }

  /** Polls every due row once, after the tick under way if there is one. Tests call it after moving a fake clock. */
  tick(): Promise<PollOutcome[]> {
    return this.turns.run(() => this.pollDue());
  }

  private async pollDue(): Promise<PollOutcome[]> {
    const outcomes: PollOutcome[] = [];
    const due = await this.o.storage.triggers.polls.due(this.o.clock.now(), BATCH);
    const owned = await Promise.all(due.map((row) => this.owns(row.workflow_id)));
    const mine = due.filter((_, i) => owned[i]);
    this.othersDue = mine.length < due.length;
    // Polls of different workflows are independent network calls: run them side by side.
    const results = await Promise.all(mine.map((row) => this.pollOne(row)));
    outcomes.push(...results);
    return outcomes;
  }

  /** Holds (or now takes) the row's lease; a database error counts as not owning it until the next tick. */
  private owns(workflowId: string): Promise<boolean> {
    return claimOrLog(this.o.ownership, POLL_LEASE + workflowId, workflowId, this.o.log, "poll lease could not be taken; trying again at the next tick");
  }

  private async pollOne(row: PollRow): Promise<PollOutcome> {
    const started = this.o.clock.now();
    const live = await this.o.workflows.live(row.workflow_id);
    const definition = live ? await this.o.workflows.versionDefinition(live.versionId) : null;
    const trigger = definition?.trigger;
    const def = trigger?.pieceId && trigger.actionId ? this.o.pieces.trigger(trigger.pieceId, trigger.actionId) : undefined;
    if (!live || !trigger || trigger.type !== "poll") {
      await this.disable(row.workflow_id);
      return { workflowId: row.workflow_id, result: "skipped", runIds: [] };
    }
    let items: unknown[];
    try {
      if (!def?.poll) throw new Error(`piece trigger ${trigger.pieceId}.${trigger.actionId} is not served here or has no poll function`);
      const auth = trigger.connectionId
        ? await this.o.runtime.auth({ workspaceId: live.workspaceId, connectionId: trigger.connectionId, pieceId: trigger.pieceId! })
        : undefined;
      items = await withTimeout(
        def.poll({
          config: trigger.config ?? {},
          auth,
          fetch: this.o.runtime.fetch,
          workflowId: row.workflow_id,
          store: this.o.runtime.store(row.workspace_id),
          lastPollAt: row.last_success_at === null ? undefined : new Date(row.last_success_at).toISOString(),
        }),
        this.o.pollTimeoutMs ?? 60_000,
      );
      if (!Array.isArray(items)) throw new Error(`poll returned ${typeof items}, not an array of items`);
    } catch (error) {
      return this.recordFailure(row, started, (error as Error).message ?? String(error));
    }
    return this.accept(row, def, trigger.config ?? {}, items, started);
  }

  private accept(row: PollRow, def: TriggerDef, config: Record<string, unknown>, items: unknown[], started: number): Promise<PollOutcome> {
    const dedupe = def.dedupe ?? DEFAULT_DEDUPE;
    return this.o.storage.atomically(async (unit): Promise<PollOutcome> => {
      // Re-read inside the write transaction: an unpublish during the network call wins.
      const current = await unit.triggers.polls.get(row.workflow_id);
      if (!current) return { workflowId: row.workflow_id, result: "skipped", runIds: [] };
      // A stall longer than the lease let another instance take the poll over: its items are its to start.
      if (this.o.ownership.shared && !(await this.o.ownership.confirm(POLL_LEASE + row.workflow_id, unit.leases))) {
        return { workflowId: row.workflow_id, result: "skipped", runIds: [] };
      }
      const previous = current.baseline === null ? null : (JSON.parse(current.baseline) as Baseline);
      const { fresh, baseline } = diff(previous, items, dedupe, config);
      const runIds: string[] = [];
      if (previous !== null) {
        const polledAt = new Date(started).toISOString();
        for (const item of fresh) {
          runIds.push(
            await this.o.runs.start(
              {
                workspaceId: current.workspace_id,
                workflowId: current.workflow_id,
                environment: "production",
                triggerType: "poll",
                triggerData: { body: item, polledAt },
              },
              unit,
            ),
          );
        }
      }
      const now = this.o.clock.now();
      await unit.triggers.polls.put({
        ...current,
        baseline: JSON.stringify(baseline),
        last_poll_at: started,
        last_success_at: started,
        failures: 0,
        last_error: null,
        next_poll_at: started + current.interval_seconds * 1000,
        updated_at: now,
      });
      return { workflowId: row.workflow_id, result: previous === null ? "baseline" : "fired", runIds };
    });
  }

  private async recordFailure(row: PollRow, started: number, message: string): Promise<PollOutcome> {
    // One unit with the read: an unpublish meanwhile (a unit too) is not undone by writing the row back.
    const failures = await this.o.storage.atomically(async (unit) => {
      const current = await unit.triggers.polls.get(row.workflow_id);
      if (!current) return null;
      const failures = current.failures + 1;
      const backoff = Math.min(this.o.maxBackoffMs ?? 3_600_000, current.interval_seconds * 1000 * 2 ** Math.min(failures, 20));
      await unit.triggers.polls.put({
        ...current,
        failures,
        last_error: message.slice(0, 2000),
        last_poll_at: started,
        next_poll_at: started + Math.max(backoff, current.interval_seconds * 1000),
        updated_at: this.o.clock.now(),
      });
      return failures;
    });
    if (failures === null) return { workflowId: row.workflow_id, result: "skipped", runIds: [], error: message };
    this.o.log.warn("poll failed", { workflowId: row.workflow_id, failures, error: message });
    return { workflowId: row.workflow_id, result: "failed", runIds: [], error: message };
  }

  /** Polls on a timer until `stop()`. */
  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.loop.stop();
    await this.turns.idle();
  }
}

/** New items relative to a baseline, and the baseline after them. */
export function diff(
  previous: Baseline | null,
  items: unknown[],
  dedupe: PollDedupe,
  config: Record<string, unknown>,
): { fresh: unknown[]; baseline: Baseline } {
  if (dedupe.strategy === "time") {
    const since = previous?.strategy === "time" ? previous.time : null;
    let newest = since;
    const fresh: unknown[] = [];
    for (const item of items) {
      const time = toMillis(dedupe.key(item, config));
      if (time === null) continue;
      if (since === null || time > since) fresh.push(item);
      if (newest === null || time > newest) newest = time;
    }
    return { fresh, baseline: { strategy: "time", time: newest } };
  }
  const seen = new Set(previous?.strategy === "id" ? previous.ids : []);
  const fresh: unknown[] = [];
  const current: Array<string | number> = [];
  for (const item of items) {
    const key = dedupe.key(item, config);
    current.push(key);
    if (!seen.has(key)) {
      fresh.push(item);
      seen.add(key);
    }
  }
  // Keep the ids of this response first: they are the ones the next response is most likely to repeat.
  const kept = [...new Set([...current, ...(previous?.strategy === "id" ? previous.ids : [])])].slice(0, MAX_SEEN_IDS);
  return { fresh, baseline: { strategy: "id", ids: kept } };
}

function toMillis(value: string | number): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`poll did not answer within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
