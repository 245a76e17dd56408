/** The workspace key-value store on SQLite (../kv.ts says what each answers). */
import type { Database } from "bun:sqlite";
import type { KvRepository } from "../kv";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  get: db.query<{ value: string }, [string, string]>("SELECT value FROM kv_entries WHERE workspace_id = ? AND key = ?"),
  put: db.query<null, [string, string, string, string]>(
    "INSERT INTO kv_entries (workspace_id, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  ),
  delete: db.query<null, [string, string]>("DELETE FROM kv_entries WHERE workspace_id = ? AND key = ?"),
});

export class SqliteKv extends Prepared(statements) implements KvRepository {
  get(workspaceId: string, key: string) {
    return this.c.do(() => this.q.get.get(workspaceId, key)?.value ?? null);
  }
  put(workspaceId: string, key: string, value: string, at: string) {
    return this.c.do(() => void this.q.put.run(workspaceId, key, value, at));
  }
  delete(workspaceId: string, key: string) {
    return this.c.do(() => this.q.delete.run(workspaceId, key).changes > 0);
  }
}
