/** The allowed address ranges on PostgreSQL (../network.ts says what each answers). */
import type { AllowedRangeRow, NetworkRangeRepository } from "../network";
import type { PostgresConnection } from "./connection";

export class PostgresNetworkRanges implements NetworkRangeRepository {
  constructor(private readonly c: PostgresConnection) {}

  list() {
    return this.c.all<AllowedRangeRow>("SELECT cidr, added_by, added_at FROM network_allowed_ranges ORDER BY added_at, cidr");
  }
  async insert(row: AllowedRangeRow) {
    await this.c.insert("network_allowed_ranges", ["cidr", "added_by", "added_at"], row);
  }
  async delete(cidr: string) {
    await this.c.run("DELETE FROM network_allowed_ranges WHERE cidr = $1", [cidr]);
  }
}
