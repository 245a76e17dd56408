/**
 * Time zone names as schedules take them (IANA, e.g. Europe/Berlin): one check and one message for the
 * schedule piece, the publish gate and the scheduler, so all three accept and refuse the same names.
 */

/** Why `zone` is not a usable time zone, or undefined when it is one. */
export function timeZoneProblem(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return undefined;
  } catch {
    return `timezone "${zone}" is not an IANA time zone; use e.g. UTC, Europe/Berlin, America/New_York`;
  }
}
