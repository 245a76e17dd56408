/**
 * The catalog of Activepieces pieces the configured npm registry serves (docs/activepieces.md, "The
 * catalog"): one page of the registry's search API (`GET {registry}/-/v1/search?text=…&size=…&from=…`) per
 * request, kept for a while (a TTL on the clock the server uses), merged with what the bundled index
 * (catalog-index.json, made by scripts/catalog-index.ts) and the installed packages know: display name,
 * logo, categories, counts of actions and triggers, auth. No tarball is ever downloaded to browse.
 * When the registry cannot be asked, the bundled index answers alone and says how old it is.
 *
 *   const catalog = new PieceCatalog({ registryUrl, index: loadCatalogIndex(), installed: () => packages.installed(), now });
 *   await catalog.search({ q: "slack", offset: 0, limit: 20 });
 */
import { existsSync, readFileSync } from "node:fs";
import { LRUCache } from "lru-cache";
// Imported, not read from disk, so the compiled binary carries it.
import bundledIndex from "./catalog-index.json";
import type { ApPieceDescription } from "./protocol";
import { pieceIdFor } from "./project";

/** The public npm registry: what Bun's package manager uses when WEFT_NPM_REGISTRY is unset. */
export const DEFAULT_REGISTRY = "https://registry.npmjs.org";
/** What is searched for: the registry's full-text search on the Activepieces package prefix, with the user's words. */
const SEARCH_TEXT = "@activepieces/piece";
const REGISTRY_TIMEOUT_MS = 8_000;
const DEFAULT_TTL_MS = 15 * 60_000;
/** After the registry failed, it is left alone this long (the index answers at once instead of each search waiting for it). */
const OFFLINE_MS = 30_000;

/** One piece of the bundled index: what a maintainer's run of scripts/catalog-index.ts learnt without tarballs. */
export interface CatalogIndexEntry {
  name: string;
  version: string;
  displayName?: string;
  description?: string;
  logoUrl?: string;
  categories?: string[];
  /** Known only from a census (which installs the packages); absent otherwise. */
  actions?: number;
  triggers?: number;
  authKind?: string | null;
}

export interface CatalogIndex {
  generatedAt: string;
  registry: string;
  pieces: CatalogIndexEntry[];
}

/** One piece as the catalog shows it. `null` counts and auth: not known until it is installed. */
export interface CatalogEntry {
  name: string;
  pieceId: string;
  displayName: string;
  description: string;
  version: string;
  logoUrl: string | null;
  categories: string[];
  actions: number | null;
  triggers: number | null;
  /** SECRET_TEXT, BASIC_AUTH, CUSTOM_AUTH, OAUTH2, "none", or null when unknown. */
  authKind: string | null;
  /** The installed versions, newest first (empty: not installed). */
  installedVersions: string[];
  /** The registry (or the index) has a newer version than the newest installed one. */
  updateAvailable: boolean;
}

export interface CatalogPage {
  data: CatalogEntry[];
  total: number;
  /** `registry`: the registry's search answered; `index`: the bundled index answered (the registry could not be asked, or a category was chosen). */
  source: "registry" | "index";
  /** When the bundled index was made (null: none is bundled). */
  indexGeneratedAt: string | null;
  /** Why the registry was not used (set when source is `index`). */
  offlineReason: string | null;
  /** Every category known to the index and the installed pieces, for the filter. */
  categories: string[];
}

export interface CatalogQuery {
  q?: string;
  category?: string;
  offset: number;
  limit: number;
}

/** An installed package version as the catalog needs it. */
export interface InstalledDescription {
  name: string;
  version: string;
  description: ApPieceDescription;
}

export interface PieceCatalogOptions {
  /** Unset: the public npm registry. */
  registryUrl: string | undefined;
  index: CatalogIndex | null;
  installed: () => InstalledDescription[];
  /** Milliseconds, from the clock the server uses. */
  now: () => number;
  ttlMs?: number;
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

interface SearchHit {
  name: string;
  version: string;
  description: string;
  keywords: string[];
}

interface SearchPage {
  total: number;
  hits: SearchHit[];
}

/** The bundled index (catalog-index.json beside this file), or the index in the file at `path`; null when it is absent or not an index. */
export function loadCatalogIndex(path?: string): CatalogIndex | null {
  let parsed: unknown = bundledIndex;
  if (path !== undefined) {
    if (!existsSync(path)) return null;
    parsed = JSON.parse(readFileSync(path, "utf8"));
  }
  const index = parsed as Partial<CatalogIndex> | null;
  return index && Array.isArray(index.pieces) && typeof index.generatedAt === "string" ? (index as CatalogIndex) : null;
}

/** Activepieces keeps each piece's logo at cdn.activepieces.com/pieces/<short name>.png; its pieces name it so. */
export function conventionalLogo(name: string): string | null {
  const match = /^@activepieces\/piece-([a-z0-9-]+)$/.exec(name);
  return match ? `https://cdn.activepieces.com/pieces/${match[1]}.png` : null;
}

/** `@activepieces/piece-google-sheets` → "Google Sheets" (until the piece itself says its name). */
function displayNameOf(name: string): string {
  const short = name.replace(/^@[^/]+\//, "").replace(/^piece-/, "");
  return short
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");
}

/** Compares dotted versions numerically (pre-release tags sort before the release). */
export function compareVersions(a: string, b: string): number {
  const [mainA = "", preA] = a.split("-", 2);
  const [mainB = "", preB] = b.split("-", 2);
  const partsA = mainA.split(".").map(Number);
  const partsB = mainB.split(".").map(Number);
  for (let i = 0; i < Math.max(partsA.length, partsB.length); i++) {
    const diff = (partsA[i] ?? 0) - (partsB[i] ?? 0);
    if (diff !== 0) return diff;
  }
  if (preA === preB) return 0;
  if (preA === undefined) return 1;
  if (preB === undefined) return -1;
  return preA < preB ? -1 : 1;
}

/** A piece package's name: `@scope/piece-x` or `piece-x` (Activepieces names every piece package so). */
function isPieceName(name: string): boolean {
  return /^(@[a-z0-9][a-z0-9._~-]*\/)?piece-[a-z0-9][a-z0-9._~-]*$/.test(name);
}

function words(q: string | undefined): string[] {
  return (q ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== "");
}

export class PieceCatalog {
  private readonly registryUrl: string;
  private readonly pages: LRUCache<string, SearchPage>;
  private readonly fetch: (url: string, init: RequestInit) => Promise<Response>;
  private offline: { until: number; reason: string } | null = null;

  constructor(private readonly o: PieceCatalogOptions) {
    this.registryUrl = (o.registryUrl ?? DEFAULT_REGISTRY).replace(/\/+$/, "");
    this.pages = new LRUCache<string, SearchPage>({
      max: 200,
      ttl: o.ttlMs ?? DEFAULT_TTL_MS,
      perf: { now: o.now },
      // Asks the clock at every read rather than keeping its answer for a millisecond of real time.
      ttlResolution: 0,
    });
    this.fetch = o.fetch ?? ((url, init) => fetch(url, init));
  }

  /** Forgets the registry's pages (a package was installed: its page is asked again). */
  forget(): void {
    this.pages.clear();
    this.offline = null;
  }

  async search(query: CatalogQuery): Promise<CatalogPage> {
    const installed = this.installedByName();
    const categories = this.knownCategories(installed);
    // Categories are Activepieces' own, known to the index and installed pieces only: the registry's search cannot filter by them.
    if (query.category) return this.fromIndex(query, installed, categories, null);
    if (this.offline && this.o.now() < this.offline.until) return this.fromIndex(query, installed, categories, this.offline.reason);
    let page: SearchPage;
    try {
      page = await this.registryPage(query);
    } catch (error) {
      this.offline = { until: this.o.now() + OFFLINE_MS, reason: (error as Error).message };
      return this.fromIndex(query, installed, categories, this.offline.reason);
    }
    this.offline = null;
    return {
      data: page.hits.map((hit) => this.entry(hit, installed)),
      total: page.total,
      source: "registry",
      indexGeneratedAt: this.o.index?.generatedAt ?? null,
      offlineReason: null,
      categories,
    };
  }

  /** One page of the registry's search API, from the cache while it is fresh. */
  private async registryPage(query: CatalogQuery): Promise<SearchPage> {
    const text = [SEARCH_TEXT, ...words(query.q)].join(" ");
    const key = `${text}\u0000${query.offset}\u0000${query.limit}`;
    const cached = this.pages.get(key);
    if (cached) return cached;
    const url = `${this.registryUrl}/-/v1/search?${new URLSearchParams({ text, size: String(query.limit), from: String(query.offset) })}`;
    let response: Response;
    try {
      response = await this.fetch(url, { signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS), headers: { accept: "application/json" } });
    } catch (error) {
      throw new Error(`the npm registry ${this.registryUrl} could not be reached: ${(error as Error).message.replace(/\.$/, "")}`);
    }
    if (!response.ok) throw new Error(`the npm registry ${this.registryUrl} answered the search with HTTP ${response.status}`);
    const body = (await response.json().catch(() => null)) as { objects?: unknown; total?: unknown } | null;
    if (!body || !Array.isArray(body.objects)) throw new Error(`the npm registry ${this.registryUrl} answered the search with no objects list`);
    const hits: SearchHit[] = [];
    for (const object of body.objects as Array<{ package?: Record<string, unknown> }>) {
      const pkg = object?.package;
      if (!pkg || typeof pkg.name !== "string" || typeof pkg.version !== "string" || !isPieceName(pkg.name)) continue;
      hits.push({
        name: pkg.name,
        version: pkg.version,
        description: typeof pkg.description === "string" ? pkg.description : "",
        keywords: Array.isArray(pkg.keywords) ? pkg.keywords.filter((k): k is string => typeof k === "string") : [],
      });
    }
    const page = { total: typeof body.total === "number" ? body.total : hits.length, hits };
    this.pages.set(key, page);
    return page;
  }

  /** The bundled index (and the installed packages it may lack), searched here: offline, or filtered by category. */
  private fromIndex(query: CatalogQuery, installed: Map<string, InstalledDescription[]>, categories: string[], offlineReason: string | null): CatalogPage {
    const byName = new Map<string, SearchHit>();
    for (const piece of this.o.index?.pieces ?? []) {
      byName.set(piece.name, { name: piece.name, version: piece.version, description: piece.description ?? "", keywords: [] });
    }
    for (const [name, versions] of installed) {
      if (!byName.has(name) && versions[0])
        byName.set(name, { name, version: versions[0].version, description: versions[0].description.description, keywords: [] });
    }
    const wanted = words(query.q);
    const all = [...byName.values()]
      .map((hit) => this.entry(hit, installed))
      .filter((entry) => !query.category || entry.categories.includes(query.category))
      .filter((entry) => {
        const text = [entry.name, entry.displayName, entry.description, ...entry.categories].join(" ").toLowerCase();
        return wanted.every((word) => text.includes(word));
      })
      .sort((a, b) => a.displayName.localeCompare(b.displayName));
    return {
      data: all.slice(query.offset, query.offset + query.limit),
      total: all.length,
      source: "index",
      indexGeneratedAt: this.o.index?.generatedAt ?? null,
      offlineReason,
      categories,
    };
  }

  /** A hit of the registry (or the index) with what the index and the installed versions know about it. */
  private entry(hit: SearchHit, installed: Map<string, InstalledDescription[]>): CatalogEntry {
    const indexed = this.o.index?.pieces.find((piece) => piece.name === hit.name);
    const versions = installed.get(hit.name) ?? [];
    const newest = versions[0]?.description;
    const latest = indexed && compareVersions(indexed.version, hit.version) > 0 ? indexed.version : hit.version;
    // The index's counts and auth were measured on its version: another version may differ.
    const measured = indexed?.version === latest ? indexed : undefined;
    return {
      name: hit.name,
      pieceId: pieceIdFor(hit.name),
      displayName: newest?.displayName ?? indexed?.displayName ?? displayNameOf(hit.name),
      description: hit.description || newest?.description || indexed?.description || "",
      version: latest,
      logoUrl: newest?.logoUrl ?? indexed?.logoUrl ?? conventionalLogo(hit.name),
      categories: newest?.categories ?? indexed?.categories ?? [],
      actions: newest ? Object.keys(newest.actions).length : (measured?.actions ?? null),
      triggers: newest ? Object.keys(newest.triggers).length : (measured?.triggers ?? null),
      authKind: newest ? (newest.auth?.type ?? "none") : measured?.authKind === undefined ? null : (measured.authKind ?? "none"),
      installedVersions: versions.map((v) => v.version),
      updateAvailable: versions[0] !== undefined && compareVersions(latest, versions[0].version) > 0,
    };
  }

  private installedByName(): Map<string, InstalledDescription[]> {
    const byName = new Map<string, InstalledDescription[]>();
    for (const pkg of this.o.installed()) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg]);
    for (const versions of byName.values()) versions.sort((a, b) => compareVersions(b.version, a.version));
    return byName;
  }

  private knownCategories(installed: Map<string, InstalledDescription[]>): string[] {
    const found = new Set<string>();
    for (const piece of this.o.index?.pieces ?? []) for (const category of piece.categories ?? []) found.add(category);
    for (const versions of installed.values()) for (const category of versions[0]?.description.categories ?? []) found.add(category);
    return [...found].sort();
  }
}
