/**
 * Storage has one port: only src/store/ says how things are stored. Outside it no module opens the database
 * driver, prepares a statement, opens a transaction or holds SQL text — so a second storage adapter
 * (PostgreSQL) has one folder to implement. Errors cross the port as Weft's own (StorageError, with a kind):
 * outside it no module names SQLite's or PostgreSQL's error codes. Inside it each database's driver stays in
 * its own folder (src/store/sqlite/, src/store/postgres/) but for a few named files of composition and
 * translation. Comments are not code and are ignored.
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

/**
 * Which database a file of src/ is written for shows in its folder: Bun's SQLite driver is imported only in
 * src/store/sqlite/ and Bun's SQL client (PostgreSQL) only in src/store/postgres/, so every other file is written
 * for both, or picks between them. The few exceptions are at the top of src/store/, each with the reason it
 * needs the driver. (Only src/: tests and benches seed databases directly, and pieces/ talks to users' own
 * databases, not to Weft's store.)
 */
const DRIVERS: Array<{ driver: string; home: string; patterns: RegExp[]; allowed: Record<string, string> }> = [
  {
    driver: "imports bun:sqlite",
    home: "store/sqlite/",
    // Any string naming the module once comments are gone: `from "bun:sqlite"`, `import("bun:sqlite")`, `require(...)`.
    patterns: [/["'`]bun:sqlite["'`]/],
    allowed: {
      "store/db.ts": "the store's Db type is SQLite's connection, which PostgreSQL's handle poses as",
      "store/copy-to-postgres.ts": "`weft migrate --from --to` reads a SQLite file to copy it into PostgreSQL",
    },
  },
  {
    driver: "imports Bun's SQL client",
    home: "store/postgres/",
    patterns: [/import\s+(?:type\s+)?\{[^}]*\bSQL\b[^}]*\}\s*from\s*["'`]bun["'`]/, /\bBun\.SQL\b/, /import\(\s*["'`]bun["'`]\s*\)\.SQL\b/],
    allowed: {
      "store/storage.ts": "the composition holds the PostgreSQL port's pools (postgresPoolOf), which close with the store",
      "store/copy-to-postgres.ts": "`weft migrate --from --to` writes what it read from SQLite into PostgreSQL",
    },
  },
];

/** Each file of `files` (path under src/, code) that uses a driver outside its home folder and is not allowed to, with the line. */
function driverOffences(files: Iterable<[string, string]>): string[] {
  const offences: string[] = [];
  for (const [file, text] of files) {
    const code = withoutComments(text);
    for (const { driver, home, patterns, allowed } of DRIVERS) {
      if (file.startsWith(home) || file in allowed) continue;
      for (const pattern of patterns) {
        const found = pattern.exec(code);
        if (found) offences.push(`src/${file}:${code.slice(0, found.index).split("\n").length} ${driver}: ${found[0].replace(/\s+/g, " ").slice(0, 100)}`);
      }
    }
  }
  return offences;
}

function* sourceFiles(glob = "**/*.ts"): Generator<[string, string]> {
  for (const file of new Bun.Glob(glob).scanSync(SRC)) yield [file, readFileSync(join(SRC, file), "utf8")];
}

test("outside src/store/sqlite/ and src/store/postgres/ no module imports their database's driver, but the few named here", () => {
  expect(driverOffences(sourceFiles())).toEqual([]);
});

test("the driver check finds the imports it forbids, and each allowed file still needs its driver", () => {
  const uses = (code: string, driver: string) => DRIVERS.find((d) => d.driver === driver)!.patterns.some((p) => p.test(withoutComments(code)));
  const sqlite = "imports bun:sqlite";
  const sql = "imports Bun's SQL client";
  // Every way of reaching a driver is found, and not what only looks alike: another import from "bun", a
  // comment, Weft's own names. [code, uses bun:sqlite, uses the SQL client]
  const samples: Array<[string, boolean, boolean]> = [
    ['import type { Database } from "bun:sqlite";', true, false],
    ["import { Database, type Statement } from 'bun:sqlite';", true, false],
    ['const { Database } = await import("bun:sqlite");', true, false],
    ['import type { SQL } from "bun";', false, true],
    ['import {\n  file,\n  type SQL,\n} from "bun";', false, true],
    ["const sql = new Bun.SQL(url);", false, true],
    ['let pool: import("bun").SQL;', false, true],
    ['import type { BunRequest, Server } from "bun";', false, false],
    ["// bun:sqlite answers synchronously", false, false],
    ['import { SQLITE_DIRS } from "./sqlite-dirs";', false, false],
    ["Bun.SQLite", false, false],
  ];
  for (const [code, ...expected] of samples) expect([code, uses(code, sqlite), uses(code, sql)]).toEqual([code, ...expected]);
  // The rule holds a file outside a driver's home to it, whatever the folder (the other database's included)...
  const sqliteImport = 'import { Database } from "bun:sqlite";';
  expect(driverOffences([["engine/engine.ts", sqliteImport]])).toEqual([`src/engine/engine.ts:1 ${sqlite}: "bun:sqlite"`]);
  expect(driverOffences([["store/run-rows.ts", `\n${sqliteImport}`]])).toEqual([`src/store/run-rows.ts:2 ${sqlite}: "bun:sqlite"`]);
  expect(driverOffences([["store/postgres/writer.ts", sqliteImport]])).toHaveLength(1);
  expect(driverOffences([["store/sqlite/run-writers.ts", "const sql = new Bun.SQL(url);"]])).toHaveLength(1);
  // ...and lets each driver's home folder use it: which the real files do.
  expect(driverOffences([["store/sqlite/run-store.ts", sqliteImport]])).toEqual([]);
  for (const { driver, home, allowed } of DRIVERS) {
    expect([driver, [...sourceFiles(`${home}**/*.ts`)].some(([, code]) => uses(code, driver))]).toEqual([driver, true]);
    // Each allowed file is at the top of src/store/ and still uses its driver (else it comes off the list).
    for (const file of Object.keys(allowed)) {
      expect([file, /^store\/[^/]+\.ts$/.test(file), uses(readFileSync(join(SRC, file), "utf8"), driver)]).toEqual([file, true, true]);
    }
  }
});
