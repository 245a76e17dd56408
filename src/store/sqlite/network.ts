/** The allowed address ranges on SQLite (../network.ts says what each answers). */
import type { AllowedRangeRow, NetworkRangeRepository } from "../network";
import type { SqliteConnection } from "./connection";

export class SqliteNetworkRanges implements NetworkRangeRepository {
  private readonly q;

  constructor(private readonly c: SqliteConnection) {
    this.q = {
      list: c.db.query<AllowedRangeRow, []>("SELECT cidr, added_by, added_at FROM network_allowed_ranges ORDER BY added_at, cidr"),
      insert: c.db.query<null, [string, string, string]>("INSERT INTO network_allowed_ranges (cidr, added_by, added_at) VALUES (?, ?, ?)"),
      delete: c.db.query<null, [string]>("DELETE FROM network_allowed_ranges WHERE cidr = ?"),
    };
  }

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
