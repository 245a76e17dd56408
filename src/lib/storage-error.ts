/**
 * What the store throws when the database refuses a write for a reason code above it tells apart. Code above
 * src/store asks for a `kind`, never for a database's own codes: which database refused is the store's
 * business (src/store/storage-errors.ts translates SQLite's codes and PostgreSQL's SQLSTATEs into these).
 *
 *   if (error instanceof StorageError && error.kind === "unique") ...   // or isStorageError(error, "unique")
 */
export type StorageErrorKind =
  /** A unique index, primary key or exclusion constraint refused a second row with the same key. */
  | "unique"
  /** A row names a parent that does not exist, or a parent still has rows naming it. */
  | "foreign_key"
  | "not_null"
  | "check"
  /** Text the database cannot hold: PostgreSQL's text and JSON refuse U+0000 (SQLite keeps it). */
  | "not_storable"
  /** The disk, a quota or the database's size limit is full: nothing was written. */
  | "full";

export class StorageError extends Error {
  override readonly name = "StorageError";

  /** `message` is the database's own, kept for the log; it is not meant for the user. */
  constructor(
    readonly kind: StorageErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isStorageError = (error: unknown, kind?: StorageErrorKind): error is StorageError =>
  error instanceof StorageError && (kind === undefined || error.kind === kind);
