/**
 * Comments cite the project's own docs, never the HTTP spec's section numbers or DESIGN.md: a maintainer
 * has docs/ (see docs-standalone.test.ts), not those. Write `docs/engine.md "Errors, retries, sub-flows"`,
 * or state the rule in the comment itself. Every line of src/, pieces/ and public/src is read (comments and
 * the strings of OpenAPI descriptions alike).
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const FOLDERS = ["src", "pieces", "public/src"];

/**
 * "spec 4.3", "Spec 9.3:", "(spec 8)", "spec §1", "the spec says", "the spec's order", "DESIGN.md §3", and a bare
 * section number after a word: "restore (4.5)", "runs (4.3, 4.6)".
 */
const CITES_SPEC = /DESIGN\.md|\b[Ss]pec ?§|\b[Ss]pec \d|\bthe (HTTP )?spec\b(?![.\w-])|\bspec's\b|[a-z] \(\d+\.\d+(?:, ?\d+\.\d+)*\)/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sources(path);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

test("the pattern finds what it forbids and nothing else", () => {
  for (const line of [
    "Runs (spec 4.3, 4.6, 4.10, 6.1)",
    "Router conditions (DESIGN.md §3)",
    "// Spec 9.3: piece detail reports pieceVersion",
    "Idempotency-Key (spec 8): opt-in per route",
    "Resource groups in the spec's order (spec §1)",
    "Operations the spec says read no body",
    "filters go to the API as spec 4.6 names them",
    " * Workflows: versions and restore (4.5), webhook tokens",
    "Runs of a workflow (4.3, 4.6)",
  ])
    expect({ line, cites: CITES_SPEC.test(line) }).toEqual({ line, cites: true });
  for (const line of [
    "Requests to an OAuth2 token endpoint (RFC 6749 §4.1.3, §4.4, §6)",
    "The OpenAPI 3.1 contract",
    "async add(spec: string, cwd?: string)",
    'if (spec.kind === "every") return afterMs + spec.everySeconds * 1000;',
    'import { scheduleOf } from "../triggers/schedule-spec";',
    "const SKIP = /(\\.d\\.ts|\\.test\\.(ts|js)|\\.spec\\.(ts|js))$/;",
    'the rules of docs/api.md "4. Run"',
    "a package spec: a name with an optional version",
    "restore (docs/api.md section 5)",
    "const ratio = Math.round(1.5);",
    "InfluxDB 1.x (InfluxQL) and 2.x (Flux)",
  ])
    expect({ line, cites: CITES_SPEC.test(line) }).toEqual({ line, cites: false });
});

test("no comment in src/, pieces/ or public/src cites the spec's sections or DESIGN.md", () => {
  const found: string[] = [];
  for (const file of FOLDERS.flatMap((folder) => sources(join(ROOT, folder)))) {
    const path = relative(ROOT, file);
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (CITES_SPEC.test(line)) found.push(`${path}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
  }
  expect(found).toEqual([]);
});
