/**
 * Waiting for runs: `?wait=` on the Runs API, a sub-flow call that waits for its child, a synchronous
 * webhook waiting for `webhook.respond` (or the run's end), and the freshest view of a run meanwhile.
 * A run that ended lately answers from memory (RunTable.recentlyEnded) with its step rows; a run whose end is
 * still being committed is waited for, so what a waiter reads is always committed.
 */
import type { RunT } from "../schema/run";
import { type RunRow, runFromRow, type StepRow, stepFromRow } from "../store/run-rows";
import { BoundedMap } from "../lib/bounded-map";
import { BUS_GRACE_MS, FINISHED, RECENT_RUNS, type RunTable } from "./run-table";
import type { WebhookReply } from "./step-context";

/** A set of waiters in a map by run id, created on first use; the caller removes it when it empties. */
function waitersOf<T>(map: Map<string, Set<T>>, runId: string): Set<T> {
  let set = map.get(runId);
  if (!set) {
    set = new Set();
    map.set(runId, set);
  }
  return set;
}

/**
 * What a synchronous webhook's wait ends with. `run` is read only when asked for (with a reply the caller
 * rarely needs it): from memory, or the database once the run ended.
 */
export interface ReplyResult {
  reply?: WebhookReply;
  run: Promise<RunT | null> | RunT | null;
  timedOut: boolean;
}

export class Waiters {
  /** Whoever waits for a run's end (`?wait=`, a sub-flow call, a synchronous webhook), by run: runEnded calls them. */
  private readonly endWaiters = new Map<string, Set<(row: RunRow, steps?: StepRow[]) => void>>();
  private readonly replyWaiters = new Map<string, Set<(reply: WebhookReply) => void>>();
  /**
   * Replies of runs whose starter will ask for them (a synchronous webhook), kept from the moment the step
   * replies until the starter collects them: a fast run replies before its start is even committed. Nobody
   * else's reply is kept.
   */
  private readonly replies = new Map<string, WebhookReply>();
  private readonly awaitingReply = new Set<string>();
  private readonly replyListeners: Array<(runId: string, reply: WebhookReply) => void> = [];
  /** Runs executed elsewhere whose end notice arrived (everything they sent before it has too). */
  private readonly endNoticed = new BoundedMap<string, true>(RECENT_RUNS);

  constructor(private readonly t: RunTable) {}

  /** Called when a step replies to the webhook that started its run (webhook.respond). */
  onReply(listener: (runId: string, reply: WebhookReply) => void) {
    this.replyListeners.push(listener);
  }

  /** The run ended (its end is committed, or read from the database when it ended elsewhere): its end waiters get it. */
  runEnded(row: RunRow, steps?: StepRow[]) {
    const waiters = this.endWaiters.get(row.id);
    if (!waiters) return;
    this.endWaiters.delete(row.id);
    for (const waiter of waiters) waiter(row, steps);
  }

  /** True when someone here waits for the run's end. */
  waitsForEnd(runId: string): boolean {
    return this.endWaiters.has(runId);
  }

  /** The runs someone here waits for the end of. */
  runsWaitedFor(): string[] {
    return [...this.endWaiters.keys()];
  }

  /** True when someone here waits for the run's webhook reply, or its starter will ask for it. */
  wantsReply(runId: string): boolean {
    return this.replyWaiters.has(runId) || this.awaitingReply.has(runId);
  }

  /** A cluster: the end notice of a run executed elsewhere arrived over the bus. */
  noticeEnd(runId: string) {
    this.endNoticed.set(runId, true);
  }

  /** A run executed elsewhere that ended so lately that its notices may still be on the bus (BUS_GRACE_MS). */
  endedLately(row: RunRow): boolean {
    if (this.t.executes || row.finished_at === null || this.endNoticed.has(row.id)) return false;
    return this.t.clock.now() - Date.parse(row.finished_at) < BUS_GRACE_MS;
  }

  /** The freshest row of a run of `workspaceId` (in memory while it executes), or null. */
  async row(workspaceId: string, runId: string): Promise<RunRow | null> {
    const row = await this.t.rowNow(runId);
    return row && row.workspace_id === workspaceId ? row : null;
  }

  /** The run as it stands now (in-memory when executing). */
  async current(runId: string): Promise<RunT | null> {
    const row = await this.t.rowNow(runId);
    return row ? runFromRow(row) : null;
  }

  /** The value a run's `subflows.return_response` step set (null when none), e.g. for callable tools. */
  async responseOf(runId: string): Promise<unknown> {
    const text = (await this.t.rowNow(runId))?.response;
    return text === null || text === undefined ? null : JSON.parse(text);
  }

  /** Waits up to `ms` for the run to finish; returns it finished, or as it stands. */
  async waitFor(runId: string, ms: number): Promise<RunT | null> {
    const row = await this.waitForRow(runId, ms);
    return row ? runFromRow(row) : null;
  }

  /** Waits up to `ms`; a run that finished comes with its steps in execution order. */
  async waitForResult(workspaceId: string, runId: string, ms: number): Promise<RunT | null> {
    const { row, steps } = await this.waitForEnd(runId, ms);
    if (!row || row.workspace_id !== workspaceId) return null;
    const run = runFromRow(row);
    if (!FINISHED.has(row.status)) return run;
    return { ...run, steps: (steps ?? (await this.t.reads.steps(runId))).map(stepFromRow) };
  }

  /** The run's row when it finished within `ms`, else its row as it stands (null when unknown). */
  async waitForRow(runId: string, ms: number, signal?: AbortSignal): Promise<RunRow | null> {
    return (await this.waitForEnd(runId, ms, signal)).row;
  }

  /** Like waitForRow; when the run ended while waiting, also its step rows as held in memory. */
  private async waitForEnd(runId: string, ms: number, signal?: AbortSignal): Promise<{ row: RunRow | null; steps?: StepRow[] }> {
    const t = this.t;
    // Not held here: the stored row. A run held elsewhere that ends meanwhile is noticed by the cluster's
    // links (its end notice, or their look once a second) once this waiter is registered.
    const row = t.rowInMemory(runId) ?? (await t.reads.getRow(runId));
    // A run whose end is still being committed is waited for: its step rows are not all readable yet. A caller
    // aborted already (a cancel that came while it was starting the run it waits for) waits for nothing: an
    // aborted signal never fires "abort" again.
    if (!row || (FINISHED.has(row.status) && !t.isSettling(runId)) || ms <= 0 || signal?.aborted) {
      const recent = t.recentlyEnded(runId);
      return { row, steps: recent && recent.row === row ? recent.steps : undefined };
    }
    return new Promise((resolve) => {
      const set = waitersOf(this.endWaiters, runId);
      const done = (finished: RunRow | null, steps?: StepRow[]) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set.delete(waiter);
        if (set.size === 0 && this.endWaiters.get(runId) === set) this.endWaiters.delete(runId);
        if (finished) resolve({ row: finished, steps });
        else resolve(t.rowNow(runId).then((now) => ({ row: now })));
      };
      const waiter = (finished: RunRow, steps?: StepRow[]) => done(finished, steps);
      const onAbort = () => done(null);
      const timer = setTimeout(() => done(null), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(waiter);
    });
  }

  /**
   * For synchronous webhooks: resolves with the first `webhook.respond` reply, or with the run when it
   * ends without one, or with `timedOut` after `ms`.
   */
  waitForReply(runId: string, ms: number): Promise<ReplyResult> {
    const t = this.t;
    const current = () => this.current(runId);
    const withReply = (reply: WebhookReply): ReplyResult => ({
      reply,
      timedOut: false,
      get run() {
        return current();
      },
    });
    this.awaitingReply.delete(runId);
    const early = this.replies.get(runId);
    if (early) {
      this.replies.delete(runId);
      return Promise.resolve(withReply(early));
    }
    const held = t.rowInMemory(runId);
    // On an `api` instance the worker's reply may still be on the bus although the database already shows the end.
    if (held && FINISHED.has(held.status) && !this.endedLately(held)) return Promise.resolve({ run: runFromRow(held), timedOut: false });
    return new Promise((resolve) => {
      // Registered before anything is awaited: a reply or end that comes meanwhile is not missed.
      const replySet = waitersOf(this.replyWaiters, runId);
      const endSet = waitersOf(this.endWaiters, runId);
      const cleanup = () => {
        clearTimeout(timer);
        replySet.delete(onReply);
        endSet.delete(onEnd);
        if (replySet.size === 0 && this.replyWaiters.get(runId) === replySet) this.replyWaiters.delete(runId);
        if (endSet.size === 0 && this.endWaiters.get(runId) === endSet) this.endWaiters.delete(runId);
      };
      let settled = false;
      const settle = (result: ReplyResult) => {
        if (settled) return;
        settled = true;
        cleanup();
        resolve(result);
      };
      const onReply = (reply: WebhookReply) => settle(withReply(reply));
      const onEnd = (finished: RunRow) => settle({ run: runFromRow(finished), timedOut: false });
      const timer = setTimeout(() => settle({ run: current(), timedOut: true }), ms);
      replySet.add(onReply);
      endSet.add(onEnd);
      if (held) return;
      // Not held here: unknown, or stored already ended (then there is nothing to wait for), or held elsewhere.
      t.reads.getRow(runId).then(
        (row) => {
          if (!row) settle({ run: null, timedOut: false });
          else if (FINISHED.has(row.status) && !this.endedLately(row)) settle({ run: runFromRow(row), timedOut: false });
        },
        () => {}, // the timeout answers
      );
    });
  }

  /**
   * The starter of `runId` (a synchronous webhook) will ask for its reply: one that comes first is kept for it.
   * `false`: it no longer will (its insert failed), and a reply kept is dropped.
   */
  expectReply(runId: string, expect: boolean) {
    if (expect) this.awaitingReply.add(runId);
    else {
      this.awaitingReply.delete(runId);
      this.replies.delete(runId);
    }
  }

  /** A step replied to the webhook that started its run: its waiter gets it, or it is kept for the starter. */
  deliverReply(runId: string, reply: WebhookReply) {
    const waiters = this.replyWaiters.get(runId);
    if (waiters) {
      this.replyWaiters.delete(runId);
      for (const waiter of waiters) waiter(reply);
    } else if (this.awaitingReply.has(runId) && !this.replies.has(runId)) {
      this.replies.set(runId, reply);
    }
    for (const listener of this.replyListeners) listener(runId, reply);
  }
}
