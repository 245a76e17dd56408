/** The allowed address ranges on SQLite (../network.ts says what each answers). */
import type { Database } from "bun:sqlite";
import type { AllowedRangeRow, NetworkRangeRepository } from "../network";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  list: db.query<AllowedRangeRow, []>("SELECT cidr, added_by, added_at FROM network_allowed_ranges ORDER BY added_at, cidr"),
  insert: db.query<null, [string, string, string]>("INSERT INTO network_allowed_ranges (cidr, added_by, added_at) VALUES (?, ?, ?)"),
  delete: db.query<null, [string]>("DELETE FROM network_allowed_ranges WHERE cidr = ?"),
});

export class SqliteNetworkRanges extends Prepared(statements) implements NetworkRangeRepository {
  list() {
    return this.c.do(() => this.q.list.all());
  }
  insert(row: AllowedRangeRow) {
    return this.c.do(() => void this.q.insert.run(row.cidr, row.added_by, row.added_at));
  }
  delete(cidr: string) {
    return this.c.do(() => void this.q.delete.run(cidr));
  }
}
