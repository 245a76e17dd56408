/**
 * Everything an app's store holds, as text: the SQLite file's bytes (after a checkpoint, so the WAL's are
 * in it), or on the PostgreSQL pass every text column of every table. For tests that check a secret is
 * never stored in the clear, or that every copy of a value was rewritten.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../src/store/db";

export function storedText(app: { db: Db; dataDir: string; databaseUrl: string | null }): string {
  if (app.databaseUrl) {
    const columns = app.db
      .query("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'text'")
      .all() as Array<{ table_name: string; column_name: string }>;
    return columns
      .flatMap(({ table_name, column_name }) =>
        (app.db.query(`SELECT "${column_name}" AS v FROM "${table_name}"`).all() as Array<{ v: string | null }>).map((r) => r.v ?? ""),
      )
      .join("\n");
  }
  app.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  return readFileSync(join(app.dataDir, "weft.db")).toString("latin1");
}
