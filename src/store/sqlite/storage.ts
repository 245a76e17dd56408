/** The storage port (../port.ts) on the embedded SQLite database. */
import type { Database } from "bun:sqlite";
import type { Storage } from "../port";
import { schemaVersion as storedVersion } from "./db";
import { storageError } from "../storage-errors";
import { migrations } from "./migrations";
import { CommitSync } from "./commit-sync";
import { SqliteConnection, turnsFor } from "./connection";
import { SqliteIdempotency } from "./idempotency";
import { SqliteConnections } from "./connections";
import { SqliteEncryptedValues } from "./encrypted-values";
import { SqliteIdentity } from "./identity";
import { SqliteKeyCheck } from "./key-check";
import { SqliteNetworkRanges } from "./network";
import { SqliteAudit } from "./audit";
import { SqliteRunClaims } from "./run-claims";
import { SqliteSecondFactor } from "./second-factor";
import { SqliteRunRetention } from "./run-retention";
import { SqliteRunReads } from "./run-reads";
import { SqliteRunInserts } from "./run-inserts";
import { SqliteInstances } from "./instances";
import { SqliteKv } from "./kv";
import { SqliteLeases } from "./leases";
import { SqliteTriggers } from "./triggers";
import { SqliteFolders } from "./folders";
import { SqliteTemplates } from "./templates";
import { SqliteGitSync } from "./git-sync";
import { SqliteWorkflows } from "./workflows";

function repositories(connection: SqliteConnection) {
  return {
    identity: new SqliteIdentity(connection),
    idempotency: new SqliteIdempotency(connection),
    keyCheck: new SqliteKeyCheck(connection),
    networkRanges: new SqliteNetworkRanges(connection),
    audit: new SqliteAudit(connection),
    secondFactor: new SqliteSecondFactor(connection),
    runClaims: new SqliteRunClaims(connection),
    runRetention: new SqliteRunRetention(connection),
    runReads: new SqliteRunReads(connection),
    runInserts: new SqliteRunInserts(connection),
    connections: new SqliteConnections(connection),
    encryptedValues: new SqliteEncryptedValues(connection),
    triggers: new SqliteTriggers(connection),
    leases: new SqliteLeases(connection),
    instances: new SqliteInstances(connection),
    kv: new SqliteKv(connection),
    workflows: new SqliteWorkflows(connection),
    folders: new SqliteFolders(connection),
    templates: new SqliteTemplates(connection),
    gitSync: new SqliteGitSync(connection),
  };
}

export function sqliteStorage(db: Database): Storage {
  const turns = turnsFor(db);
  // The unit's repositories skip the turns: while a unit runs, the connection is its own.
  const ping = () => new SqliteConnection(db, turns).do(() => void db.query("SELECT 1").get());
  const latest = migrations.at(-1)?.version ?? 0;
  const schemaVersion = () => new SqliteConnection(db, turns).do(() => ({ version: storedVersion(db), latest }));
  const unitRepositories = repositories(new SqliteConnection(db, null));
  const commits = CommitSync.of(db);
  return {
    ...repositories(new SqliteConnection(db, turns)),
    ping,
    schemaVersion,
    afterCommit: (then) => then(),
    async atomically(work) {
      const release = await turns.take();
      const committed: Array<() => void> = [];
      const unit: Storage = { ...unitRepositories, atomically: (inner) => inner(unit), ping, schemaVersion, afterCommit: (then) => void committed.push(then) };
      // Committed without an fsync on this thread; the unit's caller goes on once it is on disk (./commit-sync.ts).
      const before = commits?.begin();
      let outcome: { result: Awaited<ReturnType<typeof work>> } | { error: unknown };
      try {
        // IMMEDIATE takes the write lock now: what the unit reads cannot change before it writes.
        db.run("BEGIN IMMEDIATE");
        try {
          outcome = { result: await work(unit) };
          db.run("COMMIT");
        } catch (error) {
          if (db.inTransaction) db.run("ROLLBACK");
          throw error;
        }
      } catch (error) {
        outcome = { error: storageError(error) ?? error };
      }
      const synced = before === undefined ? undefined : commits!.end(before);
      release();
      if ("error" in outcome) {
        // A unit rolled back has nothing of its own to wait for.
        synced?.catch(() => {});
        throw outcome.error;
      }
      await synced;
      const { result } = outcome;
      for (const then of committed) then();
      return result;
    },
  };
}
