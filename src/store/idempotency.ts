/**
 * Idempotency records: one per (credential, key), kept 24 hours. While a request runs, its record's `owner`
 * names the instance executing it (its fleet id; NULL on SQLite, where one process owns the database), so in
 * a cluster only the claims of instances that died are released; once answered, `body` is the answer.
 */
import type { Db } from "./db";

export interface IdempotencyRow {
  credential: string;
  key: string;
  fingerprint: string;
  state: "running" | "done";
  status: number | null;
  /** The stored answer (JSON) once `done`. */
  body: string | null;
  /** The instance executing the request while `running` (migration 14); null alone on SQLite. */
  owner: string | null;
  created_at: number;
}

export const IDEMPOTENCY_RETENTION_MS = 24 * 3600 * 1000;

export class IdempotencyStore {
  private readonly q;
  constructor(db: Db) {
    this.q = {
      get: db.query<IdempotencyRow, [string, string, number]>("SELECT * FROM idempotency_records WHERE credential = ? AND key = ? AND created_at > ?"),
      // The unique (credential, key) makes this the lock: of two instances claiming at once, one inserts and the other finds the row.
      claim: db.query(
        "INSERT INTO idempotency_records (credential, key, fingerprint, state, owner, created_at) VALUES (?, ?, ?, 'running', ?, ?) ON CONFLICT (credential, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL, owner = excluded.owner, created_at = excluded.created_at WHERE idempotency_records.created_at <= ?",
      ),
      finish: db.query("UPDATE idempotency_records SET state = 'done', status = ?, body = ? WHERE credential = ? AND key = ?"),
      release: db.query("DELETE FROM idempotency_records WHERE credential = ? AND key = ? AND state = 'running'"),
      prune: db.query("DELETE FROM idempotency_records WHERE created_at <= ?"),
      releaseAbandoned: db.query("DELETE FROM idempotency_records WHERE state = 'running' AND created_at < ?"),
      runningOwners: db.query<{ owner: string | null }, []>("SELECT DISTINCT owner FROM idempotency_records WHERE state = 'running'"),
      releaseOwnedBy: db.query<never, [string]>("DELETE FROM idempotency_records WHERE state = 'running' AND owner = ?"),
      releaseUnowned: db.query("DELETE FROM idempotency_records WHERE state = 'running' AND owner IS NULL"),
    };
  }

  get(credential: string, key: string, now = Date.now()) {
    return this.q.get.get(credential, key, now - IDEMPOTENCY_RETENTION_MS);
  }

  /**
   * Inserts a running record for `owner` (the instance executing the request; null alone on SQLite); true
   * when this call owns the key (none existed or it had expired).
   */
  claim(credential: string, key: string, fingerprint: string, owner: string | null = null, now = Date.now()): boolean {
    return this.q.claim.run(credential, key, fingerprint, owner, now, now - IDEMPOTENCY_RETENTION_MS).changes > 0;
  }

  finish(credential: string, key: string, status: number, body: string) {
    this.q.finish.run(status, body, credential, key);
  }

  release(credential: string, key: string) {
    this.q.release.run(credential, key);
  }

  /**
   * Start-up on SQLite: claims left `running` by a process that died can never finish; without this their keys
   * would answer 409 for 24 h. Released, a retry with the key executes the request again.
   */
  releaseAbandoned(before = Date.now()): number {
    return this.q.releaseAbandoned.run(before).changes;
  }

  /**
   * A cluster: releases the running claims of every instance not in `alive` (it died), and those naming no
   * instance (made by a version that did not record it). The claims of live instances stay: they are running.
   */
  releaseAbandonedExcept(alive: ReadonlySet<string>): number {
    let released = 0;
    for (const { owner } of this.q.runningOwners.all()) {
      if (owner === null) released += this.q.releaseUnowned.run().changes;
      else if (!alive.has(owner)) released += this.q.releaseOwnedBy.run(owner).changes;
    }
    return released;
  }

  prune(now = Date.now()) {
    return this.q.prune.run(now - IDEMPOTENCY_RETENTION_MS).changes;
  }
}
