/**
 * Encrypted values on PostgreSQL (../encrypted-values.ts says what is answered): every text column of every
 * table of the schema, each statement awaited on the unit's connection (its transaction makes them one).
 */
import { type EncryptedValueRepository, ident, type RewriteStats, rewrittenText } from "../encrypted-values";
import type { PostgresConnection } from "./connection";

export class PostgresEncryptedValues implements EncryptedValueRepository {
  constructor(private readonly c: PostgresConnection) {}

  async rewriteAll(rewrite: (blob: string) => string) {
    const stats: RewriteStats = { rewritten: 0, kept: 0, rows: 0 };
    const tables = await this.c.all<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    for (const { name: table } of tables) {
      const columns = await this.c.all<{ name: string }>(
        "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND data_type = 'text' ORDER BY ordinal_position",
        [table],
      );
      for (const { name: column } of columns) {
        const col = ident(column);
        const values = await this.c.all<{ v: string }>(`SELECT DISTINCT ${col} AS v FROM ${ident(table)} WHERE strpos(${col}, 'v1:') > 0`);
        for (const { v } of values) {
          const next = rewrittenText(v, rewrite, stats);
          if (next !== null) stats.rows += await this.c.run(`UPDATE ${ident(table)} SET ${col} = $1 WHERE ${col} = $2`, [next, v]);
        }
      }
    }
    return stats;
  }
}
