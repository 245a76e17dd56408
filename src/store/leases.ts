/**
 * Leases (migration 13): which instance of a cluster does a named piece of work — a poll, a subscription, a
 * webhook renewal — and until when. Taking one is a single statement, so two instances asking at once cannot
 * both get it: SQLite runs it under its write lock, and PostgreSQL's ON CONFLICT locks the row and checks the
 * WHERE against the committed row (READ COMMITTED re-reads it after the other writer commits).
 * Times are ISO strings (`toISOString`), which sort as they compare.
 *
 *   const leases = new LeaseStore(db);
 *   if (leases.acquire("poll:wf-1", instanceId, nowIso, expiresIso)) pollIt();
 */
import type { Db } from "./db";

export interface LeaseRow {
  name: string;
  owner: string;
  expires_at: string;
}

export class LeaseStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      // A free name is inserted; a taken one changes hands only if it is already ours or has lapsed.
      acquire: db.query(
        `INSERT INTO leases (name, owner, expires_at) VALUES ($name, $owner, $expires_at)
         ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE leases.owner = excluded.owner OR leases.expires_at <= $now`,
      ),
      renew: db.query<{ name: string }, [string, string, string]>("UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ? RETURNING name"),
      release: db.query<never, [string, string, string, string]>("UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ? AND expires_at > ?"),
      drop: db.query<never, [string]>("DELETE FROM leases WHERE name = ?"),
      get: db.query<LeaseRow, [string]>("SELECT name, owner, expires_at FROM leases WHERE name = ?"),
      // A prefix as a range of names: no LIKE, so no wildcard in a name can widen it.
      byPrefix: db.query<LeaseRow, [string, string]>("SELECT name, owner, expires_at FROM leases WHERE name >= ? AND name < ? ORDER BY name"),
    };
  }

  /** Takes `name` for `owner` until `expiresAt`, or renews it if `owner` already holds it; false when another holder's lease runs past `now`. */
  acquire(name: string, owner: string, now: string, expiresAt: string): boolean {
    return this.q.acquire.run({ name, owner, expires_at: expiresAt, now }).changes > 0;
  }

  /** Moves the expiry of every lease `owner` holds at `now` to `expiresAt`, in one statement; answers their names. A lapsed or released one is not held any more, even if nobody took it yet. */
  renewAll(owner: string, now: string, expiresAt: string): string[] {
    return this.q.renew.all(expiresAt, owner, now).map((row) => row.name);
  }

  /** Gives `name` up at `now`: the row stays (others still learn the work exists) and anyone may take it at once. */
  release(name: string, owner: string, now: string): void {
    this.q.release.run(now, name, owner, now);
  }

  /** Forgets `name` whoever holds it: the work it stood for is gone (an unpublished poll). */
  drop(name: string): void {
    this.q.drop.run(name);
  }

  /** Who holds `name` at `now`; null when nobody does (never taken, released or lapsed). */
  holder(name: string, now: string): string | null {
    const row = this.q.get.get(name);
    return row && row.expires_at > now ? row.owner : null;
  }

  /** Every lease whose name starts with `prefix` (not empty), held or not. */
  withPrefix(prefix: string): LeaseRow[] {
    const after = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    return this.q.byPrefix.all(prefix, after);
  }
}
