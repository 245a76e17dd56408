/**
 * `weft backup <file>`: a consistent copy of the database while the server keeps running.
 * `VACUUM INTO` reads one snapshot inside a read transaction, so WAL content not yet checkpointed
 * is included and concurrent writers are not blocked; copying weft.db with `cp` could miss both.
 */
import { existsSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { threadEntry } from "../../lib/thread-entry";
import type { Db } from "../db";

export class BackupError extends Error {}

/**
 * A new file's path `<prefix><UTC time><suffix>` (`weft-20261129T031500Z.db`), sortable by time; `-2`, `-3`…
 * before the suffix when a file of that second exists already.
 */
export function stampedPath(prefix: string, suffix: string, at = new Date()): string {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  let path = `${prefix}${stamp}${suffix}`;
  for (let n = 2; existsSync(path) || existsSync(`${path}-wal`); n++) path = `${prefix}${stamp}-${n}${suffix}`;
  return path;
}

/** Writes a compacted, self-contained copy of `db` to `target` (which must not exist yet). */
export function backupDatabase(db: Db, target: string): { path: string; bytes: number } {
  const path = resolve(target);
  // VACUUM INTO refuses a non-empty existing file anyway; say so plainly and never overwrite a backup.
  if (existsSync(path)) throw new BackupError(`"${path}" already exists; choose a new file name (a backup never overwrites a file)`);
  db.run("VACUUM INTO ?", [path]);
  return { path, bytes: Bun.file(path).size };
}

/**
 * backupDatabase off this thread, on a connection of its own to the file `dbPath` (./backup-thread.ts): what the
 * server uses, since a large database takes minutes to copy. A failed copy leaves no file behind.
 */
export async function backupOffThread(dbPath: string, target: string): Promise<{ path: string; bytes: number }> {
  const path = resolve(target);
  if (existsSync(path)) throw new BackupError(`"${path}" already exists; choose a new file name (a backup never overwrites a file)`);
  const worker = new Worker(threadEntry("store/sqlite/backup-thread.ts"), { smol: true } as WorkerOptions);
  try {
    const answer = await new Promise<{ t: "done" } | { t: "failed"; error: string }>((settle) => {
      worker.onmessage = (event: MessageEvent) => settle(event.data);
      worker.onerror = (event: ErrorEvent) => settle({ t: "failed", error: event.message });
      worker.postMessage({ dbPath, target: path });
    });
    if (answer.t === "failed") {
      rmSync(path, { force: true });
      throw new BackupError(answer.error);
    }
  } finally {
    worker.terminate();
  }
  return { path, bytes: Bun.file(path).size };
}
