/** Idempotency records: one per (credential, key), kept 24 hours. */
import type { Db } from "./db";

export interface IdempotencyRow {
  credential: string;
  key: string;
  fingerprint: string;
  state: "running" | "done";
  status: number | null;
  body: string | null;
  created_at: number;
}

export const IDEMPOTENCY_RETENTION_MS = 24 * 3600 * 1000;

export class IdempotencyStore {
  private readonly q;
  constructor(db: Db) {
    this.q = {
      get: db.query<IdempotencyRow, [string, string, number]>("SELECT * FROM idempotency_records WHERE credential = ? AND key = ? AND created_at > ?"),
      claim: db.query(
        "INSERT INTO idempotency_records (credential, key, fingerprint, state, created_at) VALUES (?, ?, ?, 'running', ?) ON CONFLICT (credential, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL, created_at = excluded.created_at WHERE idempotency_records.created_at <= ?",
      ),
      finish: db.query("UPDATE idempotency_records SET state = 'done', status = ?, body = ? WHERE credential = ? AND key = ?"),
      release: db.query("DELETE FROM idempotency_records WHERE credential = ? AND key = ? AND state = 'running'"),
      prune: db.query("DELETE FROM idempotency_records WHERE created_at <= ?"),
      releaseAbandoned: db.query("DELETE FROM idempotency_records WHERE state = 'running' AND created_at < ?"),
    };
  }

  get(credential: string, key: string, now = Date.now()) {
    return this.q.get.get(credential, key, now - IDEMPOTENCY_RETENTION_MS);
  }

  /** Inserts a running record; true when this call owns the key (none existed or it had expired). */
  claim(credential: string, key: string, fingerprint: string, now = Date.now()): boolean {
    return this.q.claim.run(credential, key, fingerprint, now, now - IDEMPOTENCY_RETENTION_MS).changes > 0;
  }

  finish(credential: string, key: string, status: number, body: string) {
    this.q.finish.run(status, body, credential, key);
  }

  release(credential: string, key: string) {
    this.q.release.run(credential, key);
  }

  /**
   * Start-up: claims left `running` by a process that died can never finish; without this their keys would
   * answer 409 for 24 h. Released, a retry with the key executes the request again.
   */
  releaseAbandoned(before = Date.now()): number {
    return this.q.releaseAbandoned.run(before).changes;
  }

  prune(now = Date.now()) {
    return this.q.prune.run(now - IDEMPOTENCY_RETENTION_MS).changes;
  }
}
