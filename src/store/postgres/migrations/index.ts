/**
 * The SQLite migrations (../../sqlite/migrations) translated for PostgreSQL: same versions, names, file names,
 * tables, columns, nullability, defaults, keys, ON DELETE actions and indexes, so version N means the same
 * schema on both. Add a file here and its line in ./files.ts with every new SQLite migration; never edit a shipped one.
 *
 * Translation rules:
 * - TEXT is `TEXT COLLATE "C"`: SQLite compares text byte by byte (BINARY), so does "C"; the database's
 *   default collation (often en_US) would sort and compare differently, and its lower() would fold
 *   non-ASCII letters, which SQLite's does not.
 * - INTEGER is BIGINT (SQLite integers are 64-bit); the 0/1 flags (secret, output_truncated, managed_app,
 *   enabled) are INTEGER. Bun's SQL client returns BIGINT as a string (a BigInt with `bigint: true`),
 *   INTEGER as a number.
 * - JSON columns stay TEXT, so the text read back is the text written, byte for byte.
 * - `name COLLATE NOCASE` in the folders index is `lower(name)` on the "C" column: it folds A–Z only, like
 *   NOCASE. Queries that say `name = ? COLLATE NOCASE` / `ORDER BY name COLLATE NOCASE` on SQLite say
 *   `lower(name) = lower($n)` / `ORDER BY lower(name)` here (the index serves the first).
 * - run_steps has SQLite's implicit rowid made explicit (an identity column of that name): steps of one
 *   `seq` are read in insertion order by it. `SELECT *` on PostgreSQL therefore also returns it.
 * - WITHOUT ROWID (kv_entries) is a storage layout; a plain table with the same primary key behaves the same.
 *
 * Not equivalent:
 * - users.email (`COLLATE NOCASE` on the column, so `email = ?` and its UNIQUE ignore case) uses the ICU
 *   collation weft_nocase (case-insensitive, accent-sensitive; needs a server built with ICU, as Debian's
 *   and the official images are). For ASCII it matches NOCASE; unlike NOCASE it also folds non-ASCII case
 *   (É = é), treats canonically equivalent Unicode (precomposed é, e + U+0301) as equal, ignores ignorable
 *   code points (most C0 control characters), sorts linguistically, and rejects LIKE before PostgreSQL 18.
 * - SQLite accepts NULL in a PRIMARY KEY column that is not INTEGER and not declared NOT NULL (a legacy
 *   quirk, e.g. orgs.id); PostgreSQL refuses it. Weft never inserts a NULL key.
 * - PostgreSQL text cannot hold U+0000; SQLite's can. JSON.stringify writes it as \u0000, so JSON is unaffected.
 * - SQLite's flexible typing stores a value of the wrong type as given (text in an INTEGER column);
 *   PostgreSQL rejects it.
 */
import { inVersionOrder, type Migration } from "../../migration";
import * as files from "./files";

export const postgresMigrations: Migration[] = inVersionOrder(files);
