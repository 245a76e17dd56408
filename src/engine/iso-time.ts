/**
 * ISO-8601 text of a time in ms, remembered for the last millisecond asked: a run writes four or more
 * timestamps, mostly within the same millisecond as its neighbours', and Date#toISOString is costly
 * enough to show in a profile at thousands of runs a second.
 */
let lastMs = Number.NaN;
let lastText = "";

export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
