/**
 * The workspace key-value store behind `ctx.store` (the `store` piece). SQLite-backed, scoped to one
 * workspace per handle, values kept as JSON text. Synchronous like bun:sqlite itself.
 */
import type { KeyValueStore } from "../pieces-sdk/types";
import { atomically, nowIso, type Db } from "./db";

export const MAX_KEY_LENGTH = 256;
export const MAX_VALUE_BYTES = 1024 * 1024;

export class KvStoreError extends Error {}

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key === "") throw new KvStoreError("key must be a non-empty string");
  if (key.length > MAX_KEY_LENGTH) throw new KvStoreError(`key is ${key.length} characters; the maximum is ${MAX_KEY_LENGTH}`);
  return key;
}

function encode(value: unknown): string {
  const json = JSON.stringify(value === undefined ? null : value);
  if (json.length > MAX_VALUE_BYTES) throw new KvStoreError(`value is ${json.length} bytes as JSON; the maximum is ${MAX_VALUE_BYTES}`);
  return json;
}

export class KvStore {
  private readonly getStmt;
  private readonly putStmt;
  private readonly deleteStmt;

  constructor(private readonly db: Db) {
    this.getStmt = db.query<{ value: string }, [string, string]>("SELECT value FROM kv_entries WHERE workspace_id = ? AND key = ?");
    this.putStmt = db.query(
      "INSERT INTO kv_entries (workspace_id, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    );
    this.deleteStmt = db.query("DELETE FROM kv_entries WHERE workspace_id = ? AND key = ?");
  }

  /** The store a step of `workspaceId` sees as `ctx.store`. */
  forWorkspace(workspaceId: string): KeyValueStore {
    const read = (key: string) => {
      const row = this.getStmt.get(workspaceId, checkKey(key));
      return row ? JSON.parse(row.value) : undefined;
    };
    return {
      get: read,
      put: (key, value) => {
        this.putStmt.run(workspaceId, checkKey(key), encode(value), nowIso());
      },
      delete: (key) => this.deleteStmt.run(workspaceId, checkKey(key)).changes > 0,
      append: (key, value) =>
        // Read-modify-write in one unit so concurrent appends never lose an item (on PostgreSQL, from any instance).
        atomically(this.db, () => {
          const current = read(key);
          if (current !== undefined && current !== null && !Array.isArray(current)) {
            throw new KvStoreError(`the value at "${key}" is not a list (it is ${typeof current}); append needs a list or no value`);
          }
          const list = [...((current as unknown[] | undefined) ?? []), value];
          this.putStmt.run(workspaceId, key, encode(list), nowIso());
          return list.length;
        }),
    };
  }
}
