/** Delay: pause the run for a while or until a time; the engine frees the worker and resumes it later. */
import { action, definePiece, Property } from "../../src/pieces-sdk";
import type { ActionContext } from "../../src/pieces-sdk/types";

const UNIT_MS: Record<string, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };
const MAX_MS = 366 * 86_400_000;

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
  description: "Wait for a duration or until a date before continuing",
  actions: [
    action({
      id: "delay_for",
      name: "Delay for",
      description: "Pause the run for an amount of seconds, minutes, hours or days (up to 366 days)",
      sideEffects: "pure",
      props: {
        amount: Property.number({ displayName: "Amount", required: true, min: 0 }),
        unit: Property.staticDropdown({ displayName: "Unit", default: "seconds", options: Object.keys(UNIT_MS) }),
      },
      outputSchema: { type: "object", properties: { resumedAt: { type: "string", format: "date-time" } } },
      sampleData: { resumedAt: "2025-01-06T09:05:00.000Z" },
      run: (ctx) => {
        const unit = String(ctx.config.unit ?? "seconds");
        if (!(unit in UNIT_MS)) throw new Error(`unit "${unit}" is unknown; use one of ${Object.keys(UNIT_MS).join(", ")}`);
        const amount = Number(ctx.config.amount);
        if (!Number.isFinite(amount) || amount < 0) throw new Error(`amount ${JSON.stringify(ctx.config.amount)} must be a number ≥ 0`);
        const ms = amount * UNIT_MS[unit];
        if (ms > MAX_MS) throw new Error(`a delay of ${amount} ${unit} is longer than the 366-day maximum`);
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
