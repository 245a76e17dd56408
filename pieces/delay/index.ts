/** Delay: pause the run for a while or until a time; the engine frees the worker and resumes it later. */
import { action, definePiece, Property } from "../../src/pieces-sdk";
import type { ActionContext } from "../../src/pieces-sdk/types";

/** The longest wait either action accepts: 366 days (a yearly reminder fits; a forgotten run does not wait forever). */
const MAX_SECONDS = 366 * 86_400;
const MAX_MS = MAX_SECONDS * 1000;

/** Pauses until `until` unless it has passed; on resume reports when the wait ended. */
function waitUntil(ctx: ActionContext, until: () => Date) {
  // Resumed (or nothing to wait for): continue. The wait's end is in the paused step's data.
  if (ctx.resumePayload !== undefined) return { resumedAt: new Date().toISOString() };
  const end = until();
  if (end.getTime() <= Date.now()) return { resumedAt: new Date().toISOString() };
  return ctx.pause({ mode: "time", resumeAt: end.toISOString(), data: { delayedUntil: end.toISOString() } });
}

export default definePiece({
  id: "delay",
  name: "Delay",
  version: "1.0.0",
  icon: "⏳",
  description: "Wait for a duration or until a date before continuing",
  actions: [
    action({
      id: "delay_for",
      name: "Delay for",
      description: `Pause the run for a number of seconds (0 to ${MAX_SECONDS}, i.e. 366 days; fractions allowed), e.g. 3600 for an hour`,
      sideEffects: "pure",
      props: {
        seconds: Property.number({
          displayName: "Seconds",
          description: `How long to wait: 0–${MAX_SECONDS} seconds (366 days)`,
          required: true,
          min: 0,
          max: MAX_SECONDS,
        }),
      },
      outputSchema: { type: "object", properties: { resumedAt: { type: "string", format: "date-time" } } },
      sampleData: { resumedAt: "2025-01-06T09:05:00.000Z" },
      run: (ctx) => {
        const raw = ctx.config.seconds;
        // Numbers, or numeric text from an expression; never null/true/"" read as 0 or 1.
        const seconds = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
        if (!Number.isFinite(seconds) || seconds < 0) throw new Error(`seconds ${JSON.stringify(raw)} must be a number ≥ 0, e.g. 60 for a minute`);
        if (seconds > MAX_SECONDS)
          throw new Error(
            `a delay of ${seconds} seconds is longer than the maximum of ${MAX_SECONDS} seconds (366 days); use delay_until for a date, or a shorter delay`,
          );
        const ms = seconds * 1000;
        return waitUntil(ctx, () => new Date(Date.now() + ms));
      },
    }),
    action({
      id: "delay_until",
      name: "Delay until",
      description: "Pause the run until a date and time (continues at once if it has passed)",
      sideEffects: "pure",
      props: { until: Property.dateTime({ displayName: "Until", description: "ISO 8601 date-time, e.g. 2025-01-06T09:00:00Z", required: true }) },
      outputSchema: { type: "object", properties: { resumedAt: { type: "string", format: "date-time" } } },
      sampleData: { resumedAt: "2025-01-06T09:00:00.000Z" },
      run: (ctx) => {
        const until = new Date(String(ctx.config.until ?? ""));
        if (Number.isNaN(until.getTime())) throw new Error(`until "${ctx.config.until}" is not a date-time; use ISO 8601, e.g. 2025-01-06T09:00:00Z`);
        if (until.getTime() - Date.now() > MAX_MS) throw new Error(`until ${until.toISOString()} is more than 366 days away`);
        return waitUntil(ctx, () => until);
      },
    }),
  ],
});
