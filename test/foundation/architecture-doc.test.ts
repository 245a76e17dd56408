/**
 * docs/architecture.md names files and folders so a newcomer can find them: every one it names must exist.
 * A path is `src/…`, `pieces/…`, `public/…`, `test/…`, `bench/…` or `docs/…` in backticks, in a link, or in
 * the layer diagram's labels; a link to another doc (`[scaling.md](scaling.md)`) is read from docs/. And the
 * other way round: every folder of src/ and public/src/ is named, so a folder added is a folder explained.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const DOC = "docs/architecture.md";

/** A repository path after a backtick, a quote, a bracket or a parenthesis, up to the first character no path holds. */
const PATH = /[`"(\[]((?:src|pieces|public|test|bench|docs)\/[\w./-]*)/g;
/** A file named relative to a folder the sentence gives: `transfer.ts`, `postgres/handle.ts`, `CONTRIBUTING.md`. */
const SHORT_NAME = /`((?!(?:src|pieces|public|test|bench|docs)\/)[\w./-]+\.(?:ts|tsx|md|cjs|json))`/g;
/** A link to another doc, relative to docs/: `](scaling.md)`, `](scaling.md#a-section)`. */
const DOC_LINK = /\]\(([\w-]+\.md)(?:#[\w-]*)?\)/g;

function namedPaths(text: string): string[] {
  const paths = [...text.matchAll(PATH)].map((m) => m[1]!.replace(/\.$/, ""));
  const links = [...text.matchAll(DOC_LINK)].map((m) => `docs/${m[1]}`);
  return [...new Set([...paths, ...links])];
}

test("the path pattern reads the ways the doc names files", () => {
  expect(namedPaths('see `src/store/port.ts`, ("src/main.ts<br/>entry") and [the guide](scaling.md#sizing).')).toEqual([
    "src/store/port.ts",
    "src/main.ts",
    "docs/scaling.md",
  ]);
  expect(namedPaths("`test/cluster/` and (`bench/run.ts`, `docs/pieces/`)")).toEqual(["test/cluster/", "bench/run.ts", "docs/pieces/"]);
  // Names relative to a folder the sentence gives, and prose, are not paths of the repository.
  expect(namedPaths("`postgres/handle.ts`, `run-lifecycle.ts`, a test/ folder, https://example.com/src/x")).toEqual([]);
});

test("every path docs/architecture.md names exists", () => {
  const named = namedPaths(readFileSync(join(ROOT, DOC), "utf8"));
  expect(named.length).toBeGreaterThan(100);
  const missing = named.filter((path) => !existsSync(join(ROOT, path)));
  expect(missing).toEqual([]);
});

test("every file it names by a short name (`transfer.ts`, `postgres/handle.ts`) exists somewhere", () => {
  const text = readFileSync(join(ROOT, DOC), "utf8");
  const short = [...new Set([...text.matchAll(SHORT_NAME)].map((m) => m[1]!))];
  expect(short.length).toBeGreaterThan(30);
  const files = ["src", "pieces", "public/src", "test", "bench", "docs"]
    .flatMap((folder) => readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" }).map((f) => `${folder}/${f}`))
    .concat(readdirSync(ROOT));
  const missing = short.filter((name) => !files.some((file) => file === name || file.endsWith(`/${name}`)));
  expect(missing).toEqual([]);
});

/** Every folder below `root`, as repository paths ("src/core/workflows/import"). */
function folders(root: string): string[] {
  return readdirSync(join(ROOT, root), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [`${root}/${entry.name}`, ...folders(`${root}/${entry.name}`)]);
}

test("every folder of src/ and public/src/ is named, by its path or within its parent's (`workflows/import/`)", () => {
  const text = readFileSync(join(ROOT, DOC), "utf8");
  const named = (folder: string) => {
    const parts = folder.split("/");
    return parts.some((_, i) => {
      const tail = parts.slice(i).join("/");
      return text.includes(`\`${tail}/`) || text.includes(`/${tail}/`) || text.includes(`(${tail}/`);
    });
  };
  const all = [...folders("src"), ...folders("public/src")];
  expect(all.length).toBeGreaterThan(20);
  expect(all.filter((folder) => !named(folder))).toEqual([]);
});
