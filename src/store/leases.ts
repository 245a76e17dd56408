/**
 * Leases (migration 13): which instance of a cluster does a named piece of work — a poll, a subscription, a
 * webhook renewal — and until when. Taking one is a single statement, so two instances asking at once cannot
 * both get it: SQLite runs it under its write lock, and PostgreSQL's ON CONFLICT locks the row and checks the
 * WHERE against the committed row (READ COMMITTED re-reads it after the other writer commits).
 * Times are ISO strings (`toISOString`), which sort as they compare.
 *
 *   if (await storage.leases.acquire("poll:wf-1", instanceId, nowIso, expiresIso)) pollIt();
 */

export interface LeaseRow {
  name: string;
  owner: string;
  expires_at: string;
}

/** The leases as the storage port (./port.ts) answers them; every method answers a promise. */
export interface LeaseRepository {
  /** Takes `name` for `owner` until `expiresAt`, or renews it if `owner` already holds it; false when another holder's lease runs past `now`. */
  acquire(name: string, owner: string, now: string, expiresAt: string): Promise<boolean>;
  /** Moves the expiry of every lease `owner` holds at `now` to `expiresAt`, in one statement; answers their names. A lapsed or released one is not held any more, even if nobody took it yet. */
  renewAll(owner: string, now: string, expiresAt: string): Promise<string[]>;
  /** Gives `name` up at `now`: the row stays (others still learn the work exists) and anyone may take it at once. */
  release(name: string, owner: string, now: string): Promise<void>;
  /** Forgets `name` whoever holds it: the work it stood for is gone (an unpublished poll). */
  drop(name: string): Promise<void>;
  /** Who holds `name` at `now`; null when nobody does (never taken, released or lapsed). */
  holder(name: string, now: string): Promise<string | null>;
  /** Every lease whose name starts with `prefix` (not empty), held or not, by name. */
  withPrefix(prefix: string): Promise<LeaseRow[]>;
}

/** The first name after every name starting with `prefix`: a prefix as a range of names, so no wildcard in a name can widen it. */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
