/**
 * Waiting for runs: `?wait=` on the Runs API, a sub-flow call that waits for its child, a synchronous
 * webhook waiting for `webhook.respond` (or the run's end), and the freshest view of a run meanwhile.
 * A run that ended lately answers from memory (RunTable.recent) with its step rows; a run whose end is
 * still being committed is waited for, so what a waiter reads is always committed.
 */
import type { RunT } from "../schema/run";
import { type RunRow, runFromRow, type StepRow, stepFromRow } from "../store/runs";
import { FINISHED, type RunTable } from "./run-table";
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

export class Waiters {
  constructor(private readonly t: RunTable) {}

  /** The freshest row of a run of `workspaceId` (in memory while it executes), or null. */
  row(workspaceId: string, runId: string): RunRow | null {
    const row = this.t.rowNow(runId);
    return row && row.workspace_id === workspaceId ? row : null;
  }

  /** The run as it stands now (in-memory when executing). */
  current(runId: string): RunT | null {
    const row = this.t.rowNow(runId);
    return row ? runFromRow(row) : null;
  }

  /** The value a run's `subflows.return_response` step set (null when none), e.g. for callable tools. */
  responseOf(runId: string): unknown {
    const text = this.t.rowNow(runId)?.response;
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
    return { ...run, steps: (steps ?? this.t.store.steps(runId)).map(stepFromRow) };
  }

  /** The run's row when it finished within `ms`, else its row as it stands (null when unknown). */
  async waitForRow(runId: string, ms: number, signal?: AbortSignal): Promise<RunRow | null> {
    return (await this.waitForEnd(runId, ms, signal)).row;
  }

  /** Like waitForRow; when the run ended while waiting, also its step rows as held in memory. */
  private waitForEnd(runId: string, ms: number, signal?: AbortSignal): Promise<{ row: RunRow | null; steps?: StepRow[] }> {
    const t = this.t;
    const row = t.rowNow(runId);
    // A run whose end is still being committed is waited for: its step rows are not all readable yet. A caller
    // aborted already (a cancel that came while it was starting the run it waits for) waits for nothing: an
    // aborted signal never fires "abort" again.
    if (!row || (FINISHED.has(row.status) && !t.settling.has(runId)) || ms <= 0 || signal?.aborted) {
      const recent = t.recent.get(runId);
      return Promise.resolve({ row, steps: recent && recent.row === row ? recent.steps : undefined });
    }
    return new Promise((resolve) => {
      const set = waitersOf(t.endWaiters, runId);
      const done = (finished: RunRow | null, steps?: StepRow[]) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set.delete(waiter);
        if (set.size === 0 && t.endWaiters.get(runId) === set) t.endWaiters.delete(runId);
        resolve({ row: finished ?? t.rowNow(runId), steps });
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
  waitForReply(runId: string, ms: number): Promise<{ reply?: WebhookReply; run: RunT | null; timedOut: boolean }> {
    const t = this.t;
    // With a reply the caller rarely needs the run: it is read (from the database, once the run ended) only when asked for.
    const current = () => this.current(runId);
    const withReply = (reply: WebhookReply) => ({
      reply,
      timedOut: false,
      get run() {
        return current();
      },
    });
    t.awaitingReply.delete(runId);
    const early = t.replies.get(runId);
    if (early) {
      t.replies.delete(runId);
      return Promise.resolve(withReply(early));
    }
    const row = t.rowNow(runId);
    // On an `api` instance the worker's reply may still be on the bus although the database already shows the end.
    if (!row || (FINISHED.has(row.status) && !t.endedLately(row))) return Promise.resolve({ run: row ? runFromRow(row) : null, timedOut: false });
    return new Promise((resolve) => {
      const replySet = waitersOf(t.replyWaiters, runId);
      const endSet = waitersOf(t.endWaiters, runId);
      const cleanup = () => {
        clearTimeout(timer);
        replySet.delete(onReply);
        endSet.delete(onEnd);
        if (replySet.size === 0 && t.replyWaiters.get(runId) === replySet) t.replyWaiters.delete(runId);
        if (endSet.size === 0 && t.endWaiters.get(runId) === endSet) t.endWaiters.delete(runId);
      };
      const onReply = (reply: WebhookReply) => {
        cleanup();
        resolve(withReply(reply));
      };
      const onEnd = (finished: RunRow) => {
        cleanup();
        resolve({ run: runFromRow(finished), timedOut: false });
      };
      const timer = setTimeout(() => {
        cleanup();
        resolve({ run: this.current(runId), timedOut: true });
      }, ms);
      replySet.add(onReply);
      endSet.add(onEnd);
    });
  }

  /** A step replied to the webhook that started its run: its waiter gets it, or it is kept for the starter. */
  deliverReply(runId: string, reply: WebhookReply) {
    const t = this.t;
    const waiters = t.replyWaiters.get(runId);
    if (waiters) {
      t.replyWaiters.delete(runId);
      for (const waiter of waiters) waiter(reply);
    } else if (t.awaitingReply.has(runId) && !t.replies.has(runId)) {
      t.replies.set(runId, reply);
    }
    for (const listener of t.replyListeners) listener(runId, reply);
  }
}
