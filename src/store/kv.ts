/**
 * The workspace key-value store behind `ctx.store` (the `store` piece): values kept as JSON text, one
 * workspace per handle. `KvRepository` is its table on the storage port (./port.ts); `workspaceKv` is the
 * workspace's store on the port, every call a promise.
 *
 * `KvStore` is the synchronous store pieces still see: the pieces' `KeyValueStore` (src/pieces-sdk) answers
 * values, not promises, so it stays on the synchronous `Db` until that API changes.
 */
import type { KeyValueStore } from "../pieces-sdk/types";
import { atomically, nowIso, type Db } from "./db";

export const MAX_KEY_LENGTH = 256;
export const MAX_VALUE_BYTES = 1024 * 1024;

export class KvStoreError extends Error {}

export function checkKey(key: unknown): string {
  if (typeof key !== "string" || key === "") throw new KvStoreError("key must be a non-empty string");
  if (key.length > MAX_KEY_LENGTH) throw new KvStoreError(`key is ${key.length} characters; the maximum is ${MAX_KEY_LENGTH}`);
  return key;
}

export function encode(value: unknown): string {
  const json = JSON.stringify(value === undefined ? null : value);
  if (json.length > MAX_VALUE_BYTES) throw new KvStoreError(`value is ${json.length} bytes as JSON; the maximum is ${MAX_VALUE_BYTES}`);
  return json;
}

/** The list `append` stores: `current` with `value` at its end. */
function appended(key: string, current: unknown, value: unknown): unknown[] {
  if (current !== undefined && current !== null && !Array.isArray(current)) {
    throw new KvStoreError(`the value at "${key}" is not a list (it is ${typeof current}); append needs a list or no value`);
  }
  return [...((current as unknown[] | undefined) ?? []), value];
}

/** `kv_entries` as the storage port answers it; values are the stored JSON text. */
export interface KvRepository {
  get(workspaceId: string, key: string): Promise<string | null>;
  /** Inserts or replaces the value at `key`. */
  put(workspaceId: string, key: string, value: string, at: string): Promise<void>;
  /** False when there was no value. */
  delete(workspaceId: string, key: string): Promise<boolean>;
}

/** What `workspaceKv` needs of the port: the repository, and units (an append reads and writes in one). */
export interface KvStorage {
  readonly kv: KvRepository;
  atomically<T>(work: (unit: { readonly kv: KvRepository }) => Promise<T>): Promise<T>;
}

/** A workspace's store on the port: `KeyValueStore` with every answer a promise. */
export interface AsyncKeyValueStore {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  append(key: string, value: unknown): Promise<number>;
}

export function workspaceKv(storage: KvStorage, workspaceId: string): AsyncKeyValueStore {
  const parsed = (text: string | null) => (text === null ? undefined : JSON.parse(text));
  return {
    get: async (key) => parsed(await storage.kv.get(workspaceId, checkKey(key))),
    put: async (key, value) => storage.kv.put(workspaceId, checkKey(key), encode(value), nowIso()),
    delete: async (key) => storage.kv.delete(workspaceId, checkKey(key)),
    append: async (key, value) => {
      checkKey(key);
      // Read-modify-write in one unit so concurrent appends never lose an item (on PostgreSQL, from any instance).
      return storage.atomically(async (unit) => {
        const list = appended(key, parsed(await unit.kv.get(workspaceId, key)), value);
        await unit.kv.put(workspaceId, key, encode(list), nowIso());
        return list.length;
      });
    },
  };
}

/** The synchronous store of a `Db`, for pieces (see above). */
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
          const list = appended(key, read(key), value);
          this.putStmt.run(workspaceId, key, encode(list), nowIso());
          return list.length;
        }),
    };
  }
}
