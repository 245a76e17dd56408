/**
 * `npm run build` → dist/weft: one executable with the server, the UI, the built-in pieces and the
 * worker entry embedded. Worker-thread entry files must be listed as extra entrypoints so that
 * `new Worker(...)` finds them inside the binary.
 *
 * `npm run build -- --release` → dist/weft-<os>-<arch> for every RELEASE_TARGETS entry, one after another
 * (`--targets linux-arm64,linux-x64` picks some), and dist/SHA256SUMS for the files it built
 * (`sha256sum -c SHA256SUMS --ignore-missing`, docs/install.md). Bun cross-compiles: the first build for a
 * target downloads that target's runtime, the npm package @oven/bun-<os>-<arch>, from the npm registry into
 * ~/.bun/install/cache (~45 MB each, once per Bun version). `bun build.ts FILE --target linux-arm64` builds
 * one target's executable to FILE.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { buildTarget } from "./src/lib/build-info";

/**
 * Extra entrypoints loaded at run time by path (worker threads, sandbox processes). Inside the binary
 * they live relative to the entrypoints' common root, src/ — src/lib/thread-entry.ts relies on that.
 */
const EXTRA_ENTRYPOINTS = [
  "src/engine/worker.ts",
  "src/store/sqlite/writer-thread.ts",
  "src/store/sqlite/checkpoint-thread.ts",
  "src/store/sqlite/backup-thread.ts",
  "src/store/reader-thread.ts",
  "src/sandbox/child.ts",
];
// A moved or renamed entry would only show when its thread failed to start inside the binary: fail here.
const missingEntries = EXTRA_ENTRYPOINTS.filter((file) => !existsSync(file));
if (missingEntries.length > 0) throw new Error(`build.ts names thread entries that do not exist: ${missingEntries.join(", ")}`);

/** Which functions a start runs, recorded by scripts/bytecode-order.ts; the build lays their bytecode out first. */
export const BYTECODE_ORDER = "scripts/bytecode-order.txt";

/**
 * The release files, os-arch[-baseline] (dist/weft-<name>, `weft version`'s target) → Bun's `--target`.
 * Every target takes the host build's flags: Bun 1.4.5 accepts --bytecode and --bytecode-order across targets
 * (the bytecode is JavaScriptCore's, not the CPU's; the arm64 file is 13 MB larger with it than without).
 * linux-x64-baseline is for x86-64 CPUs without AVX2 (`grep -o avx2 /proc/cpuinfo` prints nothing there). In
 * Bun 1.4.5 @oven/bun-linux-x64 and @oven/bun-linux-x64-baseline hold the same runtime, byte for byte, so the
 * two files differ only in the target they name; kept apart so a download guide stays right when Bun's differ.
 * darwin-x64: Bun 1.4.5 leaves the Intel runtime's signature in place, which no longer matches the file; macOS
 * refuses it until re-signed on a Mac (`codesign --force --sign -`, docs/install.md). darwin-arm64 is ad-hoc
 * signed as built.
 */
export const RELEASE_TARGETS: Readonly<Record<string, string>> = {
  "linux-x64": "bun-linux-x64",
  "linux-x64-baseline": "bun-linux-x64-baseline",
  "linux-arm64": "bun-linux-arm64",
  "darwin-arm64": "bun-darwin-arm64",
  "darwin-x64": "bun-darwin-x64",
  "windows-x64": "bun-windows-x64",
};

/** The commit built, for `weft version` (src/lib/build-info.ts); "-dirty" when the work tree has changes. */
function sourceCommit(): string {
  const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { stdout: "pipe", stderr: "ignore" });
  const head = git("rev-parse", "--short", "HEAD");
  if (head.exitCode !== 0) return "source";
  const dirty = git("status", "--porcelain", "--untracked-files=no").stdout.toString().trim() !== "";
  return `${head.stdout.toString().trim()}${dirty ? "-dirty" : ""}`;
}

function checkTarget(target: string) {
  if (!RELEASE_TARGETS[target]) throw new Error(`unknown target ${target}; targets: ${Object.keys(RELEASE_TARGETS).join(", ")}`);
}

function buildUi() {
  if (!existsSync("public/build.ts")) return;
  const ui = Bun.spawnSync([process.execPath, "public/build.ts"], { stdout: "inherit", stderr: "inherit" });
  if (ui.exitCode !== 0) throw new Error("UI build failed");
}

/**
 * Builds one executable. `target`: a RELEASE_TARGETS name, for another machine; none builds for this one.
 * `ui: false` skips building the UI (a release builds it once for all its targets).
 */
export async function build(outfile = "dist/weft", options: { target?: string; ui?: boolean } = {}): Promise<string> {
  const { target, ui = true } = options;
  if (target !== undefined) checkTarget(target);
  mkdirSync(dirname(outfile), { recursive: true });
  if (ui) buildUi();
  // --bytecode: the binary carries precompiled bytecode, halving cold start (~200 → ~100 ms on 2 cores).
  // --splitting: each entry and each dynamic import is a chunk of its own, loaded when first needed. Without
  // it the whole program was one chunk that every process loaded before its first line ran: the start of
  // `weft serve` that only restarts itself with the collector tuned (src/main.ts), each worker thread and
  // each sandbox or piece-host child. Spawn → /healthz 318–379 → 212–249 ms on a machine where a page fault
  // is dear (2026-11-26, nproc=2).
  // --bytecode-order: the functions a start runs are laid out together at the front (fewer pages touched;
  // spawn → first webhook ~10 ms less on average, 2026-11-27, docs/operations.md).
  // Identifiers stay unminified: Elysia analyses handler source and warns on minified names.
  const args = [
    process.execPath,
    "build",
    "--compile",
    "--bytecode",
    "--splitting",
    "--format=esm",
    "--minify-syntax",
    ...(existsSync(BYTECODE_ORDER) ? ["--bytecode-order", BYTECODE_ORDER] : []),
    ...(target ? [`--target=${RELEASE_TARGETS[target]}`] : []),
    `--define=WEFT_BUILD_COMMIT=${JSON.stringify(sourceCommit())}`,
    `--define=WEFT_BUILD_TARGET=${JSON.stringify(target ?? buildTarget())}`,
    "src/main.ts",
    ...EXTRA_ENTRYPOINTS,
    "--outfile",
    outfile,
  ];
  const result = Bun.spawnSync(args, { stdout: "inherit", stderr: "inherit" });
  if (result.exitCode !== 0) throw new Error(`bun build failed with exit code ${result.exitCode}`);
  return outfile;
}

/** The file a release target's build is written to: dist/weft-linux-arm64, dist/weft-windows-x64.exe. */
export const releaseFile = (target: string, dir = "dist") => join(dir, `weft-${target}${target.startsWith("windows") ? ".exe" : ""}`);

/** Builds `targets` one after another (each compile takes the 2 cores), then SHA256SUMS over the files built. */
export async function buildRelease(targets: string[] = Object.keys(RELEASE_TARGETS), dir = "dist"): Promise<string[]> {
  targets.forEach(checkTarget);
  buildUi();
  const files: string[] = [];
  for (const target of targets) {
    const started = performance.now();
    files.push(await build(releaseFile(target, dir), { target, ui: false }));
    report(files.at(-1)!, started);
  }
  const sums = await Promise.all(files.map(async (file) => `${await sha256(file)}  ${basename(file)}\n`));
  writeFileSync(join(dir, "SHA256SUMS"), sums.join(""));
  return files;
}

async function sha256(file: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

function report(outfile: string, started: number) {
  const size = Bun.file(outfile).size;
  console.log(`built ${outfile}: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: { release: { type: "boolean" }, targets: { type: "string" }, target: { type: "string" } },
    allowPositionals: true,
  });
  const started = performance.now();
  if (values.release || values.targets) {
    const files = await buildRelease(values.targets?.split(",").map((name) => name.trim()));
    console.log(`built ${files.length} release file(s) and dist/SHA256SUMS in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } else report(await build(positionals[0], { target: values.target }), started);
}
