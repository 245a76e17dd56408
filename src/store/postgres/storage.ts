/** The storage port (../port.ts) on PostgreSQL: a pool of Bun's SQL client, every query awaited. */
import type { SQL } from "bun";
import type { Storage } from "../port";
import { PostgresConnection } from "./connection";
import { postgresSchemaVersion } from "./db";
import { postgresMigrations } from "./migrations";
import { PostgresIdempotency } from "./idempotency";
import { PostgresConnections } from "./connections";
import { PostgresEncryptedValues } from "./encrypted-values";
import { PostgresIdentity } from "./identity";
import { PostgresKeyCheck } from "./key-check";
import { PostgresNetworkRanges } from "./network";
import { PostgresAudit } from "./audit";
import { PostgresRunClaims } from "./run-claims";
import { PostgresSecondFactor } from "./second-factor";
import { PostgresRunNames } from "./run-names";
import { PostgresRunRetention } from "./run-retention";
import { PostgresRunReads } from "./run-reads";
import { PostgresRunInserts } from "./run-inserts";
import { PostgresInstances } from "./instances";
import { PostgresKv } from "./kv";
import { PostgresLeases } from "./leases";
import { PostgresTriggers } from "./triggers";
import { PostgresFolders } from "./folders";
import { PostgresTemplates } from "./templates";
import { PostgresGitSync } from "./git-sync";
import { PostgresWorkflows } from "./workflows";

/**
 * The advisory lock a unit holds until its commit: "weftport" in ASCII. BEGIN locks nothing on PostgreSQL and
 * the other instances of a cluster write meanwhile, so a check made inside a unit ("no user yet", "this name is
 * free") would not hold until its write; units of every instance take turns instead, as SQLite's writers do
 * (docs/scaling.md, "Start-up and shared state"). A unit waits for its turn without holding the thread.
 */
export const PORT_UNIT_LOCK_KEY = 0x7765_6674_706f_7274n;

function repositories(connection: PostgresConnection) {
  const runNames = new PostgresRunNames(connection);
  return {
    identity: new PostgresIdentity(connection),
    idempotency: new PostgresIdempotency(connection),
    keyCheck: new PostgresKeyCheck(connection),
    networkRanges: new PostgresNetworkRanges(connection),
    audit: new PostgresAudit(connection),
    secondFactor: new PostgresSecondFactor(connection),
    runClaims: new PostgresRunClaims(connection, runNames),
    runRetention: new PostgresRunRetention(connection, runNames),
    runReads: new PostgresRunReads(connection, runNames),
    runInserts: new PostgresRunInserts(connection, runNames),
    connections: new PostgresConnections(connection),
    encryptedValues: new PostgresEncryptedValues(connection),
    triggers: new PostgresTriggers(connection),
    leases: new PostgresLeases(connection),
    instances: new PostgresInstances(connection),
    kv: new PostgresKv(connection),
    workflows: new PostgresWorkflows(connection),
    folders: new PostgresFolders(connection),
    templates: new PostgresTemplates(connection),
    gitSync: new PostgresGitSync(connection),
  };
}

export function postgresStorage(pool: SQL): Storage {
  const main = new PostgresConnection(pool);
  const ping = async () => void (await main.run("SELECT 1"));
  const latest = postgresMigrations.at(-1)?.version ?? 0;
  const schemaVersion = async () => ({ version: await postgresSchemaVersion(pool), latest });
  return {
    ...repositories(main),
    ping,
    schemaVersion,
    afterCommit: (then) => then(),
    async atomically<T>(work: (unit: Storage) => Promise<T>): Promise<T> {
      const committed: Array<() => void> = [];
      const result = (await pool.begin(async (tx) => {
        const connection = new PostgresConnection(tx);
        await connection.run(`SELECT pg_advisory_xact_lock(${PORT_UNIT_LOCK_KEY})`);
        const unit: Storage = {
          ...repositories(connection),
          atomically: (inner) => inner(unit),
          ping,
          schemaVersion,
          afterCommit: (then) => void committed.push(then),
        };
        return await work(unit);
      })) as T;
      for (const then of committed) then();
      return result;
    },
  };
}
