/** Schedule: start runs on a cron expression or at a fixed interval. */
import { Cron } from "croner";
import { definePiece, Property, trigger } from "../../src/pieces-sdk";
import { cronZone, timeZoneProblem } from "../../src/pieces-sdk/time-zone";

/** Validates a cron expression with croner; returns the job (paused, never fires). */
export function parseCron(expression: unknown, timezone: string): Cron {
  if (typeof expression !== "string" || expression.trim() === "") throw new Error('expression is required; use a cron expression such as "0 9 * * 1-5"');
  const problem = timeZoneProblem(timezone);
  if (problem) throw new Error(problem);
  try {
    return new Cron(expression.trim(), { ...cronZone(timezone), paused: true });
  } catch (error) {
    throw new Error(`expression "${expression}" is not a valid cron expression (${(error as Error).message}); use 5 or 6 fields, e.g. "*/15 * * * *"`);
  }
}

const UNITS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };
const MIN_SECONDS = 10;

export function intervalSeconds(config: Record<string, unknown>): number {
  const unit = String(config.unit ?? "minutes");
  if (!(unit in UNITS)) throw new Error(`unit "${unit}" is unknown; use one of ${Object.keys(UNITS).join(", ")}`);
  const interval = Number(config.interval);
  if (!Number.isInteger(interval) || interval < 1) throw new Error(`interval ${JSON.stringify(config.interval)} must be a whole number ≥ 1`);
  const seconds = interval * UNITS[unit];
  if (seconds < MIN_SECONDS) throw new Error(`an interval of ${seconds} s is too short; the minimum is ${MIN_SECONDS} seconds`);
  return seconds;
}

export default definePiece({
  id: "schedule",
  name: "Schedule",
  version: "1.0.0",
  icon: "⏰",
  description: "Start runs on a cron schedule or at a fixed interval",
  triggers: [
    trigger({
      id: "cron",
      name: "Cron expression",
      description: "Runs at the times a cron expression describes, in a time zone",
      type: "cron",
      props: {
        expression: Property.shortText({
          displayName: "Cron expression",
          description: "5 fields (minute hour day month weekday) or 6 with seconds",
          required: true,
        }),
        timezone: Property.shortText({ displayName: "Time zone", description: "IANA name", default: "UTC" }),
      },
      sampleData: { scheduledAt: "2025-01-06T09:00:00.000Z", expression: "0 9 * * 1-5", timezone: "UTC" },
      schedule: (config) => {
        const timezone = String(config.timezone || "UTC");
        const job = parseCron(config.expression, timezone);
        return { cron: job.getPattern() ?? String(config.expression).trim(), timezone };
      },
      sample: (config) => {
        const timezone = String(config.timezone || "UTC");
        const next = parseCron(config.expression, timezone).nextRun();
        return { scheduledAt: next ? next.toISOString() : null, expression: String(config.expression).trim(), timezone };
      },
    }),
    trigger({
      id: "every",
      name: "Every interval",
      description: "Runs every N seconds, minutes, hours or days",
      type: "cron",
      props: {
        interval: Property.integer({ displayName: "Every", required: true, min: 1 }),
        unit: Property.staticDropdown({ displayName: "Unit", default: "minutes", options: Object.keys(UNITS) }),
      },
      sampleData: { scheduledAt: "2025-01-06T09:00:00.000Z", everySeconds: 300 },
      schedule: (config) => ({ everySeconds: intervalSeconds(config) }),
      sample: (config) => {
        const everySeconds = intervalSeconds(config);
        return { scheduledAt: new Date(Date.now() + everySeconds * 1000).toISOString(), everySeconds };
      },
    }),
  ],
});
