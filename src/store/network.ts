/** The instance-wide ranges allowed in Settings → Network (added to WEFT_ALLOW_CIDRS by src/core/network.ts). */
import { bindRow, type Db } from "./db";

export interface AllowedRangeRow {
  cidr: string;
  added_by: string;
  added_at: string;
}

export class NetworkRangeStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      list: db.query<AllowedRangeRow, []>("SELECT cidr, added_by, added_at FROM network_allowed_ranges ORDER BY added_at, cidr"),
      insert: db.query("INSERT INTO network_allowed_ranges (cidr, added_by, added_at) VALUES ($cidr, $added_by, $added_at)"),
      delete: db.query<never, [string]>("DELETE FROM network_allowed_ranges WHERE cidr = ?"),
    };
  }

  list(): AllowedRangeRow[] {
    return this.q.list.all();
  }

  insert(row: AllowedRangeRow): void {
    this.q.insert.run(bindRow(row));
  }

  delete(cidr: string): void {
    this.q.delete.run(cidr);
  }
}
