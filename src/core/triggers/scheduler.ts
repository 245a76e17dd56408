/**
 * The scheduler: cron and fixed-interval triggers of live workflows.
 *
 * Each live schedule is one row holding its next scheduled instant (epoch ms). A tick finds the due
 * rows and, for each, moves the row past the instant it held AND inserts the run in one
 * transaction. So an instant is fired exactly once: a crash before the commit fires it after the
 * restart, a crash after the commit never fires it again. Republishing an unchanged schedule keeps
 * the stored instant (no second run for an instant already fired); unpublish deletes the row, so a
 * paused workflow is skipped from that moment. Instants missed while the server was down are
 * coalesced into one run at start-up (`missedInstants` tells how many were skipped for `every`).
 * Instances sharing a PostgreSQL database all tick; the write that moves (or deletes) the row is the
 * compare-and-set: the units of the storage port take turns across the cluster, so the second instance finds
 * the instant gone and fires nothing.
 * A tick never overlaps the one before it: a second call waits for the first to end.
 */
import { InTurn } from "../../lib/in-turn";
import type { Logger } from "../../http/logger";
import type { Storage } from "../../store/port";
import type { ScheduleRow } from "../../store/triggers";
import type { Clock } from "../../lib/clock";
import { DueLoop } from "./due-loop";
import { nextFireAfter, specFromKey, type ScheduleSpec } from "./schedule-spec";
import type { TriggerRunStarter, TriggerWorkflows } from "./ports";

export interface FiredSchedule {
  workflowId: string;
  runId: string;
  scheduledAt: string;
}

/** Told of each instant fired (/metrics). */
export interface ScheduleObserver {
  /** `lateSeconds`: how long after its planned instant the schedule fired, by the scheduler's clock. */
  scheduleFired(lateSeconds: number): void;
}

export interface SchedulerOptions {
  storage: Storage;
  clock: Clock;
  workflows: TriggerWorkflows;
  runs: TriggerRunStarter;
  log: Logger;
  /** Longest sleep between two checks of the due rows (a publish may add an earlier instant). */
  maxSleepMs?: number;
  observer?: ScheduleObserver;
}

const BATCH = 200;

export class Scheduler {
  /** Ticks one at a time. */
  private readonly turns = new InTurn();
  private readonly loop: DueLoop;

  constructor(private readonly o: SchedulerOptions) {
    this.loop = new DueLoop({
      tick: () => this.tick(),
      nextDue: () => o.storage.triggers.schedules.nextAt(),
      maxSleepMs: o.maxSleepMs ?? 1000,
      clock: o.clock,
      log: o.log,
      messages: { tickFailed: "scheduler tick failed", readFailed: "scheduler could not read its next instant; looking again shortly" },
    });
  }

  /** Publish: start (or keep) the schedule of a live version. */
  /** `within`: the unit to write in (its `atomically` joins it); by default one of its own. */
  async enable(workflowId: string, workspaceId: string, versionId: string, spec: ScheduleSpec, within: Storage = this.o.storage): Promise<void> {
    // One unit: the row written back keeps an instant another instance's tick moved meanwhile (it fires in a unit too).
    await within.atomically(async (unit) => {
      const store = unit.triggers;
      const now = this.o.clock.now();
      const existing = await store.schedules.get(workflowId);
      // Same schedule republished: keep the stored instant so an instant already fired is not fired again.
      if (existing && existing.spec === spec.key) {
        // Unchanged (the start-up reconcile re-enables every live schedule): nothing to write, no fsync.
        if (existing.version_id === versionId && existing.workspace_id === workspaceId) return;
        await store.schedules.put({ ...existing, version_id: versionId, workspace_id: workspaceId, updated_at: now });
        return;
      }
      const next = nextFireAfter(spec, now);
      if (next === null) {
        await store.schedules.delete(workflowId);
        return;
      }
      await store.schedules.put({
        workflow_id: workflowId,
        workspace_id: workspaceId,
        version_id: versionId,
        spec: spec.key,
        next_fire_at: next,
        last_fired_at: existing?.last_fired_at ?? null,
        last_run_id: existing?.last_run_id ?? null,
        updated_at: now,
      });
    });
  }

  /** Unpublish (or a live version that is no longer a schedule): nothing fires from now on. */
  async disable(workflowId: string, within: Storage = this.o.storage): Promise<void> {
    // A unit: an enable on another instance meanwhile (a unit, read then written) does not bring the row back.
    await within.atomically((unit) => unit.triggers.schedules.delete(workflowId));
  }

  async status(workflowId: string): Promise<{ nextFireAt: string; lastFiredAt: string | null; lastRunId: string | null; schedule: string } | null> {
    const row = await this.o.storage.triggers.schedules.get(workflowId);
    if (!row) return null;
    return {
      nextFireAt: iso(row.next_fire_at),
      lastFiredAt: row.last_fired_at === null ? null : iso(row.last_fired_at),
      lastRunId: row.last_run_id,
      schedule: row.spec,
    };
  }

  /** Fires every due schedule once, after the tick under way if there is one. Tests call it after moving a fake clock. */
  tick(): Promise<FiredSchedule[]> {
    return this.turns.run(() => this.fireDue());
  }

  private async fireDue(): Promise<FiredSchedule[]> {
    const store = this.o.storage.triggers;
    const fired: FiredSchedule[] = [];
    for (;;) {
      const now = this.o.clock.now();
      const due = await store.schedules.due(now, BATCH);
      for (const row of due) {
        try {
          const result = await this.fire(row, now);
          if (result) {
            fired.push(result);
            this.o.observer?.scheduleFired(Math.max(0, now - row.next_fire_at) / 1000);
          }
        } catch (error) {
          // One broken schedule must not stop the others; it is retried on the next tick.
          // Its instant is skipped (never retried every second): the next instant fires as usual.
          this.o.log.error("schedule could not start a run; the instant is skipped", {
            workflowId: row.workflow_id,
            scheduledAt: iso(row.next_fire_at),
            error: (error as Error).message,
          });
          const next = nextInstantAfter(specFromKey(row.spec), row.next_fire_at, now);
          if (next === null) await store.schedules.delete(row.workflow_id);
          else await store.advanceSchedule(row.workflow_id, row.next_fire_at, next, now, null);
        }
      }
      if (due.length < BATCH) return fired;
    }
  }

  private fire(row: ScheduleRow, now: number): Promise<FiredSchedule | null> {
    const spec = specFromKey(row.spec);
    const instant = row.next_fire_at;
    const next = nextInstantAfter(spec, instant, now);
    return this.o.storage.atomically(async (unit): Promise<FiredSchedule | null> => {
      const store = unit.triggers;
      const live = await this.o.workflows.live(row.workflow_id, store);
      if (!live) {
        // Not live any more (unpublished or deleted without the hook): nothing fires.
        await store.schedules.delete(row.workflow_id);
        return null;
      }
      // The last instant of a schedule: whoever deletes the row fires it.
      if (next === null) {
        if (!(await store.schedules.delete(row.workflow_id))) return null;
      } else if (!(await store.advanceSchedule(row.workflow_id, instant, next, now, null))) return null;
      const triggerData: Record<string, unknown> = { body: {}, scheduledAt: iso(instant), firedAt: iso(now) };
      if (spec.kind === "cron") Object.assign(triggerData, { expression: spec.pattern, timezone: spec.timezone });
      else {
        Object.assign(triggerData, { everySeconds: spec.everySeconds });
        const missed = Math.floor((now - instant) / (spec.everySeconds * 1000));
        if (missed > 0) triggerData.missedInstants = missed;
      }
      const runId = await this.o.runs.start(
        { workspaceId: live.workspaceId, workflowId: row.workflow_id, environment: "production", triggerType: "cron", triggerData },
        unit,
      );
      if (next !== null) await store.setScheduleRun(row.workflow_id, runId);
      return { workflowId: row.workflow_id, runId, scheduledAt: iso(instant) };
    });
  }

  /** Runs `tick` on a timer until `stop()`. */
  start(): void {
    this.loop.start();
  }

  /** Stops the timer; resolves once the tick under way (if any) has ended. */
  async stop(): Promise<void> {
    this.loop.stop();
    await this.turns.idle();
  }
}

/** The first instant after `now` that follows `instant` (missed instants are skipped). */
function nextInstantAfter(spec: ScheduleSpec, instant: number, now: number): number | null {
  if (spec.kind === "every") {
    const step = spec.everySeconds * 1000;
    return instant + step * (Math.floor(Math.max(0, now - instant) / step) + 1);
  }
  return nextFireAfter(spec, Math.max(instant, now));
}

const iso = (ms: number) => new Date(ms).toISOString();
