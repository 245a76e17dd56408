/**
 * The docs stand alone: they never send a user to the HTTP spec, DESIGN.md or files a user does not have,
 * and every "Settings → X" path they name is a tab the UI's settings page has.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const docs = [
  join(ROOT, "README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(ROOT, "docs", f)),
  ...readdirSync(join(ROOT, "docs/pieces")).map((f) => join(ROOT, "docs/pieces", f)),
];

test("no doc cites the spec, DESIGN.md or the examples folder a user does not have", () => {
  const found: string[] = [];
  for (const file of docs) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/\bspec \d|\(spec\b|the spec\b|DESIGN\.md|examples\/\*\.json/i.test(line))
          found.push(`${file.slice(ROOT.length + 1)}:${i + 1}: ${line.trim().slice(0, 100)}`);
      });
  }
  expect(found).toEqual([]);
});

test('every "Settings → X" path in the docs is a tab of the settings page', () => {
  const page = readFileSync(join(ROOT, "public/src/pages/settings-page.tsx"), "utf8");
  const tabs = [...page.matchAll(/label: "([^"]+)"/g)].map((m) => m[1]!);
  expect(tabs.length).toBeGreaterThan(1);
  const wrong: string[] = [];
  for (const file of docs) {
    // A whole path ("Settings → Workspace → API tokens"), except another product's (GitHub's settings).
    for (const m of readFileSync(file, "utf8").matchAll(/(GitHub: )?Settings((?: → [A-Za-z][\w -]*?)+)(?=[.,;:)`*]| in | or | \(|$)/gm)) {
      if (m[1]) continue;
      const path = m[2]!
        .split(" → ")
        .slice(1)
        .map((part) => part.trim());
      if (path.length !== 1 || !tabs.includes(path[0]!)) wrong.push(`${file.slice(ROOT.length + 1)}: "Settings${m[2]}" (tabs: ${tabs.join(", ")})`);
    }
  }
  expect(wrong).toEqual([]);
});
