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
 * An upgrade of a database's schema, before (`ms` undefined) and after it is applied, with the pending
 * migrations' notes (schema 18 rewrites every stored run), since nothing answers meanwhile.
 */
export type UpgradeListener = (upgrade: { from: number; to: number; migrations: string[]; notes: string[]; ms?: number }) => void;

export const nowIso = () => new Date().toISOString();
