/**
 * Storage has one port: only src/store/ says how things are stored. Outside it no module opens the database
 * driver, prepares a statement, opens a transaction or holds SQL text — so a second storage adapter
 * (PostgreSQL) has one folder to implement. Comments are not code and are ignored.
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
