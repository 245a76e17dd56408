/** The storage port (../port.ts) on PostgreSQL: a pool of Bun's SQL client, every query awaited. */
import type { SQL } from "bun";
import type { Storage } from "../port";
import { PostgresConnection } from "./connection";
import { PostgresIdentity } from "./identity";
import { PostgresNetworkRanges } from "./network";
import { PostgresFolders } from "./folders";
import { PostgresTemplates } from "./templates";
import { PostgresWorkflows } from "./workflows";

/**
 * The advisory lock a unit holds until its commit: "weftport" in ASCII. BEGIN locks nothing on PostgreSQL and
 * the other instances of a cluster write meanwhile, so a check made inside a unit ("no user yet", "this name is
 * free") would not hold until its write; units of every instance take turns instead, as SQLite's writers do
 * (docs/scaling.md, "Start-up and shared state"). Apart from the synchronous units' lock (../db.ts): a unit
 * here waits for its lock without holding the thread, and one of those would hold the thread while it waits.
 */
export const PORT_UNIT_LOCK_KEY = 0x7765_6674_706f_7274n;

function repositories(connection: PostgresConnection) {
  return {
    identity: new PostgresIdentity(connection),
    networkRanges: new PostgresNetworkRanges(connection),
    workflows: new PostgresWorkflows(connection),
    folders: new PostgresFolders(connection),
    templates: new PostgresTemplates(connection),
  };
}

export function postgresStorage(pool: SQL): Storage {
  return {
    ...repositories(new PostgresConnection(pool)),
    atomically<T>(work: (unit: Storage) => Promise<T>): Promise<T> {
      return pool.begin(async (tx) => {
        const connection = new PostgresConnection(tx);
        await connection.run(`SELECT pg_advisory_xact_lock(${PORT_UNIT_LOCK_KEY})`);
        const unit: Storage = { ...repositories(connection), atomically: (inner) => inner(unit) };
        return await work(unit);
      }) as Promise<T>;
    },
  };
}
