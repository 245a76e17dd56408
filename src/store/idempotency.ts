/**
 * Idempotency records: one per (credential, key), kept 24 hours. While a request runs, its record's `owner`
 * names the instance executing it (its fleet id; NULL on SQLite, where one process owns the database), so in
 * a cluster only the claims of instances that died are released; once answered, `body` is the answer. The
 * rows and what the storage port (./port.ts) answers about them.
 */
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

export interface IdempotencyRepository {
  /** The record of (credential, key) made after `since` (epoch ms), or null. */
  get(credential: string, key: string, since: number): Promise<IdempotencyRow | null>;
  /**
   * Inserts a running record for `owner` (the instance executing the request; null alone on SQLite), or takes
   * over one made at or before `expiredAt`; true when this call owns the key. The unique (credential, key) is
   * the lock: of two instances claiming at once, one inserts and the other finds the row.
   */
  claim(credential: string, key: string, fingerprint: string, owner: string | null, now: number, expiredAt: number): Promise<boolean>;
  finish(credential: string, key: string, status: number, body: string): Promise<void>;
  /** Deletes the record while it is running (a 5xx answer: the key may be used again). */
  release(credential: string, key: string): Promise<void>;
  /** Deletes every record made at or before `expiredAt`; answers how many. */
  prune(expiredAt: number): Promise<number>;
  /** Deletes the running records made before `before`; answers how many. */
  releaseRunningBefore(before: number): Promise<number>;
  /** The instances named by running records (null: a record naming none). */
  runningOwners(): Promise<Array<string | null>>;
  /** Deletes the running records of `owner` (null: those naming no instance); answers how many. */
  releaseOwnedBy(owner: string | null): Promise<number>;
}
