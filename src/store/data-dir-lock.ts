/**
 * One data directory, one process: `weft serve` (and `weft mcp` when it executes runs itself) holds
 * `<data dir>/weft.lock`, a file naming its pid. A second process finds a live pid there and refuses to
 * start, naming it, so two engines never execute the same runs. A lock left by a process that died
 * (SIGKILL, power loss) names a pid that no longer runs: it is stale and taken over at once, so a
 * restart right after a crash is never blocked. Read-only and offline commands (`weft backup`,
 * `weft token create`, `weft migrate`) do not take it; `weft migrate --from DIR` takes DIR's, so no server
 * writes to the database it copies.
 *
 *   const lock = acquireDataDirLock(config.dataDir); // throws DataDirLockedError
 *   ...; lock.release();
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

export const LOCK_FILE = "weft.lock";

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `the data directory ${dataDir} is in use by another weft process (pid ${pid}); stop that process first, or start this one with another WEFT_DATA_DIR`,
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/**
 * Is `pid` a running process? Signal 0 checks without sending anything (EPERM: it runs as another user).
 * A zombie — killed, not yet reaped by its parent — answers too, but holds nothing: on Linux its state in
 * /proc says so.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

function holderOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock, or throws DataDirLockedError naming the holder. With `waitMs`, a live holder is given
 * that long to exit first (a desktop agent restarting `weft mcp` starts the new process while the old one
 * is still closing its database).
 */
export function acquireDataDirLock(dataDir: string, options: { pid?: number; waitMs?: number } = {}): DataDirLock {
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    try {
      return tryAcquire(dataDir, options.pid ?? process.pid);
    } catch (error) {
      if (!(error instanceof DataDirLockedError) || Date.now() >= deadline) throw error;
      Bun.sleepSync(50);
    }
  }
}

function tryAcquire(dataDir: string, pid: number): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // O_EXCL: exactly one of two processes starting together creates the file.
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, `${pid}\n`);
      closeSync(fd);
      return held(path, pid);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = holderOf(path);
    // Our own pid: this process re-executed itself in place (src/runtime-tuning.ts keeps the pid), or a
    // container restarted it with the same pid after a crash. Either way no other process holds it.
    if (holder === pid) return held(path, pid);
    if (holder !== undefined && isRunning(holder)) throw new DataDirLockedError(dataDir, holder);
    // Stale (its process is gone) or unreadable (a crash between create and write): remove and retry the
    // exclusive create, so two processes taking over the same stale lock cannot both win.
    rmSync(path, { force: true });
  }
  const holder = holderOf(path);
  throw new DataDirLockedError(dataDir, holder ?? -1);
}

function held(path: string, pid: number): DataDirLock {
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      // Only our own lock is removed: never one another process took over meanwhile.
      if (holderOf(path) === pid) rmSync(path, { force: true });
    },
  };
}

/** For tests and tools: write a lock as if `pid` held it. */
export function writeLockFile(dataDir: string, pid: number): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, LOCK_FILE), `${pid}\n`);
}
