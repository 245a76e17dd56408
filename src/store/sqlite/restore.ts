/**
 * `weft backup --verify FILE` and `weft restore FILE` (docs/operations.md, "Backup" and "Restore"): a backup
 * is checked before it is trusted — SQLite's own integrity check, a schema version this weft knows, and
 * every table of Weft that schema has — and a restore keeps the current database aside until the restored
 * one has opened and passed the same check.
 */
import { constants, Database } from "bun:sqlite";
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Migration } from "../migration";
import { BackupError, stampedPath } from "./backup";
import { migrations as shipped } from "./migrations";

export interface BackupCheck {
  path: string;
  bytes: number;
  /** The backup's schema version (0 when it is not a database of Weft's). */
  version: number;
  /** The newest schema version this weft knows. */
  latest: number;
  tables: number;
  /** What is wrong with it; empty when it can be restored. */
  problems: string[];
}

/** SQLite's companions of a database file in WAL mode. */
const COMPANIONS = ["-wal", "-shm"];

/** The tables Weft's migrations up to `version` create, from an empty database in memory. */
function tablesAt(version: number, migrations: Migration[]): Set<string> {
  const scratch = new Database(":memory:");
  try {
    for (const migration of migrations.filter((m) => m.version <= version)) scratch.run(migration.sql);
    return new Set(tableNames(scratch));
  } finally {
    scratch.close();
  }
}

const tableNames = (db: Database) =>
  (db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
    (row) => row.name,
  );

/**
 * Checks the file at `file` as a backup this weft can restore, changing nothing in it: `problems` lists what
 * fails (not SQLite, damaged pages, a schema version this weft does not know, tables missing).
 */
export function checkBackup(file: string, migrations: Migration[] = shipped): BackupCheck {
  const path = resolve(file);
  const latest = migrations.at(-1)?.version ?? 0;
  if (!existsSync(path)) throw new BackupError(`${path} does not exist`);
  const check: BackupCheck = { path, bytes: statSync(path).size, version: 0, latest, tables: 0, problems: [] };
  // Its content would be missed by the copy restored (the file alone), and a database in use changes meanwhile.
  if (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) {
    check.problems.push(
      `a write-ahead log lies beside it (${path}-wal): it is a database in use, or was copied with its log; take a backup of it with weft backup and restore that`,
    );
    return check;
  }
  let db: Database | undefined;
  try {
    // Immutable: read as it is, creating no -wal or -shm beside it.
    const uri = `file:${path.split("/").map(encodeURIComponent).join("/")}?immutable=1`;
    db = new Database(uri, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
    const integrity = (db.query("PRAGMA integrity_check(20)").all() as { integrity_check: string }[]).map((row) => row.integrity_check);
    if (integrity.join() !== "ok") check.problems.push(`SQLite's integrity check fails: ${integrity.join("; ")}`);
    check.version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const present = tableNames(db);
    check.tables = present.length;
    if (check.version === 0) check.problems.push("it is not a database of Weft's (schema version 0: no migration was ever applied to it)");
    else if (check.version > latest)
      check.problems.push(
        `its schema version ${check.version} is newer than this weft knows (${latest}): restore it with the weft version that wrote it, or a newer one`,
      );
    else {
      const missing = [...tablesAt(check.version, migrations)].filter((table) => !present.includes(table));
      if (missing.length) check.problems.push(`tables of Weft's schema version ${check.version} are missing: ${missing.join(", ")}`);
    }
  } catch (error) {
    check.problems.push(`it cannot be read as a SQLite database: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
  return check;
}

export interface Restored extends BackupCheck {
  /** Where the database that was in place now is (with its -wal and -shm), or undefined when there was none. */
  aside: string | undefined;
}

/**
 * Puts the backup `file` in place as the database `target`. Nothing changes unless the backup passes
 * checkBackup. The database in place (with its -wal and -shm) is renamed to `<target>.before-restore-<time>`
 * first; the backup is copied beside it and renamed into place, then opened and checked again; if that fails
 * the restored copy is removed and the old database put back. The caller holds the data directory's lock.
 */
export function restoreBackup(file: string, target: string, migrations: Migration[] = shipped): Restored {
  const check = checkBackup(file, migrations);
  if (check.problems.length) throw new BackupError(`${check.path} cannot be restored, nothing was changed: ${check.problems.join("; ")}`);
  const aside = existsSync(target) ? stampedPath(`${target}.before-restore-`, "") : undefined;
  const incoming = stampedPath(`${target}.restoring-`, "");
  const moved: Array<[from: string, to: string]> = [];
  const putBack = () => {
    rmSync(incoming, { force: true });
    for (const suffix of ["", ...COMPANIONS]) rmSync(`${target}${suffix}`, { force: true });
    for (const [from, to] of moved.reverse()) renameSync(to, from);
  };
  try {
    for (const suffix of ["", ...COMPANIONS]) {
      if (!aside || !existsSync(`${target}${suffix}`)) continue;
      renameSync(`${target}${suffix}`, `${aside}${suffix}`);
      moved.push([`${target}${suffix}`, `${aside}${suffix}`]);
    }
    // Copied beside the target, then renamed: the target is never a half-written file.
    copyFileSync(check.path, incoming);
    renameSync(incoming, target);
    const again = checkBackup(target, migrations);
    if (again.problems.length) throw new BackupError(`the restored copy fails its check: ${again.problems.join("; ")}`);
  } catch (error) {
    putBack();
    const kept = aside ? `; ${target} is back as it was` : "";
    throw new BackupError(`restoring ${check.path} failed: ${(error as Error).message}${kept}`);
  }
  return { ...check, aside };
}
