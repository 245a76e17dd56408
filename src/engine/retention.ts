/**
 * Keeps the database from growing without bound (n8n users report SQLite and WAL files that never
 * shrink): finished runs older than WEFT_RUN_RETENTION_DAYS, and the oldest beyond WEFT_RUN_RETENTION_MAX
 * per workspace, are deleted with their steps in short transactions (a workflow's own `retentionDays` /
 * `retentionMaxRuns` settings replace these for its runs); freed pages go back to the file system with
 * incremental vacuum; the WAL is checkpointed and truncated.
 */
import type { Logger } from "../http/logger";
import { type Clock, type ClockTimer, systemClock } from "../lib/clock";
import type { RunRetentionRepository } from "../store/run-retention";
import type { RunWrites } from "../store/run-writes";
import type { RunPosition } from "../store/run-rows";

/** A workflow's own retention (its saved definition's settings), replacing the instance's for its runs. */
export interface RetentionOverride {
  workflowId: string;
  /** 0 keeps its runs of any age. */
  days?: number;
  /** 0 keeps any number of its runs; set (even to 0), its runs leave the workspace's cap. */
  maxRuns?: number;
}

export interface RetentionOptions {
  /**
   * The storage port's questions about runs (which expire, where the unfinished ones stand, free pages), each
   * awaited: on a database across a network a sweep holds no thread. Never written through here.
   */
  runs: RunRetentionRepository;
  /**
   * The run writer: deletions, the definitions' prune, the incremental vacuum and the WAL truncation go
   * through it, ordered with run inserts (a run is never stored pointing at a definition just pruned) and,
   * with the writer thread, off the main thread (its commits and their checkpoints never stall requests).
   */
  writes: RunWrites;
  log: Logger;
  /** Told which runs were deleted (the engine forgets what it holds of them). */
  onDeleted?: (ids: string[]) => void;
  /** 0 keeps runs of any age. */
  retentionDays: number;
  /** Runs kept per workspace; 0 keeps any number. */
  retentionMax: number;
  /** Workflows with their own settings, read at each sweep. */
  overrides?: () => Promise<RetentionOverride[]>;
  /** How long one delete transaction may hold the write lock, ms (default 20): batches grow or shrink to fit. */
  transactionMs?: number;
  /** How often a sweep runs, ms (default 10 minutes). */
  intervalMs?: number;
  /** What "older than" is measured by and what times the sweeps (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

export interface SweepResult {
  deletedRuns: number;
  freedPages: number;
  walCheckpointed: boolean;
}

const DAY_MS = 86_400_000;
/** Every this many sweeps each drain starts from the oldest run again (see Retention.places). */
const RESTART_EVERY = 12;
/** Pages returned per incremental-vacuum step at first (a step moves pages from the end of the file, whose cost varies: start small); adapts like the batches. */
const FIRST_VACUUM_STEP = 64;

export class Retention {
  private timer: ClockTimer | undefined;
  /** The sweep under way, if any: one at a time, and stop() waits for it. */
  private running: Promise<SweepResult> | undefined;
  private stopped = false;
  /** Runs per delete transaction; adapts to `transactionMs`. */
  private batch = 100;
  private vacuumStep = FIRST_VACUUM_STEP;
  /**
   * Where each drain of the last sweep stopped (by workflow and rule, or by workspace), so the next sweep looks
   * from there instead of from the oldest run: on PostgreSQL the index entries of the runs just deleted stay
   * until a vacuum, and each sweep's first look-ups walked all of them (1,000,000 deleted runs: 300–700 ms
   * per workflow, on the thread that answers requests). A place is never after a run that was unfinished when
   * its sweep began (such a run was passed over and must be looked at again), and all are forgotten every
   * RESTART_EVERY sweeps, so nothing is passed over for good.
   */
  private readonly places = new Map<string, RunPosition>();
  private sweeps = 0;

  private readonly clock: Clock;

  constructor(private readonly o: RetentionOptions) {
    this.clock = o.clock ?? systemClock;
  }

  /**
   * Switches the database to incremental auto-vacuum once (needs a VACUUM; quick on a young database).
   * A large database that predates it is left alone with a hint in the log, since VACUUM would stall it.
   */
  async ensureIncrementalVacuum(maxBytes = 256 * 1024 * 1024): Promise<boolean> {
    const { enabled, bytes, hint } = await this.o.runs.ensureIncrementalVacuum(maxBytes);
    if (!enabled) {
      this.o.log.warn(`database is not in incremental auto-vacuum mode${hint ? `; ${hint}` : ""}`, { bytes });
    }
    return enabled;
  }

  start() {
    this.stopped = false;
    const interval = this.o.intervalMs ?? 10 * 60_000;
    // Re-armed after each turn on the clock (not setInterval), so a test's clock advanced by `interval` sweeps.
    const next = () => {
      if (this.stopped) return;
      this.timer = this.clock.setTimeout(() => {
        void this.sweep().catch((error) => this.o.log.error("run retention failed", { error: String(error) }));
        next();
      }, interval);
      this.timer.unref();
    };
    next();
  }

  /** Stops the sweeps; resolves once a sweep under way ended (it stops after the batch it is deleting). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    // Its failure was answered to whoever started it (logged, for the timer's).
    await this.running?.catch(() => {});
  }

  /**
   * Deletes expired runs (by age, then by count) in short transactions with pauses between them, so run
   * writes and API reads go on while a large history is pruned; then returns the freed pages to the file
   * system step by step and truncates the WAL.
   */
  sweep(now = this.clock.now()): Promise<SweepResult> {
    if (this.running) return Promise.resolve({ deletedRuns: 0, freedPages: 0, walCheckpointed: false });
    const running = this.sweeping(now).finally(() => {
      this.running = undefined;
    });
    this.running = running;
    return running;
  }

  private async sweeping(now: number): Promise<SweepResult> {
    const own = new Map(((await this.o.overrides?.()) ?? []).map((o) => [o.workflowId, o]));
    const store = this.o.runs;
    if (++this.sweeps % RESTART_EVERY === 0) this.places.clear();
    // Read before any look-up: a run unfinished now may be passed over below and finish meanwhile.
    const unfinished = await store.unfinishedPositions();
    const firstUnfinished = (inScope: (run: (typeof unfinished)[number]) => boolean) => earliest(unfinished.filter(inScope));
    let deleted = 0;
    for (const { workflowId } of await store.runCountsByWorkflow()) {
      const days = own.get(workflowId)?.days ?? this.o.retentionDays;
      if (days <= 0) continue;
      const before = new Date(now - days * DAY_MS).toISOString();
      deleted += await this.drain(
        `age ${workflowId}`,
        firstUnfinished((run) => run.workflowId === workflowId),
        (limit, after) => store.oldestFinishedOf(workflowId, limit, before, after),
      );
    }
    const counts = await store.runCountsByWorkflow();
    for (const { workflowId, runs } of counts) {
      const max = own.get(workflowId)?.maxRuns ?? 0;
      if (max > 0 && runs > max)
        deleted += await this.drain(
          `count ${workflowId}`,
          firstUnfinished((run) => run.workflowId === workflowId),
          (limit, after) => store.oldestFinishedOf(workflowId, limit, undefined, after),
          runs - max,
        );
    }
    if (this.o.retentionMax > 0) {
      for (const [workspaceId, workflows] of Map.groupBy(counts, (c) => c.workspaceId)) {
        const capped = workflows.filter((w) => own.get(w.workflowId)?.maxRuns === undefined);
        const excess = capped.reduce((sum, w) => sum + w.runs, 0) - this.o.retentionMax;
        if (excess <= 0) continue;
        const exempt = workflows.filter((w) => !capped.includes(w)).map((w) => w.workflowId);
        deleted += await this.drain(
          `workspace ${workspaceId} except ${[...exempt].sort().join(",")}`,
          firstUnfinished((run) => run.workspaceId === workspaceId && !exempt.includes(run.workflowId)),
          (limit, after) => store.oldestFinishedIn(workspaceId, exempt, limit, after),
          excess,
        );
      }
    }
    if (deleted > 0) await this.o.writes.write([{ op: "pruneDefinitions" }]);
    const free = await this.returnFreePages();
    // False when a reader holds the WAL (busy): the next sweep truncates it.
    const walCheckpointed = deleted > 0 || free > 0 ? await this.o.writes.truncateWal() : true;
    if (deleted > 0) this.o.log.info("run retention", { deletedRuns: deleted, freedPages: free });
    return { deletedRuns: deleted, freedPages: free, walCheckpointed };
  }

  /**
   * Deletes the runs `next` names, batch by batch, up to `max`. Each batch is one transaction sized to hold the
   * write lock about `transactionMs`; after it, the sweep waits as long as the batch took, so the run writer
   * and the API get at least half of the time. Each batch is looked for after the last one's last run: on
   * PostgreSQL the index entries of deleted runs stay until a vacuum, and looking from the start again read
   * all of them each time (1,000,000 runs: 175 s to prune instead of 58 s). The first batch is looked for
   * where the last sweep's drain of the same `place` stopped, or at `unfinished` (the oldest run of the scope
   * that was unfinished when this sweep began) if that comes first.
   */
  private async drain(
    place: string,
    unfinished: RunPosition | undefined,
    next: (limit: number, after: RunPosition | undefined) => Promise<RunPosition[]>,
    max = Number.POSITIVE_INFINITY,
  ): Promise<number> {
    // Never past the run that was unfinished when the sweep began: kept so, a place stays valid once it ends.
    const placed = (last: RunPosition) => (unfinished && before(unfinished, last) ? justBefore(unfinished) : last);
    const stored = this.places.get(place);
    let after = stored && placed(stored);
    if (after) this.places.set(place, after);
    let done = 0;
    while (done < max && !this.stopped) {
      const started = performance.now();
      const limit = Math.min(this.batch, max - done);
      const found = await next(limit, after);
      const lookedMs = performance.now() - started;
      if (found.length === 0) break;
      const ids = found.map((run) => run.id);
      await this.o.writes.write([{ op: "deleteRuns", ids }]);
      after = found[found.length - 1]!;
      this.places.set(place, placed(after));
      this.o.onDeleted?.(ids);
      done += ids.length;
      const ms = performance.now() - started;
      // The look-up is a transaction of its own (on SQLite it blocks this thread; the delete does not): a batch
      // is also kept small enough for it to stay at a fraction of the target (on PostgreSQL a big one read the
      // table pages of 10,000 runs: 180 ms).
      if (ids.length === limit) this.batch = this.adapt(this.batch, Math.max(ms, 4 * lookedMs), 10, 10_000);
      await Bun.sleep(Math.max(1, ms));
    }
    return done;
  }

  /** Incremental vacuum in steps of about `transactionMs`, pausing between them like the deletes. */
  private async returnFreePages(): Promise<number> {
    let returned = 0;
    while (!this.stopped) {
      const started = performance.now();
      const free = await this.o.runs.freePages();
      if (free === 0) break;
      const pages = Math.min(free, this.vacuumStep);
      await this.o.writes.write([{ op: "returnFreePages", pages }]);
      // Not in incremental auto-vacuum mode (an old large database): nothing is returned.
      if ((await this.o.runs.freePages()) >= free) break;
      returned += pages;
      const ms = performance.now() - started;
      if (pages === this.vacuumStep) this.vacuumStep = this.adapt(this.vacuumStep, ms, 64, 262_144);
      await Bun.sleep(Math.max(1, ms));
    }
    return returned;
  }

  /** Doubles a step that took under half the target, halves one that took over one and a half. */
  private adapt(size: number, ms: number, min: number, max: number): number {
    const target = this.o.transactionMs ?? 20;
    if (ms < target / 2) return Math.min(max, size * 2);
    if (ms > target * 1.5) return Math.max(min, Math.floor(size / 2));
    return size;
  }
}

/** Whether `a` comes before `b` in start order (started_at, then the store's tie). */
const before = (a: RunPosition, b: RunPosition) => a.startedAt < b.startedAt || (a.startedAt === b.startedAt && a.tie < b.tie);

/** A position from which a look-up includes `run` (and any run started in the same millisecond). */
const justBefore = (run: RunPosition): RunPosition => ({ startedAt: run.startedAt, id: "", tie: "" });

/** The first of `runs` in start order. */
function earliest(runs: RunPosition[]): RunPosition | undefined {
  let first: RunPosition | undefined;
  for (const run of runs) if (!first || before(run, first)) first = run;
  return first;
}
