/**
 * Time for the scheduler and the poller. Tests inject a fake clock and call `tick()` themselves,
 * so a schedule is checked without waiting real minutes.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to: `clock.advance(60_000)`. */
export class FakeClock implements Clock {
  private current: number;
  constructor(start: string | number = "2025-01-06T08:59:30.000Z") {
    this.current = typeof start === "number" ? start : Date.parse(start);
  }
  now(): number {
    return this.current;
  }
  set(iso: string | number): void {
    this.current = typeof iso === "number" ? iso : Date.parse(iso);
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
