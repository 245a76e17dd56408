/**
 * The workspace key-value store behind `ctx.store` (the `store` piece, Activepieces' `context.store`): values
 * kept as JSON text, one workspace per handle. `KvRepository` is its table on the storage port (./port.ts);
 * `workspaceKv` is the workspace's store pieces see, every call a promise.
 */
import type { KeyValueStore } from "../pieces-sdk/types";
import { nowIso } from "./db";

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

/** The store a step or trigger of `workspaceId` sees as `ctx.store`. */
export function workspaceKv(storage: KvStorage, workspaceId: string): KeyValueStore {
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
