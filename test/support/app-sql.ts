/**
 * A test's own SQL on an app's store, awaited, on either database: on SQLite on the app's connection, on
 * PostgreSQL on a connection of the test's own (postgresClient: the store's Db answers no SQL there).
 * Statements use `?` placeholders and are written in SQL both databases take; on PostgreSQL each `?` becomes
 * `$1`, `$2`, … in order (so never put a `?` inside a string literal). Counts arrive as numbers on both.
 *   const sql = appSql(t);
 *   const { n } = (await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM workflows"))!;
 */
import type { Db } from "../../src/store/db";
import { postgresClient } from "./postgres-storage";

export interface AppSql {
  all<T>(text: string, params?: unknown[]): Promise<T[]>;
  get<T>(text: string, params?: unknown[]): Promise<T | null>;
  run(text: string, params?: unknown[]): Promise<void>;
}

const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

export function appSql(app: { db: Db; databaseUrl: string | null }): AppSql {
  if (app.databaseUrl) {
    const client = postgresClient(app.databaseUrl);
    return {
      all: (text, params = []) => client.all(numbered(text), params),
      get: (text, params = []) => client.get(numbered(text), params),
      run: async (text, params = []) => {
        await client.run(numbered(text), params);
      },
    };
  }
  const db = app.db;
  return {
    all: async <T>(text: string, params: unknown[] = []) => db.query(text).all(...(params as never[])) as T[],
    get: async <T>(text: string, params: unknown[] = []) => (db.query(text).get(...(params as never[])) as T | null) ?? null,
    run: async (text, params = []) => {
      db.query(text).run(...(params as never[]));
    },
  };
}
