/**
 * A page the server hands to browsers: an HTML shell and the content-hashed assets it names,
 * bundled by public/build.ts. The builder UI (./ui.ts) and the API reference (./api-docs.ts) are two
 * such pages. From source a page is built in-process on first use (always fresh, no build step for
 * `npm start`); the compiled binary embeds the modules public/build.ts generates instead.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Elysia, t } from "elysia";
import { AppError } from "../http/errors";
import type { Security } from "./middleware/security";

export interface PageBundle {
  html: string;
  assets: Record<string, { type: string; body: string }>;
}

interface PreparedAsset {
  type: string;
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
}

export interface PreparedPage {
  html: string;
  assets: Map<string, PreparedAsset>;
}

const SOURCE_BUILDER = join(import.meta.dir, "../../public/build.ts");

/** The page built from source by `public/build.ts`'s `builder`, or undefined inside the binary (no sources there). */
async function buildFromSource(builder: PageRoutes["builder"]): Promise<PageBundle | undefined> {
  if (!existsSync(SOURCE_BUILDER)) return undefined;
  // A variable specifier keeps `bun build --compile` from pulling the bundler into the binary.
  const file: string = SOURCE_BUILDER;
  return (await import(file))[builder]();
}

export const gzip = (body: Uint8Array<ArrayBuffer>) => Bun.gzipSync(body, { level: 9 }) as Uint8Array<ArrayBuffer>;

function prepare(bundle: PageBundle): PreparedPage {
  const assets = new Map<string, PreparedAsset>();
  for (const [name, asset] of Object.entries(bundle.assets)) {
    const body = new TextEncoder().encode(asset.body);
    assets.set(name, { type: asset.type, body, gzip: gzip(body) });
  }
  return { html: bundle.html, assets };
}

/** Loads and gzips a page once, on first use; a failed build is retried on the next request. */
function lazyPage(load: () => Promise<PageBundle>): () => Promise<PreparedPage> {
  let prepared: Promise<PreparedPage> | undefined;
  return () => {
    prepared ??= load().then(prepare);
    prepared.catch(() => (prepared = undefined));
    return prepared;
  };
}

export const acceptsGzip = (request: Request) => /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");

/** The HTML shell: never cached (it names the current assets), under the page's Content-Security-Policy. */
const shellResponse = (html: string, csp: string) =>
  new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": csp,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
    },
  });

/** One asset of `page`, gzipped when the request accepts it; `where` says in the 404 where the names are listed. */
function assetResponse(page: PreparedPage, file: string, request: Request, where: string): Response {
  const asset = page.assets.get(file);
  if (!asset) throw new AppError("NOT_FOUND", `no asset named ${file}; asset names are content-hashed and listed in the page at ${where}`);
  const gzipped = acceptsGzip(request);
  return new Response(gzipped ? asset.gzip : asset.body, {
    headers: {
      "content-type": asset.type,
      // Names change with content, so a cached copy is never stale.
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      vary: "accept-encoding",
      ...(gzipped ? { "content-encoding": "gzip" } : {}),
    },
  });
}

export interface PageRoutes {
  name: string;
  /** The scope of both routes (x-permission): a page and its assets are fetched by a browser before any sign-in. */
  permission: "public";
  /** Where the shell is served; its assets are under `${assets}/:file`. */
  path: string;
  assets: string;
  csp: string;
  /** The function of public/build.ts that builds the page from source. */
  builder: "buildUi" | "buildApiDocs";
  /** The module public/build.ts generated, embedded in the binary (a literal import, so the compiler finds it). */
  embedded: () => Promise<{ default: unknown }>;
  summary: string;
  assetSummary: string;
}

/** The two public routes of a page: its shell and its content-hashed assets, both in the contract under Service. */
export function pageRoutes(security: Security, page: PageRoutes) {
  const prepared = lazyPage(async () => (await buildFromSource(page.builder)) ?? ((await page.embedded()).default as PageBundle));
  const tags = ["Service"];
  return new Elysia({ name: page.name })
    .use(security)
    .get(page.path, async () => shellResponse((await prepared()).html, page.csp), { permission: page.permission, detail: { tags, summary: page.summary } })
    .get(`${page.assets}/:file`, async ({ params, request }) => assetResponse(await prepared(), params.file, request, page.path), {
      permission: page.permission,
      params: t.Object({ file: t.String({ maxLength: 200 }) }),
      detail: { tags, summary: page.assetSummary },
    });
}
