/**
 * A throwaway npm registry on 127.0.0.1 for tests: it serves package documents and tarballs packed (with
 * `bun pm pack`) from folders on disk, so `bun info` / `bun install` — and Weft's `pieces add` — run
 * against it for real, with no network. `corrupt()` makes a version's advertised integrity wrong.
 * It answers the npm registry's documented search API too (`GET /-/v1/search?text=&size=&from=`:
 * `{objects: [{package: {name, version, description, keywords, links}}], total}`), matching every word
 * of `text` in a package's name, description or keywords; `describe()` sets what a search shows of one.
 *   const registry = await startNpmRegistry();
 *   await registry.publish("node_modules/@activepieces/piece-mysql");
 *   testApp({ WEFT_NPM_REGISTRY: registry.url }); ... registry.stop();
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Published {
  name: string;
  version: string;
  file: string;
  integrity: string;
}

export interface NpmRegistry {
  url: string;
  publish(dir: string): Promise<Published>;
  /** The registry advertises a wrong integrity for this version from now on. */
  corrupt(name: string, version: string): void;
  /** How many tarballs were downloaded. */
  downloads(): number;
  /** The description and keywords the search API gives for a package. */
  describe(name: string, description: string, keywords?: string[]): void;
  /** The search requests received, as their query strings. */
  searches(): string[];
  /** Answers every search with this HTTP status from now on (0: answer normally). */
  failSearch(status: number): void;
  stop(): void;
}

const BUN = process.execPath;

/** Packs a package folder into a tarball with Bun's package manager. */
export async function packTarball(dir: string, destination = mkdtempSync(join(tmpdir(), "weft-pack-"))): Promise<string> {
  const proc = Bun.spawn([BUN, "pm", "pack", "--destination", destination, "--quiet", "--ignore-scripts"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if ((await proc.exited) !== 0) throw new Error(`bun pm pack failed in ${dir}: ${await new Response(proc.stderr).text()}`);
  const file = readdirSync(destination).find((name) => name.endsWith(".tgz"));
  if (!file) throw new Error(`bun pm pack wrote no tarball for ${dir}`);
  return join(destination, file);
}

export async function startNpmRegistry(): Promise<NpmRegistry> {
  const packages = new Map<string, Map<string, Published>>();
  const corrupted = new Set<string>();
  const described = new Map<string, { description: string; keywords: string[] }>();
  const searched: string[] = [];
  let searchStatus = 0;
  let downloads = 0;
  let port = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request): Response {
      const url = new URL(request.url);
      const path = decodeURIComponent(url.pathname.slice(1));
      if (path === "-/v1/search") {
        searched.push(url.search);
        if (searchStatus) return new Response("search is down", { status: searchStatus });
        const words = (url.searchParams.get("text") ?? "").toLowerCase().split(/\s+/).filter(Boolean);
        const size = Number(url.searchParams.get("size") ?? 20);
        const from = Number(url.searchParams.get("from") ?? 0);
        const found = [...packages.keys()]
          .sort()
          .map((name) => {
            const latest = [...(packages.get(name)?.keys() ?? [])].at(-1) ?? "";
            const { description = "", keywords = [] } = described.get(name) ?? {};
            return { name, version: latest, description, keywords, links: { npm: `https://www.npmjs.com/package/${name}` } };
          })
          .filter((pkg) => words.every((word) => [pkg.name, pkg.description, ...pkg.keywords].join(" ").toLowerCase().includes(word)));
        return Response.json({
          objects: found
            .slice(from, from + size)
            .map((pkg) => ({ package: pkg, score: { final: 1, detail: { quality: 1, popularity: 1, maintenance: 1 } }, searchScore: 1 })),
          total: found.length,
          time: new Date().toUTCString(),
        });
      }
      if (path.startsWith("-/")) {
        const wanted = path.slice(2);
        for (const versions of packages.values()) {
          for (const published of versions.values()) {
            if (published.file.endsWith(`/${wanted}`)) {
              downloads++;
              return new Response(Bun.file(published.file), { headers: { "content-type": "application/octet-stream" } });
            }
          }
        }
        return new Response("not found", { status: 404 });
      }
      const versions = packages.get(path);
      if (!versions) return Response.json({ error: "Not found" }, { status: 404 });
      const base = `http://127.0.0.1:${port}`;
      const document = {
        name: path,
        "dist-tags": { latest: [...versions.keys()].at(-1) },
        versions: Object.fromEntries(
          [...versions.values()].map((p) => [
            p.version,
            {
              name: p.name,
              version: p.version,
              dependencies: {},
              dist: {
                tarball: `${base}/-/${p.file.split("/").pop()}`,
                integrity: corrupted.has(`${p.name}@${p.version}`) ? `sha512-${createHash("sha512").update("not the tarball").digest("base64")}` : p.integrity,
              },
            },
          ]),
        ),
      };
      return Response.json(document);
    },
  });
  port = server.port ?? 0;
  return {
    url: `http://127.0.0.1:${port}`,
    async publish(dir) {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; version: string };
      const file = await packTarball(dir);
      const integrity = `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;
      const published = { name: manifest.name, version: manifest.version, file, integrity };
      const versions = packages.get(manifest.name) ?? new Map<string, Published>();
      versions.set(manifest.version, published);
      packages.set(manifest.name, versions);
      return published;
    },
    corrupt(name, version) {
      corrupted.add(`${name}@${version}`);
    },
    downloads: () => downloads,
    describe(name, description, keywords = []) {
      described.set(name, { description, keywords });
    },
    searches: () => [...searched],
    failSearch(status) {
      searchStatus = status;
    },
    stop: () => server.stop(true),
  };
}
