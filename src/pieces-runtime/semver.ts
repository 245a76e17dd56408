/**
 * The little semver pins need: parse "1.2.3" (also "1.2", "1", "^1.2.3", "v1.2.3") and compare.
 * Pins resolve with caret semantics (docs/pieces.md "Versions and pins"): same major, served ≥ pin.
 */
export type Semver = [number, number, number];

const PATTERN = /^[\^~v=]?\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+][0-9A-Za-z.+-]*)?$/;

export function parseSemver(text: string): Semver | undefined {
  const match = PATTERN.exec(text.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

export function compareSemver(a: Semver, b: Semver): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Does a served version satisfy a pin under caret semantics? */
export function satisfiesPin(served: string, pin: string): boolean {
  const have = parseSemver(served);
  const want = parseSemver(pin);
  if (!have || !want) return false;
  return have[0] === want[0] && compareSemver(have, want) >= 0;
}
