/** Encrypted values on SQLite (../encrypted-values.ts says what is answered), in one transaction of their own or the caller's unit's. */
import { type EncryptedValueRepository, ident, type RewriteStats, rewrittenText } from "../encrypted-values";
import type { SqliteConnection } from "./connection";

export class SqliteEncryptedValues implements EncryptedValueRepository {
  constructor(private readonly c: SqliteConnection) {}

  rewriteAll(rewrite: (blob: string) => string) {
    return this.c.do(() => {
      const db = this.c.db;
      const stats: RewriteStats = { rewritten: 0, kept: 0, rows: 0 };
      const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all();
      // Inside a unit this is a savepoint of its transaction.
      db.transaction(() => {
        for (const { name: table } of tables) {
          for (const { name: column } of db.query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)").all(table)) {
            const col = ident(column);
            // SQLite columns may hold any type: only text values can be blobs.
            const select = db.query<{ v: string }, []>(
              `SELECT DISTINCT ${col} AS v FROM ${ident(table)} WHERE typeof(${col}) = 'text' AND instr(${col}, 'v1:') > 0`,
            );
            const update = db.query(`UPDATE ${ident(table)} SET ${col} = ? WHERE ${col} = ?`);
            for (const { v } of select.all()) {
              const next = rewrittenText(v, rewrite, stats);
              if (next !== null) stats.rows += update.run(next, v).changes;
            }
          }
        }
      }).immediate();
      return stats;
    });
  }
}
