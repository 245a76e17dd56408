/** Leases on SQLite (../leases.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { type LeaseRepository, type LeaseRow, prefixEnd } from "../leases";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  // A free name is inserted; a taken one changes hands only if it is already ours or has lapsed.
  acquire: db.query(
    `INSERT INTO leases (name, owner, expires_at) VALUES ($name, $owner, $expires_at)
     ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
     WHERE leases.owner = excluded.owner OR leases.expires_at <= $now`,
  ),
  renew: db.query<{ name: string }, [string, string, string]>("UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ? RETURNING name"),
  release: db.query<null, [string, string, string, string]>("UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ? AND expires_at > ?"),
  drop: db.query<null, [string]>("DELETE FROM leases WHERE name = ?"),
  get: db.query<LeaseRow, [string]>("SELECT name, owner, expires_at FROM leases WHERE name = ?"),
  byPrefix: db.query<LeaseRow, [string, string]>("SELECT name, owner, expires_at FROM leases WHERE name >= ? AND name < ? ORDER BY name"),
});

export class SqliteLeases extends Prepared(statements) implements LeaseRepository {
  acquire(name: string, owner: string, now: string, expiresAt: string) {
    return this.c.do(() => this.q.acquire.run({ name, owner, expires_at: expiresAt, now }).changes > 0);
  }
  renewAll(owner: string, now: string, expiresAt: string) {
    return this.c.do(() => this.q.renew.all(expiresAt, owner, now).map((row) => row.name));
  }
  release(name: string, owner: string, now: string) {
    return this.c.do(() => void this.q.release.run(now, name, owner, now));
  }
  drop(name: string) {
    return this.c.do(() => void this.q.drop.run(name));
  }
  holder(name: string, now: string) {
    return this.c.do(() => {
      const row = this.q.get.get(name);
      return row && row.expires_at > now ? row.owner : null;
    });
  }
  withPrefix(prefix: string) {
    return this.c.do(() => this.q.byPrefix.all(prefix, prefixEnd(prefix)));
  }
}
