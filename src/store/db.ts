/**
 * The store as the rest of Weft holds it (`Db`), and what both databases' openers share: the refusal of a
 * newer schema, the notice of an upgrade, and the time rows are stamped with. Opening SQLite is
 * ./sqlite/db.ts, opening PostgreSQL ./postgres/db.ts; ./open.ts picks one.
 */
import type { Database } from "bun:sqlite";

/**
 * The open store: SQLite's connection, or PostgreSQL's handle (./postgres/handle.ts), which poses as one and
 * answers only through the storage port. Code above src/store never learns which it holds.
 */
export type Db = Database;

/** What a weft refuses to open: a database a newer weft changed in ways this one does not know. */
export class NewerSchemaError extends Error {
  constructor(where: string, version: number, latest: number) {
    super(`${where} is at schema version ${version}, newer than this weft knows (${latest}): run the weft version that wrote it, or a newer one`);
  }
}

/**
 * A migration that failed. Migrations are applied in one transaction, so the database is as it was before the
 * upgrade started; the message says so and how to go back: the previous weft, and the copy written before.
 */
export class MigrationFailedError extends Error {
  constructor(o: { where: string; migration: string; from: number; reason: string; backup?: string; backupHint?: string }) {
    const copy = o.backup ? `; the copy written before the upgrade is ${o.backup}` : o.backupHint ? `; ${o.backupHint}` : "";
    super(
      `migration ${o.migration} failed (${o.reason}); nothing was changed: ${o.where} is still at schema version ${o.from}. To go back, run the previous weft (the one that wrote schema version ${o.from}) on it as it is${copy}`,
    );
  }
}

/** The copy written before an upgrade could not be written, so nothing was upgraded (sqlite/db.ts, migrate). */
export class UpgradeBackupError extends Error {}

/**
 * An upgrade of a database's schema, before (`ms` undefined) and after it is applied, with the pending
 * migrations' notes (schema 18 rewrites every stored run), since nothing answers meanwhile. `backup`: the copy
 * of a SQLite database written before (PostgreSQL is backed up with pg_dump, docs/operations.md).
 */
export type UpgradeListener = (upgrade: { from: number; to: number; migrations: string[]; notes: string[]; backup?: string; ms?: number }) => void;

export const nowIso = () => new Date().toISOString();
