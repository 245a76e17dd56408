/**
 * Settings of JavaScriptCore for a long-running server, which it reads only when the process starts: the
 * long-running commands (`serve`, `mcp`) re-execute themselves once with them in the environment.
 * `process.execve` replaces the program in place (same pid, same stdio), so a process manager sees nothing
 * of it. src/main.ts does it before it loads the app, so it costs one extra start of the runtime and not a
 * second load of everything. A value the operator set is always kept; WEFT_HEAP_TUNING=off (named for the
 * first setting) skips the restart and all of them.
 *
 * - The collector's heap (BUN_JSC_forceRAMSize): JavaScriptCore sizes its heap growth from the machine's RAM.
 *   On a host with tens of gigabytes a busy server lets garbage pile up between collections (JS heaps of
 *   60–80 MB at 8,000 runs/s on a 24 GiB machine, process peak ~185 MB); told the machine has 1 GiB, the
 *   collector runs a little more often and the peak stays near 130 MB at the same throughput (bench/engine.ts).
 * - When a function is first compiled (BUN_JSC_thresholdForJITAfterWarmUp, …JITSoon): by default a function
 *   is compiled to machine code after ~35 calls. Starting a server calls hundreds of functions that often
 *   (schemas and routes being built, migrations checked) and never again; on 2 cores their compilation took
 *   CPU from the start itself: spawn → first webhook 238 → 200 ms with compilation after ~1,300 calls
 *   (docs/operations.md). A server's request path passes that within a second of load, and the engine bench's
 *   throughput did not change.
 */
export const HEAP_RAM_SIZE = String(1024 * 1024 * 1024);

/** What the restart adds to the environment (an operator's own value of each is kept). */
export const RUNTIME_SETTINGS: Readonly<Record<string, string>> = {
  BUN_JSC_forceRAMSize: HEAP_RAM_SIZE,
  BUN_JSC_thresholdForJITAfterWarmUp: "20000",
  BUN_JSC_thresholdForJITSoon: "20000",
};

/** The command a `weft` argument list names (`serve` when none is given). */
export const commandOf = (argv: string[]): string => (argv[0] && !argv[0].startsWith("-") ? argv[0] : "serve");

/** Whether a `weft` argument list starts a long-running command, which restarts once with the runtime tuned. */
export const isLongRunning = (argv: string[]): boolean => ["serve", "mcp"].includes(commandOf(argv)) && !argv.includes("--help") && !argv.includes("-h");

export function execWithRuntimeTuning(env: NodeJS.ProcessEnv = process.env): void {
  if (env.WEFT_HEAP_TUNING === "off") return;
  const missing = Object.keys(RUNTIME_SETTINGS).filter((name) => env[name] === undefined);
  // Every setting is in place: this is the restarted process (or the operator set them all).
  if (missing.length === 0) return;
  const execve = (process as { execve?: (file: string, args: string[], env: Record<string, string | undefined>) => never }).execve;
  if (typeof execve !== "function") return;
  // A compiled binary is its own script; from source the runtime needs its flags and the script again.
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  const args = compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, process.argv[1], ...process.argv.slice(2)];
  try {
    execve(process.execPath, args, { ...env, ...Object.fromEntries(missing.map((name) => [name, RUNTIME_SETTINGS[name]])) });
  } catch {
    // Not possible here (e.g. a sandbox forbids exec): run with the runtime's defaults.
  }
}
