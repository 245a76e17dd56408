/** Schedules: croner patterns (5 or 6 fields), time zones, the minimum interval, fixed intervals. */
import { describe, expect, test } from "bun:test";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import { nextFireAfter, scheduleOf, specFromKey } from "../../src/core/triggers/schedule-spec";

const registry = builtinRegistry();
const cron = (config: Record<string, unknown>) => ({ type: "cron", pieceId: "schedule", actionId: "cron", config });
const every = (config: Record<string, unknown>) => ({ type: "cron", pieceId: "schedule", actionId: "every", config });

describe("schedule spec", () => {
  test("a 5-field expression in a time zone fires at local wall-clock times", () => {
    const spec = scheduleOf(cron({ expression: "0 9 * * *", timezone: "Europe/Berlin" }), registry, 60);
    expect(spec.key).toBe("cron:0 9 * * *@Europe/Berlin");
    // 09:00 in Berlin in January is 08:00 UTC.
    expect(new Date(nextFireAfter(spec, Date.parse("2025-01-06T07:00:00Z"))!).toISOString()).toBe("2025-01-06T08:00:00.000Z");
    // Strictly after: an instant is never its own successor.
    expect(new Date(nextFireAfter(spec, Date.parse("2025-01-06T08:00:00Z"))!).toISOString()).toBe("2025-01-07T08:00:00.000Z");
  });

  test("a 6-field expression (seconds first) is accepted when it respects the minimum interval", () => {
    const spec = scheduleOf(cron({ expression: "30 */5 * * * *" }), registry, 60);
    expect(new Date(nextFireAfter(spec, Date.parse("2025-01-06T08:01:00Z"))!).toISOString()).toBe("2025-01-06T08:05:30.000Z");
  });

  test("too frequent schedules are refused naming the minimum", () => {
    expect(() => scheduleOf(cron({ expression: "* * * * * *" }), registry, 60)).toThrow(/every 1 s.*minimum of 60 s/);
    expect(() => scheduleOf(cron({ expression: "*/30 * * * * *" }), registry, 60)).toThrow(/minimum of 60 s/);
    expect(() => scheduleOf(every({ interval: 30, unit: "seconds" }), registry, 60)).toThrow(/minimum of 60 s/);
    // Configurable: a lower minimum admits it.
    expect(scheduleOf(cron({ expression: "*/30 * * * * *" }), registry, 10).kind).toBe("cron");
  });

  test("a 5-field expression is held to a minimum above a minute (it fires on whole minutes: 60 s apart at least)", () => {
    expect(scheduleOf(cron({ expression: "* * * * *" }), registry, 60).kind).toBe("cron");
    expect(() => scheduleOf(cron({ expression: "* * * * *" }), registry, 120)).toThrow(/every 60 s.*minimum of 120 s/);
    expect(() => scheduleOf(cron({ expression: "0,1 9 * * *" }), registry, 120)).toThrow(/every 60 s/);
    expect(scheduleOf(cron({ expression: "*/2 * * * *" }), registry, 120).kind).toBe("cron");
  });

  test("UTC (computed without Intl) fires at the same instants as the zone named through Intl", () => {
    for (const pattern of ["*/15 9-17 * * 1-5", "0 0 L * *", "0 12 * * 5#2", "0 9 15W * *", "30 2 * * SUN", "0 0 29 2 *", "*/7 * * * * *"]) {
      const utc = { kind: "cron" as const, pattern, timezone: "UTC", key: `cron:${pattern}@UTC` };
      const named = { kind: "cron" as const, pattern, timezone: "Etc/UTC", key: `cron:${pattern}@Etc/UTC` };
      let at = Date.parse("2027-12-30T23:59:30Z");
      for (let i = 0; i < 300; i++) {
        const next = nextFireAfter(utc, at);
        expect(next, `${pattern} after ${new Date(at).toISOString()}`).toBe(nextFireAfter(named, at));
        if (next === null) break;
        at = next;
      }
    }
    const spec = scheduleOf(cron({ expression: "0 12 * * 5#2" }), registry, 60);
    expect(new Date(nextFireAfter(spec, Date.parse("2026-11-01T00:00:00Z"))!).toISOString()).toBe("2026-11-13T12:00:00.000Z");
  });

  test("invalid expressions and time zones get a clear diagnostic", () => {
    expect(() => scheduleOf(cron({ expression: "61 * * * *" }), registry, 60)).toThrow(/not a valid cron expression|not valid/);
    expect(() => scheduleOf(cron({ expression: "* * *" }), registry, 60)).toThrow(/5 or 6 fields/);
    expect(() => scheduleOf(cron({ expression: "0 9 * * *", timezone: "Mars/Olympus" }), registry, 60)).toThrow(/IANA time zone/);
    expect(() => scheduleOf(cron({}), registry, 60)).toThrow(/expression is required/);
  });

  test("schedule.every is a fixed interval from the previous instant", () => {
    const spec = scheduleOf(every({ interval: 5, unit: "minutes" }), registry, 60);
    expect(spec).toEqual({ kind: "every", everySeconds: 300, key: "every:300" });
    expect(nextFireAfter(spec, 1_000)).toBe(301_000);
    expect(specFromKey(spec.key)).toEqual(spec);
    const c = scheduleOf(cron({ expression: "0 9 * * 1-5", timezone: "America/New_York" }), registry, 60);
    expect(specFromKey(c.key)).toEqual(c);
  });
});
