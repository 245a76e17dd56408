/**
 * Finds every value encrypted by src/core/crypto.ts anywhere in the database — whole column values and
 * blobs embedded in JSON text alike — so a key rotation can rewrite them without each module having to
 * register its encrypted columns. A blob is recognised by its shape (`v1:<keyId>:<nonce>:<data>`); the
 * caller's decryption (AES-GCM authenticates) decides whether it really is one.
 */
import type { Db } from "./db";
import { isPostgres } from "./postgres/sync-db";

export const BLOB_PATTERN = /v1:[0-9a-f]{8}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+/g;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface RewriteStats {
  /** Blobs rewritten. */
  rewritten: number;
  /** Blob-shaped strings left alone because `rewrite` returned them unchanged. */
  kept: number;
  /** Rows updated. */
  rows: number;
}

/**
 * Calls `rewrite(blob)` for every blob-shaped string in every text column and writes back what changed,
 * all in one transaction (so a crash leaves every value readable under the old key or all under the new).
 */
export function rewriteEncryptedValues(db: Db, rewrite: (blob: string) => string): RewriteStats {
  const stats: RewriteStats = { rewritten: 0, kept: 0, rows: 0 };
  const postgres = isPostgres(db);
  const tables = postgres
    ? db
        .query<{ name: string }, []>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
        )
        .all()
    : db.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all();
  db.transaction(() => {
    for (const { name: table } of tables) {
      const columns = postgres
        ? db
            .query<{ name: string }, [string]>(
              "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND data_type = 'text'",
            )
            .all(table)
        : db.query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)").all(table);
      for (const { name: column } of columns) {
        const col = ident(column);
        // SQLite columns may hold any type: only text values can be blobs. PostgreSQL's listed are text.
        const select = db.query<{ v: string }, []>(
          `SELECT DISTINCT ${col} AS v FROM ${ident(table)} WHERE ${postgres ? "" : `typeof(${col}) = 'text' AND `}instr(${col}, 'v1:') > 0`,
        );
        const update = db.query(`UPDATE ${ident(table)} SET ${col} = ? WHERE ${col} = ?`);
        for (const { v } of select.all()) {
          let changed = false;
          const next = v.replace(BLOB_PATTERN, (blob) => {
            const out = rewrite(blob);
            if (out === blob) stats.kept++;
            else {
              stats.rewritten++;
              changed = true;
            }
            return out;
          });
          if (changed) stats.rows += update.run(next, v).changes;
        }
      }
    }
  }).immediate();
  return stats;
}
