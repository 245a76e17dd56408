/**
 * Token buckets in memory: one per credential (after authentication) and one per client address
 * (the flood ceiling, before authentication). Unauthenticated traffic only ever drains address
 * buckets, so it cannot exhaust a valid token's bucket.
 * Middleware, not a route: it has no scope of its own (`x-permission` is declared by each route).
 */
import { type Clock, systemClock } from "../../lib/clock";

export interface BucketState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one request is allowed again (only meaningful when refused). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updated: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep: number;

  /** @param perSecond refill rate; 0 disables limiting. @param burst bucket capacity. @param clock what refills are measured by (docs/architecture.md, "Time"). */
  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly maxKeys = 100_000,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastSweep = clock.now();
  }

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  take(key: string, now = this.clock.now()): BucketState {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.sweep(now, true);
      bucket = { tokens: this.burst, updated: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updated) / 1000) * this.perSecond);
      bucket.updated = now;
    }
    if (now - this.lastSweep > 60_000) this.sweep(now, false);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: this.burst,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((this.burst - bucket.tokens) / this.perSecond),
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)),
    };
  }

  /** Puts back the token `take` took (a try that turned out not to count, such as a login that succeeded). */
  giveBack(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  /** Drops buckets that have refilled completely (they carry no state). */
  private sweep(now: number, force: boolean) {
    this.lastSweep = now;
    const fullAfterMs = (this.burst / this.perSecond) * 1000;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updated >= fullAfterMs) this.buckets.delete(key);
    }
    if (force && this.buckets.size >= this.maxKeys) this.buckets.clear();
  }
}

/** Headers for a credential's bucket: the X-RateLimit-* trio and the IETF RateLimit pair. */
export function rateLimitHeaders(state: BucketState, perSecond: number): Record<string, string> {
  const window = Math.max(1, Math.ceil(state.limit / perSecond));
  return {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-reset": String(state.resetSeconds),
    "ratelimit-policy": `"default";q=${state.limit};w=${window}`,
    ratelimit: `"default";r=${state.remaining};t=${state.resetSeconds}`,
  };
}
