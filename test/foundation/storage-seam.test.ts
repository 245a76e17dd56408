/**
 * Storage has one port: only src/store/ says how things are stored. Outside it no module opens the database
 * driver, prepares a statement, opens a transaction or holds SQL text — so a second storage adapter
 * (PostgreSQL) has one folder to implement. Errors cross the port as Weft's own (StorageError, with a kind):
 * outside it no module names SQLite's or PostgreSQL's error codes. Comments are not code and are ignored.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const SRC = join(import.meta.dir, "../../src");

/** The text of a TypeScript file with its comments blanked (strings kept: SQL lives in strings). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

const FORBIDDEN: Array<[RegExp, string]> = [
  [/from\s+"bun:sqlite"/, "imports the SQLite driver"],
  [/\bSQL\b[^\n]*from\s+"bun"|from\s+"bun"[^\n]*\bSQL\b/, "imports the SQL client"],
  [/\.(?:query|prepare)(?:<[^>]*>)?\(\s*[`"']/, "prepares a statement"],
  [/\.transaction\(/, "opens a transaction"],
  [/[`"']\s*(?:SELECT\s|INSERT\s+(?:OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|PRAGMA\s|CREATE\s+(?:TABLE|INDEX)\s)/i, "holds SQL text"],
];

/** Every line of src/ outside src/store/ that one of `patterns` finds, named with what it does. */
function offencesOutsideStore(patterns: Array<[RegExp, string]>): string[] {
  const offences: string[] = [];
  for (const file of new Bun.Glob("**/*.ts").scanSync(SRC)) {
    if (file.startsWith("store/")) continue;
    const code = withoutComments(readFileSync(join(SRC, file), "utf8"));
    code.split("\n").forEach((line, i) => {
      for (const [pattern, what] of patterns) if (pattern.test(line)) offences.push(`src/${file}:${i + 1} ${what}: ${line.trim().slice(0, 100)}`);
    });
  }
  return offences;
}

test("no SQL outside src/store/", () => {
  expect(offencesOutsideStore(FORBIDDEN)).toEqual([]);
});

/** Which database the store is on is the store's own business: nothing above it branches on it or imports one's folder. */
const NAMES_A_DATABASE: Array<[RegExp, string]> = [
  [/from\s+"[./]*store\/(?:postgres|sqlite)\//, "imports one database's implementation"],
  [/\bisPostgres\b/, "asks whether the store is PostgreSQL"],
];

test("no module above src/store/ knows which database it is on", () => {
  expect(offencesOutsideStore(NAMES_A_DATABASE)).toEqual([]);
  // The patterns find what they forbid: the store's own composition (the run writer's choice) does both.
  const writer = withoutComments(readFileSync(join(SRC, "store/run-writer.ts"), "utf8"));
  expect(NAMES_A_DATABASE.every(([pattern]) => pattern.test(writer.replaceAll('"./postgres/', '"../store/postgres/')))).toBe(true);
});

test("the check sees SQL where it is", () => {
  // The same scan over src/store/ must find what it forbids elsewhere, or the patterns are wrong.
  const hits = new Set<string>();
  for (const file of new Bun.Glob("store/**/*.ts").scanSync(SRC)) {
    const code = withoutComments(readFileSync(join(SRC, file), "utf8"));
    for (const [pattern, what] of FORBIDDEN) if (pattern.test(code)) hits.add(what);
  }
  expect([...hits]).toEqual(expect.arrayContaining(["holds SQL text", "imports the SQLite driver", "opens a transaction", "prepares a statement"]));
});

/**
 * A database's own error codes: SQLite's result codes, and PostgreSQL's SQLSTATEs of the classes a store meets
 * (08 connection, 22 data, 23 integrity, 25 transaction state, 40 rollback, 42 syntax and access, 53–58
 * resources and system, P0 PL/pgSQL, XX internal) as string literals. Above the store an error has a kind.
 */
const NAMES_A_DATABASE_CODE: Array<[RegExp, string]> = [
  [/\bSQLITE_[A-Z]+/, "names a SQLite error code"],
  [/["'`](?:08|2[2-5]|4[02]|5[3-8]|P0|XX)[0-9A-Z]{3}["'`]/, "names a PostgreSQL SQLSTATE"],
];

test("no module above src/store/ names a database's error codes: it asks for a storage error's kind", () => {
  expect(offencesOutsideStore(NAMES_A_DATABASE_CODE)).toEqual([]);
  // The patterns find what they forbid where it belongs (the store's translation of both databases' codes)...
  const translation = withoutComments(readFileSync(join(SRC, "store/storage-errors.ts"), "utf8"));
  for (const [pattern, what] of NAMES_A_DATABASE_CODE) expect([what, pattern.test(translation)]).toEqual([what, true]);
  for (const code of ['"SQLITE_CONSTRAINT_UNIQUE"', "error.code === 'SQLITE_FULL'", '"23505"', '"23P01"', '"53100"', '"22P05"', "`40P01`"]) {
    expect([code, NAMES_A_DATABASE_CODE.some(([pattern]) => pattern.test(code))]).toEqual([code, true]);
  }
  // ...and not what only looks alike: Weft's own variable naming SQLite, a number in a string.
  for (const near of ["env.WEFT_SQLITE_DIRS", '"20000"', '"ERROR"', '"12345"']) {
    expect([near, NAMES_A_DATABASE_CODE.some(([pattern]) => pattern.test(near))]).toEqual([near, false]);
  }
});
