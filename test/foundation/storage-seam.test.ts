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

test("no SQL outside src/store/", () => {
  const offences: string[] = [];
  for (const file of new Bun.Glob("**/*.ts").scanSync(SRC)) {
    if (file.startsWith("store/")) continue;
    const code = withoutComments(readFileSync(join(SRC, file), "utf8"));
    code.split("\n").forEach((line, i) => {
      for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) offences.push(`src/${file}:${i + 1} ${what}: ${line.trim().slice(0, 100)}`);
    });
  }
  expect(offences).toEqual([]);
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
