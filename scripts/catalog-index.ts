/**
 * Makes the catalog's bundled index, src/pieces-runtime/activepieces/catalog-index.json (docs/activepieces.md,
 * "The catalog"): what a server shows of the Activepieces pieces when it cannot reach the npm registry.
 * Run by a maintainer, against the registry in WEFT_NPM_REGISTRY (default: the public one):
 *
 *   bun scripts/catalog-index.ts [--census docs/activepieces.md] [--described census.json] [--names scripts/piece-census.list]
 *
 * The names come from the registry's search API (`/-/v1/search`, paged); a registry without one (a plain
 * mirror) is asked, one small document per name, for the names of --names. No tarball is downloaded, so the
 * index holds names, versions, descriptions (when the registry gives them) and logo URLs; counts of actions and
 * triggers and the auth kind come only from a census table (`bun scripts/piece-census.ts --markdown`, which
 * installs the packages), for the versions it measured. The registry's documents carry the package's own
 * description, which for Activepieces' pieces is mostly empty; `--described` takes the piece's display name,
 * description, categories and logo from what the census's `--json` wrote (it loads each piece), for the versions it
 * loaded — the maintainer's usual run is the census with `--markdown --json`, then this with both files.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type CatalogIndex, type CatalogIndexEntry, conventionalLogo, DEFAULT_REGISTRY } from "../src/pieces-runtime/activepieces/catalog";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    census: { type: "string" },
    described: { type: "string" },
    names: { type: "string", default: join(import.meta.dir, "piece-census.list") },
    out: { type: "string", default: join(import.meta.dir, "../src/pieces-runtime/activepieces/catalog-index.json") },
  },
});
const registry = (process.env.WEFT_NPM_REGISTRY ?? DEFAULT_REGISTRY).replace(/\/+$/, "");
const PIECE = /^@activepieces\/piece-[a-z0-9-]+$/;

async function fromSearch(): Promise<Array<{ name: string; version: string; description: string }> | null> {
  const found: Array<{ name: string; version: string; description: string }> = [];
  for (let from = 0; ; from += 250) {
    const response = await fetch(`${registry}/-/v1/search?${new URLSearchParams({ text: "@activepieces/piece", size: "250", from: String(from) })}`);
    if (!response.ok) return from === 0 ? null : found;
    const page = (await response.json()) as { objects: Array<{ package: { name: string; version: string; description?: string } }>; total: number };
    for (const { package: pkg } of page.objects)
      if (PIECE.test(pkg.name)) found.push({ name: pkg.name, version: pkg.version, description: pkg.description ?? "" });
    if (page.objects.length === 0 || from + 250 >= page.total) return found;
  }
}

async function fromNames(file: string): Promise<Array<{ name: string; version: string; description: string }>> {
  const names = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => PIECE.test(line));
  const found: Array<{ name: string; version: string; description: string }> = [];
  for (const name of names) {
    // The abbreviated document: versions and dist-tags, no readme.
    const response = await fetch(`${registry}/${name.replace("/", "%2f")}`, { headers: { accept: "application/vnd.npm.install-v1+json" } });
    if (!response.ok) {
      console.error(`skipped ${name}: HTTP ${response.status}`);
      continue;
    }
    const doc = (await response.json()) as { "dist-tags"?: { latest?: string }; description?: string };
    const version = doc["dist-tags"]?.latest;
    if (version) found.push({ name, version, description: doc.description ?? "" });
  }
  return found;
}

/** name@version → counts and auth, from the rows of a census table whose package loaded. */
function censusRows(file: string): Map<string, Pick<CatalogIndexEntry, "actions" | "triggers" | "authKind">> {
  const rows = new Map<string, Pick<CatalogIndexEntry, "actions" | "triggers" | "authKind">>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const [, name, version, , loads, actions, triggers, , auth] = cells;
    if (!name || !PIECE.test(name) || loads !== "yes") continue;
    rows.set(`${name}@${version}`, { actions: Number(actions), triggers: Number(triggers), authKind: auth === "none" ? null : auth });
  }
  return rows;
}

/** name@version → what the piece says of itself and its counts, from a census's `--json` file. */
function describedRows(file: string): Map<string, Omit<CatalogIndexEntry, "name" | "version">> {
  const rows = new Map<string, Omit<CatalogIndexEntry, "name" | "version">>();
  const list = JSON.parse(readFileSync(file, "utf8")) as Array<CatalogIndexEntry & { actions: number; triggers: number }>;
  for (const { name, version, displayName, description, categories, logoUrl, actions, triggers, authKind } of list)
    rows.set(`${name}@${version}`, {
      ...(displayName ? { displayName } : {}),
      ...(description ? { description } : {}),
      ...(categories && categories.length > 0 ? { categories } : {}),
      ...(logoUrl ? { logoUrl } : {}),
      actions,
      triggers,
      authKind: authKind ?? null,
    });
  return rows;
}

const found = (await fromSearch()) ?? (await fromNames(values.names));
const census = values.census ? censusRows(values.census) : new Map();
const described = values.described ? describedRows(values.described) : new Map();
const pieces: CatalogIndexEntry[] = found
  .sort((a, b) => a.name.localeCompare(b.name))
  .map((pkg) => ({
    name: pkg.name,
    version: pkg.version,
    ...(pkg.description ? { description: pkg.description } : {}),
    ...(conventionalLogo(pkg.name) ? { logoUrl: conventionalLogo(pkg.name) as string } : {}),
    ...census.get(`${pkg.name}@${pkg.version}`),
    ...described.get(`${pkg.name}@${pkg.version}`),
  }));
const index: CatalogIndex = { generatedAt: new Date().toISOString(), registry, pieces };
writeFileSync(values.out, `${JSON.stringify(index, null, 2)}\n`);
console.log(
  `${pieces.length} pieces (${pieces.filter((p) => p.actions !== undefined).length} with counts from the census, ${pieces.filter((p) => p.description).length} with a description) → ${values.out}`,
);
