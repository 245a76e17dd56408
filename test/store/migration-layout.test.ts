/**
 * Both databases keep their schema the same way (CONTRIBUTING.md, "Add a migration"): one file per version,
 * `NNN-name.ts` default-exporting `{ version, name, sql }`, in src/store/sqlite/migrations/ and
 * src/store/postgres/migrations/, with the same numbers, names and file names on both (a version that changes
 * nothing on one database is a no-op there, as SQLite's 019 and PostgreSQL's 018 are). Each folder's files.ts
 * names its files, and its index.ts lists their migrations in order; neither holds one of its own.
 */
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Migration } from "../../src/store/migration";
import { postgresMigrations } from "../../src/store/postgres/migrations";
import { migrations as sqliteMigrations } from "../../src/store/sqlite/migrations";

const STORE = join(import.meta.dir, "../../src/store");
const SQLITE = join(STORE, "sqlite/migrations");
const POSTGRES = join(STORE, "postgres/migrations");

const FILE_NAME = /^(\d{3})-([a-z0-9]+(?:-[a-z0-9]+)*)\.ts$/;

/** The text of a TypeScript file with its comments removed (a comment may mention a version). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

function isMigration(value: unknown): value is Migration {
  const m = value as Migration | undefined;
  return typeof m === "object" && m !== null && typeof m.version === "number" && typeof m.name === "string" && typeof m.sql === "string";
}

interface Folder {
  /** Each well-formed file's migration, by file name, in file name order. */
  files: Map<string, Migration>;
  problems: string[];
}

/** A migrations folder's files, each checked alone: its name, and the one version it holds under that name. */
async function readFolder(dir: string): Promise<Folder> {
  const files = new Map<string, Migration>();
  const problems: string[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (file === "index.ts" || file === "files.ts") continue;
    const named = FILE_NAME.exec(file);
    if (!named) {
      problems.push(`${file}: not named NNN-name.ts`);
      continue;
    }
    const declared = withoutComments(readFileSync(join(dir, file), "utf8")).match(/\bversion\s*:\s*\d/g)?.length ?? 0;
    if (declared !== 1) problems.push(`${file}: declares ${declared} versions, not one`);
    const module = await import(join(dir, file));
    for (const [key, value] of Object.entries(module)) {
      if (key !== "default" && isMigration(value)) problems.push(`${file}: also exports a migration (${key})`);
    }
    const migration: unknown = module.default;
    if (!isMigration(migration)) {
      problems.push(`${file}: its default export is not { version, name, sql }`);
      continue;
    }
    if (migration.version !== Number(named[1]) || migration.name !== named[2]) {
      problems.push(`${file}: holds version ${migration.version} "${migration.name}"`);
    }
    files.set(file, migration);
  }
  const versions = [...files.values()].map((m) => m.version);
  if (versions.some((v, i) => v !== i + 1)) problems.push(`versions are ${versions.join(", ")}, not 1 to ${versions.length}`);
  return { files, problems };
}

/** What is wrong with two migration folders side by side: each on its own, then a file on one only. */
async function layoutProblems(sqliteDir: string, postgresDir: string): Promise<string[]> {
  const sqlite = await readFolder(sqliteDir);
  const postgres = await readFolder(postgresDir);
  const problems = [...sqlite.problems.map((p) => `SQLite ${p}`), ...postgres.problems.map((p) => `PostgreSQL ${p}`)];
  for (const file of sqlite.files.keys()) if (!postgres.files.has(file)) problems.push(`${file} is on SQLite only`);
  for (const file of postgres.files.keys()) if (!sqlite.files.has(file)) problems.push(`${file} is on PostgreSQL only`);
  return problems;
}

test("every version is one file on each database, with the same number, name and file name", async () => {
  expect(await layoutProblems(SQLITE, POSTGRES)).toEqual([]);
});

test("each index.ts lists its folder's files in order, and neither it nor files.ts holds a migration of its own", async () => {
  for (const [dir, listed] of [
    [SQLITE, sqliteMigrations],
    [POSTGRES, postgresMigrations],
  ] as const) {
    const files = [...(await readFolder(dir)).files.values()];
    expect(listed.map((m) => `${m.version} ${m.name}`)).toEqual(files.map((m) => `${m.version} ${m.name}`));
    expect(listed.every((m, i) => m === files[i])).toBe(true);
    for (const file of ["index.ts", "files.ts"]) expect(withoutComments(readFileSync(join(dir, file), "utf8"))).not.toMatch(/\bversion\s*:/);
  }
});

test("the check sees a broken layout", async () => {
  const root = mkdtempSync(join(tmpdir(), "migration-layout-"));
  const folder = (name: string, files: Record<string, string>) => {
    const dir = join(root, name);
    mkdirSync(dir);
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
    return dir;
  };
  const one = (version: number, name: string) => `export default { version: ${version}, name: "${name}", sql: "SELECT 1;" };\n`;
  const sqlite = folder("sqlite", {
    "index.ts": "export const migrations = [];\n",
    "001-identity.ts": one(1, "identity"),
    "002-workflows.ts": one(2, "workflows"),
    "003-kv-store.ts": `export const runs = ${one(4, "runs").slice("export default ".length)}${one(3, "kv-store")}`,
  });
  const postgres = folder("postgres", {
    "index.ts": "export const postgresMigrations = [];\n",
    "001-identity.ts": one(1, "users"),
    "002-flows.ts": one(2, "flows"),
    "003-kv-store.ts": one(3, "kv-store"),
    "004-runs.ts": one(4, "runs"),
    "helpers.ts": "export const X = 1;\n",
  });
  expect(await layoutProblems(sqlite, postgres)).toEqual([
    "SQLite 003-kv-store.ts: declares 2 versions, not one",
    "SQLite 003-kv-store.ts: also exports a migration (runs)",
    'PostgreSQL 001-identity.ts: holds version 1 "users"',
    "PostgreSQL helpers.ts: not named NNN-name.ts",
    "002-workflows.ts is on SQLite only",
    "002-flows.ts is on PostgreSQL only",
    "004-runs.ts is on PostgreSQL only",
  ]);
});
