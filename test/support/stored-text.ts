/**
 * Everything an app's store holds, as text: the SQLite file's bytes (after a checkpoint, so the WAL's are
 * in it), or on the PostgreSQL pass every text column of every table, read on the test's own connection
 * (postgresClient: the store's Db answers no SQL there). For tests that check a secret is never stored in the
 * clear, or that every copy of a value was rewritten.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../src/store/db";
import { postgresClient } from "./postgres-storage";

export async function storedText(app: { db: Db; dataDir: string; databaseUrl: string | null }): Promise<string> {
  if (app.databaseUrl) {
    const c = postgresClient(app.databaseUrl);
    const columns = await c.all<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'text'",
    );
    const texts: string[] = [];
    for (const { table_name, column_name } of columns) {
      for (const { v } of await c.all<{ v: string | null }>(`SELECT "${column_name}" AS v FROM "${table_name}"`)) texts.push(v ?? "");
    }
    return texts.join("\n");
  }
  app.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  return readFileSync(join(app.dataDir, "weft.db")).toString("latin1");
}
