/**
 * The storage port (./port.ts) of an open store: SQLite's or PostgreSQL's implementation, picked here and
 * nowhere above src/store. One per store, made by its first caller: everything in the process shares it (on
 * PostgreSQL, its pool).
 */
import type { SQL } from "bun";
import type { Db } from "./db";
import type { Storage } from "./port";
import { CONNECTION_NAMES, openPool } from "./postgres/connection";
import { postgresStorage } from "./postgres/storage";
import { isPostgres } from "./postgres/handle";
import { sqliteStorage } from "./sqlite/storage";

/** The port's pool on PostgreSQL when nothing says otherwise (WEFT_DATABASE_POOL). */
export const DEFAULT_POOL = 8;

const made = new WeakMap<Db, Storage>();
const pools = new WeakMap<Db, SQL>();

/**
 * The port of `db`. `pool`: the most connections it holds at once on PostgreSQL (they open as queries need
 * them), taken from the first call; they close with the store.
 */
export function storageOf(db: Db, options: { pool?: number } = {}): Storage {
  let storage = made.get(db);
  if (storage) return storage;
  if (isPostgres(db)) {
    const pool = openPool(db.url, options.pool ?? DEFAULT_POOL);
    db.whenClosed(() => pool.close());
    pools.set(db, pool);
    storage = postgresStorage(pool);
  } else {
    storage = sqliteStorage(db);
  }
  made.set(db, storage);
  return storage;
}

/** The port's pool of a PostgreSQL store (the run writer commits its first batches on it), made if need be. */
export function postgresPoolOf(db: Db): SQL {
  storageOf(db);
  const pool = pools.get(db);
  if (!pool) throw new Error("not a PostgreSQL store");
  return pool;
}

const vital = new WeakMap<Db, Storage>();

/**
 * A port of `db` for the cluster's vital signs, the fleet heartbeat and the renewal of trigger leases: on
 * PostgreSQL a pool of its own (two connections), so neither waits behind the units queued for their lock
 * or a busy pool, and an instance that is working hard is not taken for a dead one. On SQLite, `storageOf`'s
 * (its calls never wait on anything slow).
 */
export function vitalStorageOf(db: Db): Storage {
  if (!isPostgres(db)) return storageOf(db);
  let storage = vital.get(db);
  if (storage) return storage;
  const pool = openPool(db.url, 2, CONNECTION_NAMES.vital);
  db.whenClosed(() => pool.close());
  storage = postgresStorage(pool);
  vital.set(db, storage);
  return storage;
}
