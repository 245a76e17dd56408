/** Idempotency records on PostgreSQL (../idempotency.ts says what each answers). */
import type { IdempotencyRepository, IdempotencyRow } from "../idempotency";
import type { PostgresConnection } from "./connection";

export class PostgresIdempotency implements IdempotencyRepository {
  constructor(private readonly c: PostgresConnection) {}

  get(credential: string, key: string, since: number) {
    return this.c.get<IdempotencyRow>("SELECT * FROM idempotency_records WHERE credential = $1 AND key = $2 AND created_at > $3", [credential, key, since]);
  }
  async claim(credential: string, key: string, fingerprint: string, owner: string | null, now: number, expiredAt: number) {
    const changed = await this.c.run(
      `INSERT INTO idempotency_records (credential, key, fingerprint, state, owner, created_at) VALUES ($1, $2, $3, 'running', $4, $5)
       ON CONFLICT (credential, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL,
         owner = excluded.owner, created_at = excluded.created_at
       WHERE idempotency_records.created_at <= $6`,
      [credential, key, fingerprint, owner, now, expiredAt],
    );
    return changed > 0;
  }
  async finish(credential: string, key: string, status: number, body: string) {
    await this.c.run("UPDATE idempotency_records SET state = 'done', status = $1, body = $2 WHERE credential = $3 AND key = $4", [
      status,
      body,
      credential,
      key,
    ]);
  }
  async release(credential: string, key: string) {
    await this.c.run("DELETE FROM idempotency_records WHERE credential = $1 AND key = $2 AND state = 'running'", [credential, key]);
  }
  prune(expiredAt: number) {
    return this.c.run("DELETE FROM idempotency_records WHERE created_at <= $1", [expiredAt]);
  }
  releaseRunningBefore(before: number) {
    return this.c.run("DELETE FROM idempotency_records WHERE state = 'running' AND created_at < $1", [before]);
  }
  async runningOwners() {
    return (await this.c.all<{ owner: string | null }>("SELECT DISTINCT owner FROM idempotency_records WHERE state = 'running'")).map((row) => row.owner);
  }
  releaseOwnedBy(owner: string | null) {
    return owner === null
      ? this.c.run("DELETE FROM idempotency_records WHERE state = 'running' AND owner IS NULL")
      : this.c.run("DELETE FROM idempotency_records WHERE state = 'running' AND owner = $1", [owner]);
  }
}
