/**
 * Keeps the database from growing without bound (n8n users report SQLite and WAL files that never
 * shrink): finished runs older than WEFT_RUN_RETENTION_DAYS, and the oldest beyond WEFT_RUN_RETENTION_MAX,
 * are deleted with their steps in small batches (the event loop breathes between them); freed pages go
 * back to the file system with incremental vacuum; the WAL is checkpointed and truncated.
 */
import type { Logger } from "../http/logger";
import type { Db } from "../store/db";
import { ensureIncrementalVacuum, INCREMENTAL_VACUUM_HINT, returnFreePages, truncateWal } from "../store/maintenance";
import type { RunStore } from "../store/runs";

export interface RetentionOptions {
  db: Db;
  store: RunStore;
  log: Logger;
  /** Told which runs were deleted (the engine forgets what it holds of them). */
  onDeleted?: (ids: string[]) => void;
  /** 0 keeps runs of any age. */
  retentionDays: number;
  /** 0 keeps any number of runs. */
  retentionMax: number;
  /**
   * Deletes definitions no run refers to any more. The engine routes this through its run writer, so it is
   * ordered with run inserts that count on a definition being stored; by default the store does it directly.
   */
  pruneDefinitions?: () => Promise<void>;
  /** Runs deleted per transaction. */
  batchSize?: number;
  /** How often a sweep runs. */
  intervalMs?: number;
}

export interface SweepResult {
  deletedRuns: number;
  freedPages: number;
  walCheckpointed: boolean;
}

const DAY_MS = 86_400_000;

export class Retention {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running = false;

  constructor(private readonly o: RetentionOptions) {}

  /**
   * Switches the database to incremental auto-vacuum once (needs a VACUUM; quick on a young database).
   * A large database that predates it is left alone with a hint in the log, since VACUUM would stall it.
   */
  ensureIncrementalVacuum(maxBytes = 256 * 1024 * 1024): boolean {
    const { enabled, bytes } = ensureIncrementalVacuum(this.o.db, maxBytes);
    if (!enabled) {
      this.o.log.warn(`database is not in incremental auto-vacuum mode; ${INCREMENTAL_VACUUM_HINT}`, { bytes });
    }
    return enabled;
  }

  start() {
    const interval = this.o.intervalMs ?? 10 * 60_000;
    this.timer = setInterval(() => void this.sweep().catch((error) => this.o.log.error("run retention failed", { error: String(error) })), interval);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
  }

  /** Deletes expired runs in batches, then returns free pages and truncates the WAL. */
  async sweep(now = Date.now()): Promise<SweepResult> {
    if (this.running) return { deletedRuns: 0, freedPages: 0, walCheckpointed: false };
    this.running = true;
    try {
      const batch = this.o.batchSize ?? 500;
      let deleted = 0;
      if (this.o.retentionDays > 0) {
        const cutoff = now - this.o.retentionDays * DAY_MS;
        for (;;) {
          const ids = this.o.store.expired(cutoff, batch);
          if (ids.length === 0) break;
          this.o.store.deleteRuns(ids);
          this.o.onDeleted?.(ids);
          deleted += ids.length;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (this.o.retentionMax > 0) {
        for (;;) {
          const ids = this.o.store.overflow(this.o.retentionMax, batch);
          if (ids.length === 0) break;
          this.o.store.deleteRuns(ids);
          this.o.onDeleted?.(ids);
          deleted += ids.length;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (deleted > 0) {
        if (this.o.pruneDefinitions) await this.o.pruneDefinitions();
        else this.o.store.deleteOrphanDefinitions();
      }
      const free = returnFreePages(this.o.db);
      // False when a reader holds the WAL (busy): the next sweep truncates it.
      const walCheckpointed = truncateWal(this.o.db);
      if (deleted > 0) this.o.log.info("run retention", { deletedRuns: deleted, freedPages: free });
      return { deletedRuns: deleted, freedPages: free, walCheckpointed };
    } finally {
      this.running = false;
    }
  }
}
