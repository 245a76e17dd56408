/**
 * PostgreSQL as the storage port's repositories use it: Bun's SQL client with a pool, every query awaited, so
 * a round trip to a database on another host delays only the caller that asked (docs/scaling.md, "A database
 * across a network"). A unit of work (`atomically`, ./storage.ts) holds one pooled connection for its own
 * statements only.
 *
 * Statements are written for PostgreSQL, with `$1…` placeholders. int8 values (counts, epoch milliseconds)
 * arrive as BigInt and are handed on as numbers: every number Weft stores fits a double. A refusal Weft tells
 * apart (a unique key, a full disk, …) is thrown as StorageError with its kind; any other error names the
 * statement it came from.
 */
import type { SQL } from "bun";
import { storageErrorOf } from "../storage-errors";

export type Row = Record<string, unknown>;

/** The pool, or the connection a unit holds: both answer `unsafe(text, params)`. */
type Client = Pick<SQL, "unsafe">;

/** An error of PostgreSQL that Weft does not tell apart, with its SQLSTATE and the statement that caused it. */
export class PostgresQueryError extends Error {
  override readonly name = "PostgresQueryError";
  constructor(
    message: string,
    readonly sqlstate: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

function numbers<T>(rows: Row[]): T[] {
  for (const row of rows) for (const key in row) if (typeof row[key] === "bigint") row[key] = Number(row[key]);
  return rows as T[];
}

/** A value as the statements bind it: undefined is NULL (a row object's missing optional column). */
const bindable = (value: unknown) => (value === undefined ? null : value);

/** `$from, $from+1, …`: n positional parameters. */
export const marks = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(", ");

export class PostgresConnection {
  constructor(private readonly client: Client) {}

  private async send(text: string, params: readonly unknown[]): Promise<Row[] & { count?: number | null }> {
    try {
      return await this.client.unsafe(text, params.map(bindable));
    } catch (error) {
      const { errno, message } = error as { errno?: unknown; message?: unknown };
      const where = `${String(message ?? error)} (in: ${text.replace(/\s+/g, " ").slice(0, 200)})`;
      throw storageErrorOf(errno, where, error) ?? new PostgresQueryError(where, typeof errno === "string" ? errno : undefined, { cause: error });
    }
  }

  async all<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    return numbers<T>([...(await this.send(text, params))]);
  }

  async get<T>(text: string, params: readonly unknown[] = []): Promise<T | null> {
    return (await this.all<T>(text, params))[0] ?? null;
  }

  /** Runs a statement that returns no rows; answers how many rows it changed. */
  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.send(text, params)).count ?? 0;
  }

  /** Inserts `row`'s `columns` into `table` (`INSERT INTO table (a, b) VALUES ($1, $2)`, then `onConflict`), each column named once. */
  async insert<R>(table: string, columns: readonly (keyof R & string)[], row: R, onConflict = ""): Promise<void> {
    const values = columns.map((column) => row[column]);
    await this.run(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${marks(columns.length)})${onConflict}`, values);
  }

  /** Inserts `row`, or, where a row of its key (the first column) is there, sets that row's other columns to this row's. */
  upsert<R>(table: string, columns: readonly (keyof R & string)[], row: R): Promise<void> {
    const [key, ...others] = columns;
    return this.insert(table, columns, row, ` ON CONFLICT (${key}) DO UPDATE SET ${others.map((column) => `${column} = excluded.${column}`).join(", ")}`);
  }
}

/** Seconds a connection of the port's pool may sit idle before it is closed (the pool opens another when needed). */
export const POOL_IDLE_SECONDS = 60;

/**
 * What each of Weft's connections calls itself (`application_name`): an operator tells them apart in
 * `pg_stat_activity` (docs/scaling.md, "Sizing").
 */
export const CONNECTION_NAMES = {
  storage: "weft storage",
  vital: "weft vital signs",
  writer: "weft run writer",
  bus: "weft bus",
  bridge: "weft bridge",
  reader: "weft run reader",
} as const;

/**
 * Bun's client for the port's pool: `max` connections, int8 as BigInt (made numbers above). JIT compilation off: the
 * port's statements are short, and compiling a deep list page's plan took half its time (docs/operations.md, "Deep list pages").
 */
export function openPool(url: string, max: number, name: string = CONNECTION_NAMES.storage): SQL {
  // adapter: the URL alone would let a mysql:// or sqlite: URL pick another driver.
  return new Bun.SQL(url, { adapter: "postgres", max, bigint: true, idleTimeout: POOL_IDLE_SECONDS, connection: { application_name: name, jit: "off" } });
}
