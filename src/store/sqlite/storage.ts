/** The storage port (../port.ts) on the embedded SQLite database. */
import type { Database } from "bun:sqlite";
import type { Storage } from "../port";
import { storageError } from "../storage-errors";
import { SqliteConnection, turnsFor } from "./connection";
import { SqliteIdempotency } from "./idempotency";
import { SqliteConnections } from "./connections";
import { SqliteEncryptedValues } from "./encrypted-values";
import { SqliteIdentity } from "./identity";
import { SqliteKeyCheck } from "./key-check";
import { SqliteNetworkRanges } from "./network";
import { SqliteRunClaims } from "./run-claims";
import { SqliteRunRetention } from "./run-retention";
import { SqliteRunReads } from "./run-reads";
import { SqliteInstances } from "./instances";
import { SqliteKv } from "./kv";
import { SqliteLeases } from "./leases";
import { SqliteTriggers } from "./triggers";
import { SqliteFolders } from "./folders";
import { SqliteTemplates } from "./templates";
import { SqliteWorkflows } from "./workflows";

function repositories(connection: SqliteConnection) {
  return {
    identity: new SqliteIdentity(connection),
    idempotency: new SqliteIdempotency(connection),
    keyCheck: new SqliteKeyCheck(connection),
    networkRanges: new SqliteNetworkRanges(connection),
    runClaims: new SqliteRunClaims(connection),
    runRetention: new SqliteRunRetention(connection),
    runReads: new SqliteRunReads(connection),
    connections: new SqliteConnections(connection),
    encryptedValues: new SqliteEncryptedValues(connection),
    triggers: new SqliteTriggers(connection),
    leases: new SqliteLeases(connection),
    instances: new SqliteInstances(connection),
    kv: new SqliteKv(connection),
    workflows: new SqliteWorkflows(connection),
    folders: new SqliteFolders(connection),
    templates: new SqliteTemplates(connection),
  };
}

export function sqliteStorage(db: Database): Storage {
  const turns = turnsFor(db);
  // The unit's repositories skip the turns: while a unit runs, the connection is its own.
  const ping = () => new SqliteConnection(db, turns).do(() => void db.query("SELECT 1").get());
  const unit: Storage = { ...repositories(new SqliteConnection(db, null)), atomically: (work) => work(unit), ping };
  return {
    ...repositories(new SqliteConnection(db, turns)),
    ping,
    async atomically(work) {
      const release = await turns.take();
      try {
        // IMMEDIATE takes the write lock now: what the unit reads cannot change before it writes.
        db.run("BEGIN IMMEDIATE");
        try {
          const result = await work(unit);
          db.run("COMMIT");
          return result;
        } catch (error) {
          if (db.inTransaction) db.run("ROLLBACK");
          throw error;
        }
      } catch (error) {
        throw storageError(error) ?? error;
      } finally {
        release();
      }
    },
  };
}
