/**
 * The embedded database as the storage port's repositories use it: one bun:sqlite connection per process,
 * taken in turns. A call is synchronous inside (bun:sqlite answers in microseconds) and is handed to its caller
 * as a settled promise, the port's shape on both databases.
 *
 * A unit of work (`atomically`, ./storage.ts) holds the connection from BEGIN to COMMIT while its caller awaits
 * the unit's own calls: every other call through the port waits for the unit to end instead of slipping into
 * its transaction (where a rollback would take it along). The unit's own repositories are made without the
 * turn (`turns: null`), so they go on.
 */
import type { Database } from "bun:sqlite";
import { storageError } from "../storage-errors";
import { CommitSync } from "./commit-sync";

/** Whose turn it is on a connection: free, or a unit's until `held` settles. */
export class Turns {
  private held: Promise<void> | null = null;

  /** Settles when no unit holds the connection (undefined when none does now). */
  free(): Promise<void> | undefined {
    return this.held ?? undefined;
  }

  get busy(): boolean {
    return this.held !== null;
  }

  /** Takes the connection for a unit, after any unit before it; the returned function gives it back. */
  async take(): Promise<() => void> {
    while (this.held) await this.held;
    let release!: () => void;
    this.held = new Promise<void>((resolve) => {
      release = resolve;
    });
    return () => {
      this.held = null;
      release();
    };
  }
}

const turnsOf = new WeakMap<Database, Turns>();

/** The turns of a connection: one per connection, shared by everything in the process that writes on it. */
export function turnsFor(db: Database): Turns {
  const known = turnsOf.get(db);
  if (known) return known;
  const turns = new Turns();
  turnsOf.set(db, turns);
  return turns;
}

export class SqliteConnection {
  /** How a call's commit reaches the disk without this thread waiting for it (null: in its commit, as SQLite does). */
  private readonly commits: CommitSync | null;

  /** `turns` null: the connection of a unit that holds it (./storage.ts), whose end makes the unit durable. */
  constructor(
    readonly db: Database,
    private readonly turns: Turns | null,
  ) {
    this.commits = turns ? CommitSync.of(db) : null;
  }

  /**
   * Runs `work` on the connection when it is this caller's turn; SQLite's refusals come back as StorageError.
   * What it committed is on disk when the promise settles (./commit-sync.ts).
   */
  do<T>(work: () => T): Promise<T> {
    const wait = this.turns?.free();
    if (wait) return wait.then(() => this.do(work));
    try {
      return Promise.resolve(this.commits ? this.commits.run(work) : work());
    } catch (error) {
      return Promise.reject(storageError(error) ?? error);
    }
  }
}

/**
 * The base of a repository on SQLite: `c`, its connection, and `q`, its statements, which `prepare` makes once on
 * that connection (STYLE.md: prepared statements held once per repository; bun:sqlite caches only 20 query texts).
 */
export function Prepared<Statements>(prepare: (db: Database) => Statements) {
  return class {
    protected readonly q: Statements;
    constructor(protected readonly c: SqliteConnection) {
      this.q = prepare(c.db);
    }
  };
}
