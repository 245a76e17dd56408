/** The workspace key-value store on PostgreSQL (../kv.ts says what each answers). */
import type { KvRepository } from "../kv";
import type { PostgresConnection } from "./connection";

export class PostgresKv implements KvRepository {
  constructor(private readonly c: PostgresConnection) {}

  async get(workspaceId: string, key: string) {
    return (await this.c.get<{ value: string }>("SELECT value FROM kv_entries WHERE workspace_id = $1 AND key = $2", [workspaceId, key]))?.value ?? null;
  }
  async put(workspaceId: string, key: string, value: string, at: string) {
    await this.c.run(
      `INSERT INTO kv_entries (workspace_id, key, value, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [workspaceId, key, value, at],
    );
  }
  async delete(workspaceId: string, key: string) {
    return (await this.c.run("DELETE FROM kv_entries WHERE workspace_id = $1 AND key = $2", [workspaceId, key])) > 0;
  }
}
