/**
 * Backups the server writes itself (docs/operations.md, "Scheduled backups"): on WEFT_BACKUP_SCHEDULE (a cron
 * pattern, croner) and when the owner asks (POST /api/backups), a copy of the database as `weft-<UTC time>.db`
 * in WEFT_BACKUP_DIR, of which the newest WEFT_BACKUP_KEEP are kept; the copies written before an upgrade
 * (`weft-schema-N-before-M-<time>.db`, src/store/sqlite/db.ts) sit in the same folder and are never pruned.
 * On PostgreSQL there is nothing to copy from here (`write` is null): pg_dump backs up a cluster's database.
 *
 *   const backups = new Backups({ ...config.backups, write, log, identity });
 *   backups.start(); ...; await backups.stop();
 */
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Cron } from "croner";
import { AppError } from "../http/errors";
import type { Logger } from "../http/logger";
import type { Identity, Principal } from "./identity";
import { type Clock, systemClock } from "../lib/clock";

export interface BackupFile {
  name: string;
  bytes: number;
  createdAt: string;
  /** `backup`: scheduled or asked for, pruned beyond `keep`; `before-upgrade`: written before migrations, kept. */
  kind: "backup" | "before-upgrade";
}

export interface BackupsOptions {
  /** WEFT_BACKUP_SCHEDULE; undefined: no scheduled backups. */
  schedule: string | undefined;
  keep: number;
  dir: string;
  /** Copies the database into a new file (src/store/open.ts, databaseBackups); null on PostgreSQL. */
  write: ((target: string) => Promise<{ path: string; bytes: number }>) | null;
  log: Logger;
  identity: Identity;
  /** The time a backup is named after; tests pass a fake clock. */
  clock?: Clock;
}

const BACKUP_NAME = /^weft-(\d{8}T\d{6}Z)(?:-(\d+))?\.db$/;
/** Sorts backups by the time in their names, then their `-2`, `-3`… of the same second. */
const orderKey = (name: string) => {
  const [, stamp, n] = BACKUP_NAME.exec(name) ?? [];
  return `${stamp}-${(n ?? "1").padStart(6, "0")}`;
};
const UPGRADE_NAME = /^weft-schema-\d+-before-\d+-\d{8}T\d{6}Z(?:-\d+)?\.db$/;

export class Backups {
  private job: Cron | undefined;
  private writing: Promise<BackupFile> | undefined;
  private readonly clock: Clock;

  constructor(private readonly o: BackupsOptions) {
    this.clock = o.clock ?? systemClock;
  }

  /** Starts the schedule, if there is one and this store can be copied (else says why it does not apply). */
  start(): void {
    if (!this.o.schedule) return;
    if (!this.o.write) {
      this.o.log.warn(
        "WEFT_BACKUP_SCHEDULE does not apply on PostgreSQL: back the database up with pg_dump on its own schedule (docs/operations.md, Scheduled backups)",
      );
      return;
    }
    this.job = new Cron(this.o.schedule, { protect: true, mode: "5-or-6-parts" }, () => void this.scheduled());
    this.o.log.info("scheduled backups", { schedule: this.o.schedule, keep: this.o.keep, dir: this.o.dir, next: this.next() });
  }

  /** Stops the schedule and waits for a backup being written. */
  async stop(): Promise<void> {
    this.job?.stop();
    this.job = undefined;
    await this.writing?.catch(() => undefined);
  }

  /** The schedule's next instant, ISO; null without one. */
  next(): string | null {
    return this.job?.nextRun()?.toISOString() ?? null;
  }

  /** One scheduled backup (what the cron job runs; tests call it). Failures are logged, never thrown. */
  async scheduled(): Promise<BackupFile | undefined> {
    try {
      const file = await this.create();
      this.o.log.info("scheduled backup written", { file: join(this.o.dir, file.name), bytes: file.bytes });
      return file;
    } catch (error) {
      this.o.log.error("scheduled backup failed", { dir: this.o.dir, error: (error as Error).message });
      return undefined;
    }
  }

  /** What GET /api/backups shows: the schedule and the files in the folder, newest first. */
  async overview(principal: Principal) {
    await this.refuseAllButOwner(principal, "see");
    return {
      available: this.o.write !== null,
      schedule: this.o.schedule ?? null,
      next: this.next(),
      keep: this.o.keep,
      dir: this.o.dir,
      backups: this.list(),
    };
  }

  /** POST /api/backups: a backup now, by the owner. */
  async createFor(principal: Principal): Promise<BackupFile> {
    await this.refuseAllButOwner(principal, "create");
    if (!this.o.write)
      throw new AppError(
        "UNPROCESSABLE",
        "this instance stores in PostgreSQL, which Weft does not copy: back it up with pg_dump (docs/operations.md, Backup on PostgreSQL)",
      );
    if (this.writing) throw new AppError("CONFLICT", "a backup is being written; ask again once it is done (GET /api/backups lists it)");
    return this.create();
  }

  /** Writes `weft-<time>.db`, then removes the oldest backups beyond `keep`. One at a time. */
  private create(): Promise<BackupFile> {
    const write = this.o.write;
    if (!write) return Promise.reject(new Error("this store is not copied by Weft"));
    if (this.writing) return Promise.reject(new Error("a backup is being written already"));
    const run = (async () => {
      mkdirSync(this.o.dir, { recursive: true });
      const target = this.freeName(new Date(this.clock.now()));
      await write(target);
      this.prune();
      const name = target.slice(this.o.dir.length + 1);
      return this.describe(name)!;
    })();
    this.writing = run;
    return run.finally(() => {
      this.writing = undefined;
    });
  }

  private freeName(at: Date): string {
    const stamp = at
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d+Z$/, "Z");
    let path = join(this.o.dir, `weft-${stamp}.db`);
    for (let n = 2; this.exists(path); n++) path = join(this.o.dir, `weft-${stamp}-${n}.db`);
    return path;
  }

  private exists(path: string): boolean {
    try {
      statSync(path);
      return true;
    } catch {
      return false;
    }
  }

  /** The backups in the folder, newest first; nothing when it does not exist yet. */
  list(): BackupFile[] {
    let names: string[];
    try {
      names = readdirSync(this.o.dir);
    } catch {
      return [];
    }
    return names
      .map((name) => this.describe(name))
      .filter((file): file is BackupFile => file !== undefined)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.name.localeCompare(a.name));
  }

  private describe(name: string): BackupFile | undefined {
    const kind = BACKUP_NAME.test(name) ? "backup" : UPGRADE_NAME.test(name) ? "before-upgrade" : undefined;
    if (!kind) return undefined;
    try {
      const stat = statSync(join(this.o.dir, name));
      return { name, bytes: stat.size, createdAt: stat.mtime.toISOString(), kind };
    } catch {
      return undefined;
    }
  }

  /** Keeps the newest `keep` backups (by the time in their names); the copies made before upgrades stay. */
  private prune(): void {
    const backups = readdirSync(this.o.dir)
      .filter((name) => BACKUP_NAME.test(name))
      .sort((a, b) => orderKey(b).localeCompare(orderKey(a)));
    for (const name of backups.slice(this.o.keep)) {
      rmSync(join(this.o.dir, name), { force: true });
      this.o.log.info("old backup removed", { file: join(this.o.dir, name), keep: this.o.keep });
    }
  }

  /** A backup holds every workspace's data: only the instance owner (or a token without a user, the operator's). */
  private async refuseAllButOwner(principal: Principal, what: string): Promise<void> {
    if (principal.userId === null) return;
    const user = await this.o.identity.user(principal.userId);
    if (user?.role === "owner") return;
    throw new AppError(
      "FORBIDDEN",
      `a backup holds the whole instance's data, so only the instance owner may ${what} backups; ${user ? `${user.email} is ${user.role}` : "this credential's user no longer exists"}`,
    );
  }
}
