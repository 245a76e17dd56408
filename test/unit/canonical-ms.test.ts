/**
 * canonicalMs (src/store/run-records.ts) reads "YYYY-MM-DDTHH:MM:SS.mmmZ" field by field: it must answer exactly
 * as the round trip through Date it replaced — the instant when toISOString() gives the text back, else
 * undefined — for every instant of the years 0000–9999 and for texts that are almost canonical.
 */
import { expect, test } from "bun:test";
import { canonicalMs } from "../../src/store/run-records";

const byRoundTrip = (text: unknown): number | undefined => {
  if (typeof text !== "string") return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) && new Date(ms).toISOString() === text ? ms : undefined;
};

/** A small deterministic generator (mulberry32), so a failure names a text that fails again. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = Date.UTC(2000, 0, 1) - 2000 * 365.2425 * 86_400_000; // 0000-01-01
const LAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

test("every canonical text of the years 0000–9999 reads as its instant", () => {
  const rnd = random(19);
  const texts = ["0000-01-01T00:00:00.000Z", "0099-12-31T23:59:59.999Z", "0100-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z"];
  for (let i = 0; i < 20_000; i++) texts.push(new Date(FIRST + Math.floor(rnd() * (LAST - FIRST))).toISOString());
  for (const text of texts) expect([text, canonicalMs(text)]).toEqual([text, byRoundTrip(text)]);
  expect(canonicalMs("0000-01-01T00:00:00.000Z")).toBe(Date.parse("0000-01-01T00:00:00.000Z"));
  expect(canonicalMs("2026-11-27T20:41:08.123Z")).toBe(Date.UTC(2026, 10, 27, 20, 41, 8, 123));
});

test("a text that is not canonical reads as nothing, as the round trip says", () => {
  const odd = [
    "2026-02-29T00:00:00.000Z", // not a leap year
    "2100-02-29T00:00:00.000Z",
    "2000-02-29T00:00:00.000Z", // a leap year
    "0004-02-29T12:00:00.000Z",
    "0001-02-29T12:00:00.000Z",
    "2026-04-31T00:00:00.000Z",
    "2026-13-01T00:00:00.000Z",
    "2026-00-01T00:00:00.000Z",
    "2026-01-00T00:00:00.000Z",
    "2026-01-01T24:00:00.000Z",
    "2026-01-01T23:60:00.000Z",
    "2026-01-01T23:59:60.000Z",
    "2026-01-01 23:59:59.000Z",
    "2026-01-01T23:59:59,000Z",
    "2026-11-27T20:41:08.123z",
    "2026-1-01T23:59:59.0000Z",
    "+02026-01-01T23:59:59.000",
    "2026-11-27T20:41:08Z",
    "2026-11-27",
    "",
  ];
  for (const text of odd) expect([text, canonicalMs(text)]).toEqual([text, byRoundTrip(text)]);
  expect(canonicalMs("2026-02-29T00:00:00.000Z")).toBeUndefined();
  expect(canonicalMs("2000-02-29T00:00:00.000Z")).toBe(Date.UTC(2000, 1, 29));
  for (const value of [null, undefined, 1_700_000_000_000, { toString: () => "2026-11-27T20:41:08.123Z" }]) expect(canonicalMs(value)).toBeUndefined();
  // Every character of canonical texts replaced by another printable one.
  const rnd = random(7);
  for (let i = 0; i < 20_000; i++) {
    const text = new Date(FIRST + Math.floor(rnd() * (LAST - FIRST))).toISOString();
    const at = Math.floor(rnd() * 24);
    const changed = text.slice(0, at) + String.fromCharCode(32 + Math.floor(rnd() * 95)) + text.slice(at + 1);
    expect([changed, canonicalMs(changed)]).toEqual([changed, byRoundTrip(changed)]);
  }
});
