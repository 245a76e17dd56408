/** Leases on PostgreSQL (../leases.ts says what each answers). The columns are COLLATE "C": names and ISO times compare by code unit. */
import { type LeaseRepository, type LeaseRow, prefixEnd } from "../leases";
import type { PostgresConnection } from "./connection";

export class PostgresLeases implements LeaseRepository {
  constructor(private readonly c: PostgresConnection) {}

  async acquire(name: string, owner: string, now: string, expiresAt: string) {
    // ON CONFLICT locks the row and checks the WHERE against the committed row: two instances cannot both take it.
    const changed = await this.c.run(
      `INSERT INTO leases (name, owner, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE leases.owner = excluded.owner OR leases.expires_at <= $4`,
      [name, owner, expiresAt, now],
    );
    return changed > 0;
  }
  async renewAll(owner: string, now: string, expiresAt: string) {
    const rows = await this.c.all<{ name: string }>("UPDATE leases SET expires_at = $1 WHERE owner = $2 AND expires_at > $3 RETURNING name", [
      expiresAt,
      owner,
      now,
    ]);
    return rows.map((row) => row.name);
  }
  async release(name: string, owner: string, now: string) {
    await this.c.run("UPDATE leases SET expires_at = $1 WHERE name = $2 AND owner = $3 AND expires_at > $1", [now, name, owner]);
  }
  async drop(name: string) {
    await this.c.run("DELETE FROM leases WHERE name = $1", [name]);
  }
  async holder(name: string, now: string) {
    const row = await this.c.get<LeaseRow>("SELECT name, owner, expires_at FROM leases WHERE name = $1", [name]);
    return row && row.expires_at > now ? row.owner : null;
  }
  withPrefix(prefix: string) {
    return this.c.all<LeaseRow>("SELECT name, owner, expires_at FROM leases WHERE name >= $1 AND name < $2 ORDER BY name", [prefix, prefixEnd(prefix)]);
  }
}
