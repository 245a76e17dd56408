/**
 * The storage port: what Weft asks of its database, area by area, with two implementations of its own,
 * src/store/sqlite/ (bun:sqlite, embedded) and src/store/postgres/ (Bun's SQL client, a pool), each in its own
 * SQL dialect. Every method answers a promise on both: a database on another host delays only the caller that
 * asked, and code above the store never knows which database it runs on (`storageOf`, ./storage.ts, picks).
 *
 * Every area is on the port. What is not an area's repository is the run writer (./run-writer.ts picks one:
 * SQLite's group commit on a thread of its own, or PostgreSQL's batches on its lanes), which the engine hands
 * its writes to as data (./run-writes.ts), and the reader threads of the heavy run reads (./run-reads.ts).
 */
import type { AuditRepository } from "./audit";
import type { IdempotencyRepository } from "./idempotency";
import type { ConnectionRepository } from "./connections";
import type { EncryptedValueRepository } from "./encrypted-values";
import type { GitSyncRepository } from "./git-sync";
import type { IdentityRepository } from "./identity";
import type { KeyCheckRepository } from "./key-check";
import type { NetworkRangeRepository } from "./network";
import type { RunClaimRepository } from "./run-claims";
import type { SecondFactorRepository } from "./second-factor";
import type { RunRetentionRepository } from "./run-retention";
import type { RunReadRepository } from "./run-read-repository";
import type { RunInsertRepository } from "./run-inserts";
import type { InstanceRepository } from "./instances";
import type { KvRepository } from "./kv";
import type { LeaseRepository } from "./leases";
import type { TriggerRepository } from "./triggers";
import type { FolderRepository } from "./folders";
import type { TemplateRepository } from "./templates";
import type { WorkflowRepository } from "./workflows";

/** The repositories of every area on the port. */
export interface Repositories {
  readonly audit: AuditRepository;
  readonly identity: IdentityRepository;
  readonly idempotency: IdempotencyRepository;
  readonly keyCheck: KeyCheckRepository;
  readonly connections: ConnectionRepository;
  readonly encryptedValues: EncryptedValueRepository;
  readonly networkRanges: NetworkRangeRepository;
  readonly secondFactor: SecondFactorRepository;
  readonly runClaims: RunClaimRepository;
  readonly runRetention: RunRetentionRepository;
  readonly runReads: RunReadRepository;
  readonly runInserts: RunInsertRepository;
  readonly triggers: TriggerRepository;
  readonly leases: LeaseRepository;
  readonly instances: InstanceRepository;
  readonly kv: KvRepository;
  readonly workflows: WorkflowRepository;
  readonly folders: FolderRepository;
  readonly templates: TemplateRepository;
  readonly gitSync: GitSyncRepository;
}

export interface Storage extends Repositories {
  /**
   * Runs `work` as one unit: every write it makes through the `unit` it is given is kept, or none is (an error
   * it throws rolls all back, and is thrown on). What `work` reads through `unit` cannot change before it
   * writes: on SQLite the unit holds the process's connection (other calls wait for it); on PostgreSQL it
   * holds a pooled connection and a cluster-wide advisory lock, so units of every instance take turns.
   *
   * `work` awaits only the unit's own calls: anything slower (hashing a password, a network call) is done
   * before the unit starts. `unit.atomically` joins the unit it is called on.
   */
  atomically<T>(work: (unit: Storage) => Promise<T>): Promise<T>;
  /**
   * Calls `then` once what this unit wrote is committed (never when it rolls back); on the storage itself
   * (no unit), at once. For work that must not see a write before others can: the engine queues a run
   * inserted inside a unit only after the unit commits.
   */
  afterCommit(then: () => void): void;
  /** Rejects when the database cannot answer a trivial query (the health check). */
  ping(): Promise<void>;
  /** The database's schema version, and the newest one this build's migrations reach (the readiness check). */
  schemaVersion(): Promise<{ version: number; latest: number }>;
}
