/**
 * `npm run build` → dist/weft: one executable with the server, the UI, the built-in pieces and the
 * worker entry embedded. Worker-thread entry files must be listed as extra entrypoints so that
 * `new Worker(...)` finds them inside the binary.
 */
import { existsSync, mkdirSync } from "node:fs";

/**
 * Extra entrypoints loaded at run time by path (worker threads, sandbox processes). Inside the binary
 * they live relative to the entrypoints' common root, src/ — src/lib/thread-entry.ts relies on that.
 */
const EXTRA_ENTRYPOINTS = [
  "src/engine/worker.ts",
  "src/store/sqlite/writer-thread.ts",
  "src/store/sqlite/checkpoint-thread.ts",
  "src/store/reader-thread.ts",
  "src/sandbox/child.ts",
].filter((file) => existsSync(file));

/** Which functions a start runs, recorded by scripts/bytecode-order.ts; the build lays their bytecode out first. */
export const BYTECODE_ORDER = "scripts/bytecode-order.txt";

export async function build(outfile = "dist/weft"): Promise<string> {
  mkdirSync("dist", { recursive: true });
  if (existsSync("public/build.ts")) {
    const ui = Bun.spawnSync([process.execPath, "public/build.ts"], { stdout: "inherit", stderr: "inherit" });
    if (ui.exitCode !== 0) throw new Error("UI build failed");
  }
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
    "src/main.ts",
    ...EXTRA_ENTRYPOINTS,
    "--outfile",
    outfile,
  ];
  const result = Bun.spawnSync(args, { stdout: "inherit", stderr: "inherit" });
  if (result.exitCode !== 0) throw new Error(`bun build failed with exit code ${result.exitCode}`);
  return outfile;
}

if (import.meta.main) {
  const started = performance.now();
  const outfile = await build(process.argv[2]);
  const size = Bun.file(outfile).size;
  console.log(`built ${outfile}: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
