/**
 * SQLite's run statements (RunStore) on an app's connection, for the SQLite-only tests that seed or inspect
 * stored runs row by row; one per connection, as the engine's `store` getter was (the engine itself reads and
 * writes runs through the storage port and the run writer, and imports no database's folder). On PostgreSQL
 * there is none: the store's Db answers no SQL there (use the run writer, the port or appSql).
 */
import type { Db } from "../../src/store/db";
import { RunStore } from "../../src/store/sqlite/run-store";

const stores = new WeakMap<Db, RunStore>();

export function sqliteRunStore(app: { db: Db; databaseUrl?: string | null }): RunStore {
  if (app.databaseUrl) throw new Error("sqliteRunStore: the app is on PostgreSQL, whose Db answers no SQL (use the run writer, the port or appSql)");
  let store = stores.get(app.db);
  if (!store) {
    store = new RunStore(app.db);
    stores.set(app.db, store);
  }
  return store;
}
