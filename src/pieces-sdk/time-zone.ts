/**
 * Time zone names as schedules take them (IANA, e.g. Europe/Berlin): one check and one message for the
 * schedule piece, the publish gate and the scheduler, so all three accept and refuse the same names.
 *
 * "UTC", the default, needs no Intl: its first use costs ~6 ms, paid at every start by every live schedule
 * while the server is not yet listening.
 */

/** Why `zone` is not a usable time zone, or undefined when it is one. */
export function timeZoneProblem(zone: string): string | undefined {
  if (zone === "UTC") return undefined;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return undefined;
  } catch {
    return `timezone "${zone}" is not an IANA time zone; use e.g. UTC, Europe/Berlin, America/New_York`;
  }
}

/** Croner's option for `zone`: UTC as a zero offset (computed without Intl), any other zone by name. */
export const cronZone = (zone: string): { utcOffset: number } | { timezone: string } => (zone === "UTC" ? { utcOffset: 0 } : { timezone: zone });
