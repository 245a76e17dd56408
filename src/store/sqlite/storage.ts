/** The storage port (../port.ts) on the embedded SQLite database. */
import type { Database } from "bun:sqlite";
import type { Storage } from "../port";
import { storageError } from "../storage-errors";
import { SqliteConnection, turnsFor } from "./connection";
import { SqliteIdentity } from "./identity";
import { SqliteNetworkRanges } from "./network";
import { SqliteFolders } from "./folders";
import { SqliteTemplates } from "./templates";
import { SqliteWorkflows } from "./workflows";

function repositories(connection: SqliteConnection) {
  return {
    identity: new SqliteIdentity(connection),
    networkRanges: new SqliteNetworkRanges(connection),
    workflows: new SqliteWorkflows(connection),
    folders: new SqliteFolders(connection),
    templates: new SqliteTemplates(connection),
  };
}

export function sqliteStorage(db: Database): Storage {
  const turns = turnsFor(db);
  // The unit's repositories skip the turns: while a unit runs, the connection is its own.
  const unit: Storage = { ...repositories(new SqliteConnection(db, null)), atomically: (work) => work(unit) };
  return {
    ...repositories(new SqliteConnection(db, turns)),
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
