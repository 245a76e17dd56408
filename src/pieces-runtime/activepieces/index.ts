/**
 * Activepieces community pieces in Weft: the one door through which they enter (docs/activepieces.md).
 * Packages are installed from the npm registry or a tarball into the data dir (./packages.ts), described
 * once in a piece host process, projected onto Weft's pieces SDK (./project.ts) and registered in the
 * piece registry next to the built-ins — several versions side by side, no restart needed. Their code runs only in
 * piece host processes (./host.ts, ./host-process.ts), started on first use and stopped when idle.
 *
 *   const packages = new PiecePackages({ dir, registryUrl, allowCidrs, publicUrl, registry });
 *   packages.load();                                   // at start: what is installed joins the registry
 *   await packages.add("@activepieces/piece-mysql");   // install + register
 */
import type { ResolvedAuth } from "../../pieces-sdk/types";
import type { PieceRegistry } from "../registry";
import type { InstalledDescription } from "./catalog";
import { PieceHostProcess } from "./host-process";
import { type InstalledPackage, PackageDir, PackageError } from "./packages";
import { authValueFor, MAPPED_PROP_TYPES, pieceIdFor, projectPiece } from "./project";

export {
  type CatalogEntry,
  type CatalogIndex,
  type CatalogPage,
  type CatalogQuery,
  loadCatalogIndex,
  PieceCatalog,
} from "./catalog";
export { PackageError } from "./packages";
export { actionIdFor, pieceIdFor } from "./project";

/** A host process unused this long is stopped (its memory returned); the next call starts it again. */
const HOST_IDLE_MS = 5 * 60_000;

export interface PiecePackagesOptions {
  /** `<data dir>/pieces`. */
  dir: string;
  /** Unset: Bun's default registry. */
  registryUrl: string | undefined;
  allowCidrs: readonly string[];
  publicUrl: string;
  registry: PieceRegistry;
  /** WEFT_PIECE_MEMORY_MB: a host process using more is stopped. */
  memoryMb?: number;
}

/** An installed package as the API and the command line show it. */
export interface PackageView {
  pieceId: string;
  name: string;
  version: string;
  displayName: string;
  integrity: string;
  source: "registry" | "tarball";
  installedAt: string;
  actions: number;
  triggers: number;
  authKind: string | null;
  /** Property types of its actions that Weft does not map (usable only when optional). */
  unsupported: string[];
}

export class PiecePackages {
  private readonly disk: PackageDir;
  private readonly hosts = new Map<string, PieceHostProcess>();
  private readonly loaded = new Map<string, InstalledPackage>();
  private allowCidrs: readonly string[];

  constructor(private readonly o: PiecePackagesOptions) {
    this.allowCidrs = o.allowCidrs;
    this.disk = new PackageDir({ dir: o.dir, registryUrl: o.registryUrl, allowCidrs: o.allowCidrs });
  }

  /** A new SSRF allow-list (Settings → Network): running piece hosts get it at once, later ones start with it. */
  setAllowCidrs(cidrs: readonly string[]): void {
    this.allowCidrs = [...cidrs];
    this.disk.allowCidrs = this.allowCidrs;
    for (const host of this.hosts.values()) host.allow(this.allowCidrs);
  }

  /** Registers every installed package; one that cannot be projected is skipped with its reason returned. */
  load(): Array<{ name: string; version: string; error: string }> {
    const failures: Array<{ name: string; version: string; error: string }> = [];
    for (const pkg of this.disk.list()) {
      try {
        this.register(pkg);
      } catch (error) {
        failures.push({ name: pkg.name, version: pkg.version, error: (error as Error).message });
      }
    }
    return failures;
  }

  list(): PackageView[] {
    return [...this.loaded.values()].map(view).sort((a, b) => (a.pieceId === b.pieceId ? (a.version < b.version ? 1 : -1) : a.pieceId < b.pieceId ? -1 : 1));
  }

  /** Every installed package version with the description the piece gave (for the catalog). */
  installed(): InstalledDescription[] {
    return [...this.loaded.values()].map((pkg) => ({ name: pkg.name, version: pkg.version, description: pkg.description }));
  }

  /** The installed versions of a piece id (`ap-mysql`), newest first. */
  versions(pieceId: string): PackageView[] {
    return this.list().filter((pkg) => pkg.pieceId === pieceId);
  }

  async add(spec: string, cwd?: string): Promise<PackageView> {
    const pkg = await this.disk.add(spec, cwd);
    this.register(pkg);
    return view(pkg);
  }

  /** Removes one installed version (the caller checks that no published workflow pins it). */
  remove(pieceId: string, version: string): PackageView {
    const key = `${pieceId}@${version}`;
    const pkg = this.loaded.get(key);
    if (!pkg) {
      const held = this.versions(pieceId).map((p) => p.version);
      throw new PackageError(
        held.length ? `${pieceId} ${version} is not installed; installed versions: ${held.join(", ")}` : `no package is installed as piece ${pieceId}`,
      );
    }
    this.hosts.get(key)?.stop();
    this.hosts.delete(key);
    this.o.registry.removeVersion(pieceId, version);
    this.loaded.delete(key);
    this.disk.remove(pkg);
    return view(pkg);
  }

  /** Stops every host process (server shutdown). */
  stop(): void {
    for (const host of this.hosts.values()) host.stop();
    this.hosts.clear();
  }

  /** How many host processes are running now (idle pieces run none). */
  get runningHosts(): number {
    return [...this.hosts.values()].filter((host) => host.running).length;
  }

  private register(pkg: InstalledPackage): void {
    const pieceId = pieceIdFor(pkg.name);
    const key = `${pieceId}@${pkg.version}`;
    const host = () => {
      let process = this.hosts.get(key);
      if (!process) {
        process = new PieceHostProcess({
          modulePath: this.disk.modulePath(pkg),
          packageName: pkg.name,
          version: pkg.version,
          cwd: pkg.dir,
          allowCidrs: this.allowCidrs,
          idleMs: HOST_IDLE_MS,
          memoryMb: this.o.memoryMb,
        });
        this.hosts.set(key, process);
      }
      return process;
    };
    const piece = projectPiece(pkg.description, { host, publicUrl: this.o.publicUrl });
    if (pkg.description.auth?.validates) {
      // The piece's validate() checks new credentials and backs a connection's Test button.
      const validate = async ({ auth }: { auth: ResolvedAuth }) => {
        const answer = await host().request(
          { t: "validate", auth: authValueFor(pkg.description, auth, "validate"), publicUrl: this.o.publicUrl },
          { timeoutMs: 30_000 },
        );
        const result = answer.value as { valid: boolean; error?: string };
        return { ok: result.valid, message: result.error };
      };
      piece.validateCredentials = validate;
      piece.checkConnection = validate;
    }
    this.o.registry.addVersion(piece);
    this.loaded.set(key, pkg);
  }
}

function view(pkg: InstalledPackage): PackageView {
  const description = pkg.description;
  const unsupported = new Set<string>();
  for (const action of Object.values(description.actions))
    for (const prop of Object.values(action.props)) if (!MAPPED_PROP_TYPES.has(prop.type)) unsupported.add(prop.type);
  return {
    pieceId: pieceIdFor(pkg.name),
    name: pkg.name,
    version: pkg.version,
    displayName: description.displayName,
    integrity: pkg.integrity,
    source: pkg.source,
    installedAt: pkg.installedAt,
    actions: Object.keys(description.actions).length,
    triggers: Object.keys(description.triggers).length,
    authKind: description.auth?.type ?? null,
    unsupported: [...unsupported].sort(),
  };
}
