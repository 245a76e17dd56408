/** The fleet's registry (migration 11): one row per running `weft serve` process, renewed by its heartbeat. */
import { bindRow, type Db } from "./db";

export interface InstanceRow {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  role: string;
  started_at: string;
  heartbeat_at: string;
  /** JSON: [{ id, version }] of the pieces this instance can run. */
  pieces: string;
}

export class InstanceStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      list: db.query<InstanceRow, []>("SELECT * FROM instances ORDER BY started_at, id"),
      upsert: db.query(
        `INSERT INTO instances (id, hostname, pid, version, role, started_at, heartbeat_at, pieces)
         VALUES ($id, $hostname, $pid, $version, $role, $started_at, $heartbeat_at, $pieces)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, pieces = excluded.pieces`,
      ),
      beat: db.query<never, [string, string]>("UPDATE instances SET heartbeat_at = ? WHERE id = ?"),
      delete: db.query<never, [string]>("DELETE FROM instances WHERE id = ?"),
      deleteSilentSince: db.query<never, [string]>("DELETE FROM instances WHERE heartbeat_at < ?"),
    };
  }

  list(): InstanceRow[] {
    return this.q.list.all();
  }

  put(row: InstanceRow): void {
    this.q.upsert.run(bindRow(row));
  }

  /** Renews an instance's heartbeat; false when its row is gone (pruned by another instance). */
  beat(id: string, at: string): boolean {
    return this.q.beat.run(at, id).changes > 0;
  }

  delete(id: string): void {
    this.q.delete.run(id);
  }

  /** Forgets instances silent since before `before` (ISO time). */
  deleteSilentSince(before: string): void {
    this.q.deleteSilentSince.run(before);
  }
}
