/**
 * Installed Activepieces packages on disk, under `<data dir>/pieces/packages/`: one directory per package
 * version (`@activepieces+piece-mysql@0.2.7/`), each a small project that Bun's package manager installed
 * (so dependencies are resolved and versions sit side by side), plus `weft-piece.json`: the piece's
 * description, the tarball's integrity and where it came from.
 *
 * Bun's package manager is inside the Bun runtime, and inside the compiled binary (BUN_BE_BUN=1 makes the
 * binary act as `bun`), so installing needs no Node or npm. A registry install is checked twice: Bun
 * checks the tarball against the registry's `dist.integrity`, and the integrity Bun recorded in the lock
 * file must equal the one Weft read from the registry itself. Lifecycle scripts never run.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { PieceHostProcess } from "./host-process";
import type { ApPieceDescription } from "./protocol";

/** The dependency key a tarball install is made under (its real name is read from its package.json). */
const TARBALL_KEY = "weft-tarball-piece";
const INSTALL_TIMEOUT_MS = 5 * 60_000;

export class PackageError extends Error {}

export interface InstalledPackage {
  name: string;
  version: string;
  /** The directory it is installed in. */
  dir: string;
  /** The dependency key under node_modules (the name, or TARBALL_KEY for a tarball install). */
  entry: string;
  integrity: string;
  source: "registry" | "tarball";
  installedAt: string;
  description: ApPieceDescription;
}

interface Manifest {
  name: string;
  version: string;
  entry: string;
  integrity: string;
  source: "registry" | "tarball";
  installedAt: string;
  description: ApPieceDescription;
}

export interface PackageDirOptions {
  dir: string;
  /** Unset: Bun's default registry. */
  registryUrl: string | undefined;
  allowCidrs: readonly string[];
}

function dirName(name: string, version: string): string {
  return `${name.replace("/", "+")}@${version}`;
}

/** `name`, `name@1.2.3`, `@scope/name@latest` → name and the version or tag asked for. */
export function parseSpec(spec: string): { name: string; wanted: string } {
  const text = spec.trim();
  const at = text.lastIndexOf("@");
  const [name, wanted] = at > 0 ? [text.slice(0, at), text.slice(at + 1)] : [text, "latest"];
  if (!/^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/.test(name)) {
    throw new PackageError(
      `"${spec}" is not an npm package name; give e.g. @activepieces/piece-mysql or @activepieces/piece-mysql@0.2.7, or a path to a .tgz file`,
    );
  }
  return { name, wanted: wanted || "latest" };
}

export class PackageDir {
  readonly root: string;
  /** The address policy's allow-list for the piece host that describes a new package (PiecePackages keeps it current). */
  allowCidrs: readonly string[];

  constructor(private readonly o: PackageDirOptions) {
    this.root = join(o.dir, "packages");
    this.allowCidrs = o.allowCidrs;
  }

  list(): InstalledPackage[] {
    if (!existsSync(this.root)) return [];
    const found: InstalledPackage[] = [];
    for (const entry of readdirSync(this.root).sort()) {
      if (entry.startsWith(".")) continue;
      const dir = join(this.root, entry);
      const manifestPath = join(dir, "weft-piece.json");
      if (!existsSync(manifestPath)) continue;
      try {
        const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
        found.push({ ...manifest, dir });
      } catch {
        // a damaged manifest: the package is skipped (and can be installed again)
      }
    }
    return found;
  }

  /**
   * The entry module of an installed package: its package.json `exports["."]` (require or default) or
   * `main`, else index.js. Read by hand because the compiled binary does not resolve packages on disk.
   */
  modulePath(pkg: Pick<InstalledPackage, "dir" | "entry">): string {
    const root = join(pkg.dir, "node_modules", pkg.entry);
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { main?: string; exports?: unknown };
    const dot = typeof manifest.exports === "object" && manifest.exports !== null ? (manifest.exports as Record<string, unknown>)["."] : manifest.exports;
    const exported =
      typeof dot === "string"
        ? dot
        : typeof dot === "object" && dot !== null
          ? ((dot as Record<string, unknown>).require ?? (dot as Record<string, unknown>).default)
          : undefined;
    const relative = typeof exported === "string" ? exported : (manifest.main ?? "index.js");
    const path = resolve(root, relative);
    for (const candidate of [path, `${path}.js`, join(path, "index.js")]) if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    throw new PackageError(`${pkg.entry} has no entry module at ${relative}`);
  }

  /** Installs `spec` (a name with an optional version or tag, or a path to a .tgz); an installed version is returned as it is. */
  async add(spec: string, cwd = process.cwd()): Promise<InstalledPackage> {
    const tarball = /\.(tgz|tar\.gz)$/i.test(spec.trim()) ? resolve(cwd, spec.trim()) : undefined;
    if (tarball) return this.addTarball(tarball);
    const { name, wanted } = parseSpec(spec);
    const { version, integrity } = await this.resolveVersion(name, wanted);
    const existing = this.list().find((pkg) => pkg.name === name && pkg.version === version);
    if (existing) return existing;
    return this.installInto(`${name}@${version}`, { [name]: version }, async (staging) => {
      const locked = lockedIntegrity(staging, name);
      if (locked !== integrity) {
        throw new PackageError(
          `the tarball of ${name}@${version} does not match the integrity the registry gives for it (${integrity}, installed ${locked ?? "none"}); nothing was installed`,
        );
      }
      return { name, version, entry: name, integrity, source: "registry" as const };
    });
  }

  private async addTarball(path: string): Promise<InstalledPackage> {
    if (!existsSync(path)) throw new PackageError(`no file at ${path}`);
    const integrity = `sha512-${createHash("sha512").update(readFileSync(path)).digest("base64")}`;
    return this.installInto(path, { [TARBALL_KEY]: `file:${isAbsolute(path) ? path : resolve(path)}` }, async (staging) => {
      const manifest = JSON.parse(readFileSync(join(staging, "node_modules", TARBALL_KEY, "package.json"), "utf8")) as { name?: string; version?: string };
      if (!manifest.name || !manifest.version) throw new PackageError(`${path} has no package.json with a name and a version`);
      return { name: manifest.name, version: manifest.version, entry: TARBALL_KEY, integrity, source: "tarball" as const };
    });
  }

  /** Removes one installed version. */
  remove(pkg: InstalledPackage): void {
    rmSync(pkg.dir, { recursive: true, force: true });
  }

  /** The exact version and integrity the registry gives for a version or tag (asked through Bun's package manager). */
  private async resolveVersion(name: string, wanted: string): Promise<{ version: string; integrity: string }> {
    mkdirSync(this.root, { recursive: true });
    const { code, stdout, stderr } = await this.bun(["info", `${name}@${wanted}`, "--json"], this.root, 60_000);
    if (code !== 0) {
      const reason = stderr.trim().split("\n").filter(Boolean).slice(-2).join("; ") || `exit code ${code}`;
      if (/404|does not exist/i.test(reason)) throw new PackageError(`the npm registry has no ${name}@${wanted} (${reason})`);
      throw new PackageError(
        `the npm registry could not be asked for ${name}@${wanted}: ${reason}; set WEFT_NPM_REGISTRY to a reachable registry, or install from a .tgz file`,
      );
    }
    let document: { version?: string; dist?: { integrity?: string } };
    try {
      document = JSON.parse(stdout) as typeof document;
    } catch {
      throw new PackageError(`the npm registry's answer for ${name}@${wanted} is not JSON`);
    }
    if (!document.version) throw new PackageError(`${name} has no version or tag "${wanted}"`);
    const integrity = document.dist?.integrity;
    if (!integrity) throw new PackageError(`the registry gives no integrity for ${name}@${document.version}; refusing to install it unchecked`);
    return { version: document.version, integrity };
  }

  /**
   * Installs into a staging directory, checks it (`check`), describes the piece in a host process, then
   * moves the directory into place in one rename: a failed install leaves nothing behind.
   */
  private async installInto(
    what: string,
    dependencies: Record<string, string>,
    check: (staging: string) => Promise<Omit<Manifest, "installedAt" | "description">>,
  ): Promise<InstalledPackage> {
    mkdirSync(this.root, { recursive: true });
    const staging = join(this.root, `.staging-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
    mkdirSync(staging);
    try {
      writeFileSync(join(staging, "package.json"), JSON.stringify({ name: "weft-installed-piece", private: true, dependencies }, null, 2));
      await this.bunInstall(staging, what);
      const checked = await check(staging);
      const description = await this.describe(staging, checked);
      const manifest: Manifest = { ...checked, installedAt: new Date().toISOString(), description };
      writeFileSync(join(staging, "weft-piece.json"), JSON.stringify(manifest, null, 2));
      const dir = join(this.root, dirName(checked.name, checked.version));
      const existing = this.list().find((pkg) => pkg.name === checked.name && pkg.version === checked.version);
      if (existing) return existing;
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
      return { ...manifest, dir };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  private async bunInstall(staging: string, what: string): Promise<void> {
    const args = ["install", "--ignore-scripts", "--no-progress", "--no-summary"];
    const { code, stderr } = await this.bun(args, staging, INSTALL_TIMEOUT_MS);
    if (code !== 0) {
      if (/integrity ?check ?failed/i.test(stderr)) {
        throw new PackageError(`the tarball of ${what} does not match the integrity the registry gives for it; nothing was installed`);
      }
      const reason = stderr.trim().split("\n").filter(Boolean).slice(-5).join("; ") || `exit code ${code}`;
      throw new PackageError(`installing ${what} failed: ${reason}`);
    }
  }

  /** Runs Bun's package manager: this program itself (Bun, or the compiled binary acting as bun). */
  private async bun(args: string[], cwd: string, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: cwd,
      // The compiled weft binary acts as the bun CLI with this set; Bun itself ignores it.
      BUN_BE_BUN: "1",
      BUN_INSTALL_CACHE_DIR: join(this.o.dir, "cache"),
    };
    if (this.o.registryUrl) env.NPM_CONFIG_REGISTRY = this.o.registryUrl;
    const proc = Bun.spawn([process.execPath, ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
    const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    clearTimeout(timer);
    return { code, stdout, stderr };
  }

  /** Loads the package in a piece host (never in the server) and asks for its description. */
  private async describe(staging: string, pkg: Pick<Manifest, "name" | "version" | "entry">): Promise<ApPieceDescription> {
    const host = new PieceHostProcess({
      modulePath: this.modulePath({ dir: staging, entry: pkg.entry }),
      packageName: pkg.name,
      version: pkg.version,
      cwd: staging,
      allowCidrs: this.allowCidrs,
      idleMs: 60_000,
    });
    try {
      const answer = await host.request({ t: "describe" }, { timeoutMs: 60_000 });
      return answer.value as ApPieceDescription;
    } catch (error) {
      throw new PackageError(`${pkg.name}@${pkg.version} is not a usable Activepieces piece: ${(error as Error).message}`);
    } finally {
      host.stop();
    }
  }
}

/** The integrity Bun's text lock file records for a top-level package. */
function lockedIntegrity(staging: string, name: string): string | undefined {
  const path = join(staging, "bun.lock");
  if (!existsSync(path)) return undefined;
  // bun.lock is JSON with trailing commas.
  const text = readFileSync(path, "utf8").replace(/,(\s*[}\]])/g, "$1");
  const lock = JSON.parse(text) as { packages?: Record<string, unknown[]> };
  const entry = lock.packages?.[name];
  const integrity = entry?.find((part) => typeof part === "string" && /^sha\d+-/.test(part));
  return typeof integrity === "string" ? integrity : undefined;
}
