/**
 * The Activepieces census (docs/activepieces.md): installs every package of a list (default
 * scripts/piece-census.list) from the npm registry into one throwaway data directory, the way
 * `weft pieces add` does, and prints one row per package — version, framework generation, whether it
 * loads and projects onto Weft's pieces SDK, actions, triggers, properties mapped / unsupported, auth kind —
 * then how many of them load.
 *
 *   bun scripts/piece-census.ts [--markdown] [--json FILE] [list-file]
 *
 * `--json FILE` also writes, for each package that loads, what the piece says of itself (display name,
 * description, categories, logo) with its counts and auth: scripts/catalog-index.ts reads it (`--described FILE`)
 * for the catalog's bundled index, since the registry's documents carry no piece descriptions.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PiecePackages } from "../src/pieces-runtime/activepieces";
import { builtinRegistry } from "../src/pieces-runtime/registry";

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { markdown: { type: "boolean", default: false }, json: { type: "string" } },
  allowPositionals: true,
});
const listFile = positionals[0] ?? join(import.meta.dir, "piece-census.list");
const names = readFileSync(listFile, "utf8")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"));

interface Row {
  name: string;
  version: string;
  generation: string;
  loads: string;
  actions: number | string;
  triggers: number | string;
  props: string;
  auth: string;
  /** What the piece says of itself, for packages that load. */
  described?: { displayName: string; description: string; categories: string[]; logoUrl?: string };
}

const dir = mkdtempSync(join(tmpdir(), "weft-census-"));
const registry = builtinRegistry();
const packages = new PiecePackages({ dir, registryUrl: process.env.WEFT_NPM_REGISTRY, allowCidrs: [], publicUrl: "http://127.0.0.1:8080", registry });

function generation(contextVersion: string | undefined): string {
  if (contextVersion === "2") return "0.8x+ (context 2)";
  if (contextVersion === "1") return "0.2x (context 1)";
  return "≤0.7 (plain auth)";
}

async function census(name: string): Promise<Row> {
  try {
    const pkg = await packages.add(name);
    const piece = registry.get(pkg.pieceId, pkg.version);
    const described = JSON.parse(readFileSync(join(dir, "packages", `${pkg.name.replace("/", "+")}@${pkg.version}`, "weft-piece.json"), "utf8")) as {
      description: { contextVersion?: string; displayName: string; description: string; categories?: string[]; logoUrl?: string };
    };
    const self = described.description;
    let mapped = 0;
    let unsupported = 0;
    for (const action of Object.values(piece?.actions ?? {})) {
      for (const prop of Object.values(action.props)) {
        if (prop.propertyType === "unsupported") unsupported++;
        else mapped++;
      }
    }
    return {
      name,
      version: pkg.version,
      generation: generation(described.description.contextVersion),
      loads: "yes",
      actions: pkg.actions,
      triggers: pkg.triggers,
      props: `${mapped} / ${unsupported}`,
      auth: pkg.authKind ?? "none",
      described: {
        displayName: self.displayName,
        description: self.description,
        categories: self.categories ?? [],
        ...(self.logoUrl ? { logoUrl: self.logoUrl } : {}),
      },
    };
  } catch (error) {
    const message = ((error as Error).message ?? String(error)).replace(/\s+/g, " ");
    return {
      name,
      version: "?",
      generation: "?",
      loads: `no: ${message.length > 120 ? `…${message.slice(-120)}` : message}`,
      actions: "-",
      triggers: "-",
      props: "-",
      auth: "-",
    };
  }
}

/** At most `limit` installs at a time, rows in list order. */
async function all(limit: number): Promise<Row[]> {
  const rows: Row[] = new Array(names.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let i = next++; i < names.length; i = next++) rows[i] = await census(names[i] ?? "");
    }),
  );
  return rows;
}

const started = performance.now();
const rows = await all(4);
packages.stop();
rmSync(dir, { recursive: true, force: true });

const header = ["package", "version", "framework", "loads", "actions", "triggers", "props mapped / unsupported", "auth"];
const cells = rows.map((r) => [r.name, r.version, r.generation, r.loads, String(r.actions), String(r.triggers), r.props, r.auth]);
if (values.markdown) {
  console.log(`| ${header.join(" | ")} |`);
  console.log(`|${header.map(() => "---").join("|")}|`);
  for (const row of cells) console.log(`| ${row.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`);
} else {
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((row) => (row[i] ?? "").length)));
  for (const row of [header, ...cells]) console.log(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  "));
}
if (values.json) {
  const described = rows
    .filter((r) => r.described)
    .map((r) => ({ name: r.name, version: r.version, ...r.described, actions: r.actions, triggers: r.triggers, authKind: r.auth === "none" ? null : r.auth }));
  writeFileSync(values.json, `${JSON.stringify(described, null, 2)}\n`);
}
const loaded = rows.filter((r) => r.loads === "yes").length;
console.log(
  `\n${rows.length} listed, ${loaded} load and project (${((100 * loaded) / Math.max(1, rows.length)).toFixed(1)} %), in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
