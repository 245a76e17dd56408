/** The encryption key check on SQLite (../key-check.ts says what each answers). */
import type { Database } from "bun:sqlite";
import { CURRENT_CHECK, type KeyCheckRepository } from "../key-check";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  get: db.query<{ value: string }, [string]>("SELECT value FROM encryption_key_check WHERE name = ?"),
  record: db.query<null, [string, string, string]>("INSERT OR IGNORE INTO encryption_key_check (name, value, recorded_at) VALUES (?, ?, ?)"),
  secretKeyIds: db.query<{ key_id: string }, []>(
    `SELECT substr(secrets, 4, 8) AS key_id FROM connections WHERE secrets LIKE 'v1:%'
     UNION SELECT substr(tokens, 4, 8) FROM connections WHERE tokens LIKE 'v1:%'
     UNION SELECT substr(value, 4, 8) FROM workflow_variables WHERE secret = 1 AND value LIKE 'v1:%'`,
  ),
});

export class SqliteKeyCheck extends Prepared(statements) implements KeyCheckRepository {
  current() {
    return this.c.do(() => this.q.get.get(CURRENT_CHECK)?.value ?? null);
  }
  recordIfAbsent(value: string, at: string) {
    return this.c.do(() => this.q.record.run(CURRENT_CHECK, value, at).changes > 0);
  }
  secretKeyIds() {
    return this.c.do(() => this.q.secretKeyIds.all().map((row) => row.key_id));
  }
}
