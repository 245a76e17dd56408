/**
 * The UI takes its types from the server's schemas, never its code (docs/architecture.md, "The UI"): what the
 * bundler keeps of each file in public/src, type-only imports erased, reaches into src/ only for the plain lists
 * of src/schema/operators.ts and src/schema/scopes.ts, which import nothing themselves.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const UI = join(ROOT, "public/src");
const ALLOWED = ["src/schema/operators", "src/schema/scopes"];

const sources = (readdirSync(UI, { recursive: true }) as string[]).filter((file) => /\.tsx?$/.test(file) && !file.endsWith(".d.ts"));

/** The repository paths (without extension) a UI file imports at run time. */
function runtimeImports(file: string): string[] {
  const loader = file.endsWith(".tsx") ? "tsx" : "ts";
  const imports = new Bun.Transpiler({ loader }).scanImports(readFileSync(join(UI, file), "utf8"));
  return imports
    .map((i) => i.path)
    .filter((path) => path.startsWith("."))
    .map((path) => relative(ROOT, resolve(dirname(join(UI, file)), path)).replace(/\.tsx?$/, ""));
}

test("public/src imports from src/ only types, but for two lists that import nothing", () => {
  expect(sources.length).toBeGreaterThan(30);
  const reaching = sources.flatMap((file) =>
    runtimeImports(file)
      .filter((path) => !path.startsWith("public/"))
      .map((path) => `${file} → ${path}`),
  );
  expect(reaching.filter((line) => !ALLOWED.some((allowed) => line.endsWith(`→ ${allowed}`)))).toEqual([]);
  for (const allowed of ALLOWED) {
    const text = readFileSync(join(ROOT, `${allowed}.ts`), "utf8");
    expect({ file: allowed, imports: new Bun.Transpiler({ loader: "ts" }).scanImports(text) }).toEqual({ file: allowed, imports: [] });
  }
});

test("public/src/types.ts takes the server's types (src/schema/) and carries no code into the bundle", () => {
  const text = readFileSync(join(UI, "types.ts"), "utf8");
  expect(text).toContain('from "../../src/schema/workflow-record"');
  expect(runtimeImports("types.ts")).toEqual([]);
  // No hand-written twin of a response shape: the file declares type aliases only.
  expect(text.match(/^export interface /m)).toBeNull();
});
