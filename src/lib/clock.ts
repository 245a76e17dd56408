/**
 * Time as an input (docs/architecture.md, "Time"). Whatever reads the time or waits for it takes a `Clock`:
 * production gives `systemClock`, a test a `FakeClock` it moves with `advance(ms)`, which fires the timers
 * that fall due, in order. So schedules, resumes, leases, expiries and limits are tested without sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Calls `fn` once `ms` have passed on this clock. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer | undefined): void;
  /** Resolves once `ms` have passed on this clock. */
  sleep(ms: number): Promise<void>;
}

/** A timer of a clock: `unref()` lets the process exit while it is armed (a no-op on a fake clock). */
export interface ClockTimer {
  unref(): unknown;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout> | undefined),
  sleep: (ms) => Bun.sleep(ms),
};

interface FakeTimer extends ClockTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock that only moves when told to: `clock.advance(60_000)` runs the timers due by then, earliest first. */
export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private seq = 0;
  constructor(start: string | number = "2025-01-06T08:59:30.000Z") {
    this.current = typeof start === "number" ? start : Date.parse(start);
  }
  now(): number {
    return this.current;
  }
  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: FakeTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, unref: () => timer };
    this.timers.push(timer);
    return timer;
  }
  clearTimeout(timer: ClockTimer | undefined): void {
    this.timers = this.timers.filter((t) => t !== timer);
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }
  /** Timers armed and not yet fired. */
  get pending(): number {
    return this.timers.length;
  }
  /** Moves to `iso` (forward or back); timers due by then fire. */
  set(iso: string | number): void {
    const to = typeof iso === "number" ? iso : Date.parse(iso);
    this.fireUntil(to);
    this.current = to;
  }
  /** Moves forward `ms`; each timer due by then fires at its own time, earliest first (a timer one arms meanwhile too). */
  advance(ms: number): void {
    const to = this.current + ms;
    this.fireUntil(to);
    this.current = to;
  }
  private fireUntil(to: number): void {
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.timers) if (t.at <= to && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) return;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
  }
}
