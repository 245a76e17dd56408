/**
 * What a cron-type trigger node describes, validated: a croner pattern (5 or 6 fields) in a time
 * zone, or a fixed interval. Used by the scheduler at publish and by the gate for diagnostics.
 * A schedule that fires more often than the minimum interval (WEFT_SCHEDULE_MIN_INTERVAL,
 * default 60 s) is refused, naming the shortest gap it would produce.
 */
import { Cron } from "croner";
import { cronZone, timeZoneProblem } from "../../pieces-sdk/time-zone";
import type { PieceRegistry } from "../../pieces-runtime/registry";

export type ScheduleSpec = { kind: "cron"; pattern: string; timezone: string; key: string } | { kind: "every"; everySeconds: number; key: string };

export class ScheduleError extends Error {}

interface TriggerNodeLike {
  type: string;
  pieceId?: string;
  actionId?: string;
  config?: Record<string, unknown>;
}

/** Is this trigger node a schedule (a `cron` kind trigger)? */
export const isScheduleTrigger = (node: TriggerNodeLike | undefined): boolean => node?.type === "cron";

export function compileCron(pattern: string, timezone: string): Cron {
  const zoneProblem = timeZoneProblem(timezone);
  if (zoneProblem) throw new ScheduleError(zoneProblem);
  const fields = pattern.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw new ScheduleError(
      `cron expression "${pattern}" has ${fields} fields; use 5 (minute hour day month weekday) or 6 (second first), e.g. "*/15 * * * *"`,
    );
  }
  try {
    return new Cron(pattern.trim(), { ...cronZone(timezone), paused: true, mode: "5-or-6-parts" });
  } catch (error) {
    throw new ScheduleError(`cron expression "${pattern}" is not valid (${(error as Error).message}); use 5 or 6 fields, e.g. "0 9 * * 1-5"`);
  }
}

/**
 * Reads the schedule a trigger node describes. The piece's `schedule(config)` is the authority; a
 * cron node without a piece reads `config.expression` / `config.timezone` (or `config.everySeconds`).
 */
export function scheduleOf(node: TriggerNodeLike, registry: Pick<PieceRegistry, "trigger"> | undefined, minIntervalSeconds: number): ScheduleSpec {
  const config = node.config ?? {};
  let described: { cron: string; timezone?: string } | { everySeconds: number };
  const def = node.pieceId && node.actionId ? registry?.trigger(node.pieceId, node.actionId) : undefined;
  if (def?.schedule) {
    try {
      described = def.schedule(config);
    } catch (error) {
      throw new ScheduleError((error as Error).message);
    }
  } else if (config.everySeconds !== undefined) {
    described = { everySeconds: Number(config.everySeconds) };
  } else {
    if (typeof config.expression !== "string" || config.expression.trim() === "") {
      throw new ScheduleError('config.expression is required for a cron trigger; use a cron expression such as "0 9 * * 1-5"');
    }
    described = { cron: config.expression, timezone: typeof config.timezone === "string" && config.timezone ? config.timezone : "UTC" };
  }
  if ("everySeconds" in described) {
    const seconds = described.everySeconds;
    if (!Number.isInteger(seconds) || seconds < 1) throw new ScheduleError(`interval ${seconds} s is not a whole number of seconds ≥ 1`);
    if (seconds < minIntervalSeconds) {
      throw new ScheduleError(
        `an interval of ${seconds} s is shorter than the minimum of ${minIntervalSeconds} s (WEFT_SCHEDULE_MIN_INTERVAL); use ${minIntervalSeconds} s or more`,
      );
    }
    return { kind: "every", everySeconds: seconds, key: `every:${seconds}` };
  }
  const timezone = described.timezone || "UTC";
  const pattern = described.cron.trim().replace(/\s+/g, " ");
  const job = compileCron(pattern, timezone);
  // Five fields fire on whole minutes, never twice within 60 s: only a longer minimum needs the gaps (60
  // instants: ~6 ms for a yearly pattern, at every start for every live schedule).
  const gap = pattern.split(" ").length === 5 && minIntervalSeconds <= 60 ? null : shortestGapSeconds(job);
  if (gap !== null && gap < minIntervalSeconds) {
    throw new ScheduleError(
      `cron expression "${pattern}" fires every ${gap} s, more often than the minimum of ${minIntervalSeconds} s (WEFT_SCHEDULE_MIN_INTERVAL); use e.g. "*/${Math.max(1, Math.ceil(minIntervalSeconds / 60))} * * * *"`,
    );
  }
  if (job.nextRun() === null) throw new ScheduleError(`cron expression "${pattern}" never fires again; check the day and month fields`);
  return { kind: "cron", pattern, timezone, key: `cron:${pattern}@${timezone}` };
}

/** The shortest gap between consecutive fire times over the next few dozen, in seconds. */
function shortestGapSeconds(job: Cron): number | null {
  const runs = job.nextRuns(60);
  let shortest: number | null = null;
  for (let i = 1; i < runs.length; i++) {
    const gap = (runs[i].getTime() - runs[i - 1].getTime()) / 1000;
    if (shortest === null || gap < shortest) shortest = gap;
  }
  return shortest;
}

const compiled = new Map<string, Cron>();

/** The first scheduled instant strictly after `afterMs`, or null when the pattern never fires again. */
export function nextFireAfter(spec: ScheduleSpec, afterMs: number): number | null {
  if (spec.kind === "every") return afterMs + spec.everySeconds * 1000;
  let job = compiled.get(spec.key);
  if (!job) {
    job = compileCron(spec.pattern, spec.timezone);
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(spec.key, job);
  }
  return job.nextRun(new Date(afterMs))?.getTime() ?? null;
}

/** Parses the canonical key stored with a schedule back into a spec. */
export function specFromKey(key: string): ScheduleSpec {
  if (key.startsWith("every:")) return { kind: "every", everySeconds: Number(key.slice(6)), key };
  const at = key.lastIndexOf("@");
  return { kind: "cron", pattern: key.slice(5, at), timezone: key.slice(at + 1), key };
}
