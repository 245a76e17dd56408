/**
 * Paused runs coming back: a delay's timer (re-armed after a restart, fired at once when due), an approval's
 * resume link (the token is the credential, compared in constant time) or its expiry. A resumed run is
 * queued again; it replays its recorded steps and continues the paused one with the payload.
 */
import { AppError } from "../http/errors";
import type { ClockTimer } from "../lib/clock";
import { safeEqual, sha256 } from "../lib/ids";
import type { RunT } from "../schema/run";
import type { PausedGuard } from "../store/run-claims";
import { type RunRow, runFromRow } from "../store/run-rows";
import { errorMessage } from "./invoke-action";
import type { PauseState, RunTable } from "./run-table";

export class Resumes {
  private readonly timers = new Map<string, ClockTimer>();

  constructor(private readonly t: RunTable) {}

  /** Arms the timer that resumes a paused run at `resumeAt`. */
  schedule(runId: string, resumeAt: string) {
    this.clear(runId);
    const clock = this.t.clock;
    const delay = Math.max(0, Date.parse(resumeAt) - clock.now());
    // setTimeout holds at most ~24.8 days; longer waits re-arm when the first timer fires.
    const timer = clock.setTimeout(
      () => {
        this.timers.delete(runId);
        if (Date.parse(resumeAt) > clock.now() + 1000) return this.schedule(runId, resumeAt);
        void this.resumeByTimer(runId).catch((error) => this.t.o.log.error("resume failed", { runId, error: errorMessage(error) }));
      },
      Math.min(delay, 2_000_000_000),
    );
    timer.unref();
    this.timers.set(runId, timer);
  }

  clear(runId: string) {
    const timer = this.timers.get(runId);
    this.t.clock.clearTimeout(timer);
    this.timers.delete(runId);
  }

  /** Shutdown: no timer fires any more (a restart re-arms them from the rows). */
  clearAll() {
    for (const timer of this.timers.values()) this.t.clock.clearTimeout(timer);
    this.timers.clear();
  }

  /** A resume link (approval) was opened: the token is the credential, compared in constant time. */
  async resumeByToken(runId: string, token: string, payload: Record<string, unknown>): Promise<RunT> {
    // In a cluster the pause must be stored before another instance's resume can be told from a second click.
    if (this.t.owner !== null) await this.t.writes.drain();
    const row = await this.t.rowNow(runId);
    const valid =
      row && row.status === "paused" && row.resume_mode === "webhook" && row.resume_token_hash !== null && safeEqual(row.resume_token_hash, sha256(token));
    if (!valid || !(await this.take(row, { tokenHash: row.resume_token_hash as string }))) {
      throw new AppError("NOT_FOUND", "no paused run waits for this link: it was already used, expired, or the run was cancelled");
    }
    this.clear(runId);
    await this.resume(row, payload);
    return runFromRow(row);
  }

  private async resumeByTimer(runId: string) {
    const row = await this.t.reads.getRow(runId);
    if (row?.status !== "paused" || !(await this.take(row, { owner: row.owner }))) return;
    // A time pause continues; an approval that nobody decided in time continues as expired.
    const payload = row.resume_mode === "webhook" ? { decision: "expired", expired: true } : { resumedBy: "timer" };
    await this.resume(row, payload);
  }

  /**
   * In a cluster a paused run may be resumed by any instance (a link opened on another one, a timer of an
   * instance that took the run over): the first to take it resumes it, here, and owns it from now on.
   */
  private async take(row: RunRow, guard: PausedGuard): Promise<boolean> {
    const me = this.t.instanceId;
    if (me === null) return true;
    if (!(await this.t.claims.takePaused(row.id, me, guard))) return false;
    row.owner = me;
    return true;
  }

  /** Queues a paused run again: it replays its recorded steps and resumes the paused one with `payload`. */
  private async resume(row: RunRow, payload: Record<string, unknown>) {
    const t = this.t;
    const state = row.state ? (JSON.parse(row.state) as PauseState) : { log: [], activeMs: 0 };
    const pending = await t.pendingOf(row, await t.definitionOf(row));
    row.status = "pending";
    row.resume_token_hash = null;
    row.event_seq++;
    const seq = row.event_seq;
    // The payload (an approval's decision) is kept with the state: the link works once, so a restart before the
    // resumed step finished must resume it with the same decision (recovery reads state.payload).
    row.state = JSON.stringify({ ...state, payload } satisfies PauseState);
    await t.settle(row, [{ op: "patchRun", id: row.id, patch: { status: "pending", resume_token_hash: null, event_seq: seq, state: row.state } }]);
    t.emitRun(row);
    t.queue.add({ ...pending, replay: state.log, resume: { payload }, activeMsBefore: state.activeMs });
  }
}
