/** Idempotency records on SQLite (../idempotency.ts says what each answers). */
import type { Database } from "bun:sqlite";
import type { IdempotencyRepository, IdempotencyRow } from "../idempotency";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  get: db.query<IdempotencyRow, [string, string, number]>("SELECT * FROM idempotency_records WHERE credential = ? AND key = ? AND created_at > ?"),
  claim: db.query<null, [string, string, string, string | null, number, number]>(
    "INSERT INTO idempotency_records (credential, key, fingerprint, state, owner, created_at) VALUES (?, ?, ?, 'running', ?, ?) ON CONFLICT (credential, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL, owner = excluded.owner, created_at = excluded.created_at WHERE idempotency_records.created_at <= ?",
  ),
  finish: db.query<null, [number, string, string, string]>(
    "UPDATE idempotency_records SET state = 'done', status = ?, body = ? WHERE credential = ? AND key = ?",
  ),
  release: db.query<null, [string, string]>("DELETE FROM idempotency_records WHERE credential = ? AND key = ? AND state = 'running'"),
  prune: db.query<null, [number]>("DELETE FROM idempotency_records WHERE created_at <= ?"),
  releaseRunningBefore: db.query<null, [number]>("DELETE FROM idempotency_records WHERE state = 'running' AND created_at < ?"),
  runningOwners: db.query<{ owner: string | null }, []>("SELECT DISTINCT owner FROM idempotency_records WHERE state = 'running'"),
  releaseOwnedBy: db.query<null, [string]>("DELETE FROM idempotency_records WHERE state = 'running' AND owner = ?"),
  releaseUnowned: db.query<null, []>("DELETE FROM idempotency_records WHERE state = 'running' AND owner IS NULL"),
});

export class SqliteIdempotency extends Prepared(statements) implements IdempotencyRepository {
  get(credential: string, key: string, since: number) {
    return this.c.do(() => this.q.get.get(credential, key, since));
  }
  claim(credential: string, key: string, fingerprint: string, owner: string | null, now: number, expiredAt: number) {
    return this.c.do(() => this.q.claim.run(credential, key, fingerprint, owner, now, expiredAt).changes > 0);
  }
  finish(credential: string, key: string, status: number, body: string) {
    return this.c.do(() => void this.q.finish.run(status, body, credential, key));
  }
  release(credential: string, key: string) {
    return this.c.do(() => void this.q.release.run(credential, key));
  }
  prune(expiredAt: number) {
    return this.c.do(() => this.q.prune.run(expiredAt).changes);
  }
  releaseRunningBefore(before: number) {
    return this.c.do(() => this.q.releaseRunningBefore.run(before).changes);
  }
  runningOwners() {
    return this.c.do(() => this.q.runningOwners.all().map((row) => row.owner));
  }
  releaseOwnedBy(owner: string | null) {
    return this.c.do(() => (owner === null ? this.q.releaseUnowned.run() : this.q.releaseOwnedBy.run(owner)).changes);
  }
}
