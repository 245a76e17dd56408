/**
 * The one place that knows the databases' error codes: SQLite's extended result codes (bun:sqlite's
 * SQLiteError `code`) and PostgreSQL's SQLSTATEs (Bun's SQL client's `errno`). The store throws StorageError (src/lib/storage-error.ts) with a kind instead, so code
 * above it never names either database's codes (test/foundation/storage-seam.test.ts checks it).
 *
 * Where the translation happens: PostgreSQL's clients throw StorageError themselves (./postgres/connection.ts); a SQLite error is translated by the storage port's connection and units
 * (./sqlite/connection.ts, ./sqlite/storage.ts: every call of
 * the areas on the port, e.g. `connections.insert`, whose "unique" the service asks for), and, for the rest,
 * by the HTTP error handler through `storageError`, which the composition root (src/app.ts) hands it. The run writer and the run readers answer across threads and
 * promises with a Failure, which keeps the kind.
 */
import { StorageError, type StorageErrorKind } from "../lib/storage-error";

/** SQLite's extended result codes (a primary key is reported apart from other unique indexes, with the same message). */
const SQLITE_KINDS: Record<string, StorageErrorKind> = {
  SQLITE_CONSTRAINT_UNIQUE: "unique",
  SQLITE_CONSTRAINT_PRIMARYKEY: "unique",
  SQLITE_CONSTRAINT_FOREIGNKEY: "foreign_key",
  SQLITE_CONSTRAINT_NOTNULL: "not_null",
  SQLITE_CONSTRAINT_CHECK: "check",
  SQLITE_FULL: "full",
};

/** PostgreSQL's SQLSTATEs. */
const POSTGRES_KINDS: Record<string, StorageErrorKind> = {
  "23505": "unique",
  // An exclusion constraint with = is a unique constraint (runs' ids: PostgreSQL's migration 20).
  "23P01": "unique",
  "23503": "foreign_key",
  "23502": "not_null",
  "23514": "check",
  "53100": "full",
  // U+0000 in a text parameter (character_not_in_repertoire) or in JSON (untranslatable_character).
  "22021": "not_storable",
  "22P05": "not_storable",
};

/** The kind of a SQLite result code or a PostgreSQL SQLSTATE; undefined for any other code. */
export function kindOfCode(code: unknown): StorageErrorKind | undefined {
  if (typeof code !== "string") return undefined;
  return Object.hasOwn(SQLITE_KINDS, code) ? SQLITE_KINDS[code] : Object.hasOwn(POSTGRES_KINDS, code) ? POSTGRES_KINDS[code] : undefined;
}

/** A StorageError for a database's `code` and message, or undefined when Weft does not tell that code apart. */
export function storageErrorOf(code: unknown, message: string, cause?: unknown): StorageError | undefined {
  const kind = kindOfCode(code);
  return kind && new StorageError(kind, message, cause === undefined ? undefined : { cause });
}

/**
 * `error` as Weft's storage error: itself if it is one; a SQLite or PostgreSQL error whose code Weft tells
 * apart, translated (its message kept); otherwise undefined.
 */
export function storageError(error: unknown): StorageError | undefined {
  if (error instanceof StorageError) return error;
  if (typeof error !== "object" || error === null) return undefined;
  // bun:sqlite: `code` (its `errno` is a number); Bun's SQL client: `errno` (its `code` is its own, ERR_POSTGRES_…).
  const { code, errno, message } = error as { code?: unknown; errno?: unknown; message?: unknown };
  return storageErrorOf(kindOfCode(code) ? code : errno, String(message ?? error), error);
}

/** Rethrows `error` translated when it is a storage error Weft tells apart, else as it is. */
export function rethrowTranslated(error: unknown): never {
  throw storageError(error) ?? error;
}

/** A failure as it crosses a thread (JSON) or a batch's answer: the database's message, and its kind if it has one. */
export interface Failure {
  message: string;
  kind?: StorageErrorKind;
}

/** `error` as a Failure; `context` is put before its message. */
export function failureOf(error: unknown, context = ""): Failure {
  const message = `${context}${String((error as Error)?.message ?? error)}`;
  const kind = storageError(error)?.kind;
  return kind ? { message, kind } : { message };
}

/** The error a caller is given for a Failure: a StorageError when it has a kind. */
export const errorOf = (failure: Failure): Error => (failure.kind ? new StorageError(failure.kind, failure.message) : new Error(failure.message));
