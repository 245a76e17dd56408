/** The fleet's registry on SQLite (../instances.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { bindRow } from "./db";
import type { InstanceRepository, InstanceRow } from "../instances";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  list: db.query<InstanceRow, []>("SELECT * FROM instances ORDER BY started_at, id"),
  upsert: db.query(
    `INSERT INTO instances (id, hostname, pid, version, role, started_at, heartbeat_at, pieces)
     VALUES ($id, $hostname, $pid, $version, $role, $started_at, $heartbeat_at, $pieces)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, pieces = excluded.pieces`,
  ),
  beat: db.query<null, [string, string]>("UPDATE instances SET heartbeat_at = ? WHERE id = ?"),
  delete: db.query<null, [string]>("DELETE FROM instances WHERE id = ?"),
  deleteSilentSince: db.query<null, [string]>("DELETE FROM instances WHERE heartbeat_at < ?"),
});

export class SqliteInstances extends Prepared(statements) implements InstanceRepository {
  list() {
    return this.c.do(() => this.q.list.all());
  }
  put(row: InstanceRow) {
    return this.c.do(() => void this.q.upsert.run(bindRow(row)));
  }
  beat(id: string, at: string) {
    return this.c.do(() => this.q.beat.run(at, id).changes > 0);
  }
  delete(id: string) {
    return this.c.do(() => void this.q.delete.run(id));
  }
  deleteSilentSince(before: string) {
    return this.c.do(() => void this.q.deleteSilentSince.run(before));
  }
}
