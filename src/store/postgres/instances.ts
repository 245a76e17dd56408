/** The fleet's registry on PostgreSQL (../instances.ts says what each answers). */
import type { InstanceRepository, InstanceRow } from "../instances";
import type { PostgresConnection } from "./connection";

export class PostgresInstances implements InstanceRepository {
  constructor(private readonly c: PostgresConnection) {}

  list() {
    return this.c.all<InstanceRow>("SELECT * FROM instances ORDER BY started_at, id");
  }
  async put(row: InstanceRow) {
    await this.c.run(
      `INSERT INTO instances (id, hostname, pid, version, role, started_at, heartbeat_at, pieces) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, pieces = excluded.pieces`,
      [row.id, row.hostname, row.pid, row.version, row.role, row.started_at, row.heartbeat_at, row.pieces],
    );
  }
  async beat(id: string, at: string) {
    return (await this.c.run("UPDATE instances SET heartbeat_at = $1 WHERE id = $2", [at, id])) > 0;
  }
  async delete(id: string) {
    await this.c.run("DELETE FROM instances WHERE id = $1", [id]);
  }
  async deleteSilentSince(before: string) {
    await this.c.run("DELETE FROM instances WHERE heartbeat_at < $1", [before]);
  }
}
