/**
 * The storage port's writes on the serving thread's connection, made durable without that thread waiting for
 * the disk. At synchronous=FULL SQLite fsyncs the WAL inside every commit: a fleet heartbeat, a lease renewal
 * or a saved workflow held the thread that serves HTTP for the fsync, 2–3 ms on an idle disk and 62 ms
 * measured while PostgreSQL on the same disk wrote a checkpoint (every request of the instance waited that
 * long; docs/scaling.md). Here a call commits at synchronous=NORMAL (no fsync in the commit) and its promise
 * settles once the WAL has been fdatasync'ed on the I/O thread pool: what a caller is told is written is as
 * durable as under FULL, and one fsync covers every commit made while the one before it ran. The run writer
 * does the same for its batches (./run-writers.ts, InlineWriter).
 *
 * What it costs a call: two PRAGMAs and two reads of total_changes(), 1–3 µs measured on a read; a webhook makes
 * no call through the port on SQLite (counted: 10–20 calls, all background, during 9,990 webhook requests).
 *
 * Only a file's connection at synchronous=FULL gains anything: in memory, or at NORMAL (WEFT_DB_SYNCHRONOUS),
 * a call runs as it is.
 */
import type { Database, Statement } from "bun:sqlite";
import { close, closeSync, fdatasync, fstatSync, open, openSync } from "node:fs";

/** A WAL file's descriptor, opened when first needed and again when the file was replaced (a reopened database). */
export class WalFile {
  private fd: number | undefined;

  constructor(readonly path: string) {}

  /** The descriptor, or undefined when the file cannot be opened (not expected in WAL mode). */
  descriptor(): number | undefined {
    try {
      if (this.fd !== undefined && fstatSync(this.fd).nlink > 0) return this.fd;
      this.close();
      this.fd = openSync(this.path, "r");
      return this.fd;
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class CommitSync {
  private readonly setNormal: Statement;
  private readonly setFull: Statement;
  private readonly changes: Statement<{ n: number }, []>;
  /** Commits waiting for the next fsync. */
  private waiting: Waiter[] = [];
  private syncing = false;

  private constructor(
    private readonly db: Database,
    private readonly walPath: string,
    private readonly sync: typeof fdatasync,
  ) {
    this.setNormal = db.prepare("PRAGMA synchronous = NORMAL");
    this.setFull = db.prepare("PRAGMA synchronous = FULL");
    this.changes = db.prepare("SELECT total_changes() AS n");
  }

  /**
   * The connection's, or null when its commits have nothing to gain (in memory, not in WAL mode, or not at
   * synchronous=FULL). `sync` is fs.fdatasync; tests give a slower one.
   */
  static of(db: Database, sync: typeof fdatasync = fdatasync): CommitSync | null {
    const known = made.get(db);
    if (known !== undefined) return known;
    const file = db.filename;
    const mode = (db.query("PRAGMA journal_mode").get() as { journal_mode: string } | null)?.journal_mode;
    const level = (db.query("PRAGMA synchronous").get() as { synchronous: number } | null)?.synchronous;
    const commits = file && file !== ":memory:" && mode === "wal" && level === FULL ? new CommitSync(db, `${file}-wal`, sync) : null;
    made.set(db, commits);
    return commits;
  }

  /**
   * Runs `work` (statements each committed when it ends, or a transaction's end) at synchronous=NORMAL, then FULL
   * again. Its result comes at once when it changed no row, else once the WAL is on disk.
   */
  run<T>(work: () => T): T | Promise<T> {
    const before = this.begin();
    let result: T;
    try {
      result = work();
    } catch (error) {
      // What it committed before it failed still goes to the disk; its caller hears the failure, not the fsync's.
      this.end(before)?.catch(() => {});
      throw error;
    }
    const synced = this.end(before);
    return synced ? synced.then(() => result) : result;
  }

  /** Commits from here on without an fsync; what `end` takes. */
  begin(): number {
    const before = this.changes.get()!.n;
    this.setNormal.run();
    return before;
  }

  /**
   * Back to FULL: a promise that settles once what was committed since `begin` is on disk, or undefined when
   * nothing was (no row changed, or a transaction is still open: its end is what counts).
   */
  end(before: number): Promise<void> | undefined {
    this.setFull.run();
    return this.db.inTransaction || this.changes.get()!.n === before ? undefined : this.durable();
  }

  /** Settles once everything committed on the connection so far is on disk. */
  durable(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.next();
    });
  }

  /** One fsync at a time; it covers every commit made before it started. */
  private next(): void {
    if (this.syncing || this.waiting.length === 0) return;
    const covered = this.waiting;
    this.waiting = [];
    this.syncing = true;
    const done = (error: Error | null) => {
      this.syncing = false;
      const refusal = error ? new Error(`the database could not be synced to disk: ${error.message}`) : undefined;
      for (const waiter of covered) refusal ? waiter.reject(refusal) : waiter.resolve();
      this.next();
    };
    // Opened for each fsync, on the I/O thread pool like the fsync: no descriptor outlives the database.
    open(this.walPath, "r", (error, fd) => {
      // No WAL: the database was closed, which checkpoints the WAL into the file and syncs both.
      if (error) return done(error.code === "ENOENT" ? null : error);
      this.sync(fd, (synced) => close(fd, () => done(synced)));
    });
  }
}

/** PRAGMA synchronous's value for FULL. */
const FULL = 2;
const made = new WeakMap<Database, CommitSync | null>();
