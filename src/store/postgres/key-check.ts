/** The encryption key check on PostgreSQL (../key-check.ts says what each answers). */
import { CURRENT_CHECK, type KeyCheckRepository } from "../key-check";
import type { PostgresConnection } from "./connection";

export class PostgresKeyCheck implements KeyCheckRepository {
  constructor(private readonly c: PostgresConnection) {}

  async current() {
    return (await this.c.get<{ value: string }>("SELECT value FROM encryption_key_check WHERE name = $1", [CURRENT_CHECK]))?.value ?? null;
  }
  async recordIfAbsent(value: string, at: string) {
    const changed = await this.c.run("INSERT INTO encryption_key_check (name, value, recorded_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
      CURRENT_CHECK,
      value,
      at,
    ]);
    return changed > 0;
  }
  async secretKeyIds() {
    const rows = await this.c.all<{ key_id: string }>(
      `SELECT substr(secrets, 4, 8) AS key_id FROM connections WHERE secrets LIKE 'v1:%'
       UNION SELECT substr(tokens, 4, 8) FROM connections WHERE tokens LIKE 'v1:%'
       UNION SELECT substr(value, 4, 8) FROM workflow_variables WHERE secret = 1 AND value LIKE 'v1:%'`,
    );
    return rows.map((row) => row.key_id);
  }
}
