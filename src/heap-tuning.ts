/**
 * JavaScriptCore sizes its garbage collector's heap growth from the machine's RAM. On a host with tens of
 * gigabytes, a busy Weft server lets garbage pile up between collections (JS heaps of 60–80 MB measured at
 * 8,000 runs/s on a 24 GiB machine, process peak ~185 MB); told the machine has 1 GiB, the collector runs a
 * little more often and the peak stays near 130 MB at the same throughput (bench/engine.ts).
 *
 * The setting (BUN_JSC_forceRAMSize) is read only when the process starts, so the long-running commands
 * re-execute themselves once with it set: `process.execve` replaces the program in place (same pid, same
 * stdio), so a process manager sees nothing of it. An operator's own value is always kept, and
 * WEFT_HEAP_TUNING=off skips the step. src/main.ts does it before it loads the app, so it costs one extra
 * start of the runtime and not a second load of everything.
 */
export const HEAP_RAM_SIZE = String(1024 * 1024 * 1024);

/** The command a `weft` argument list names (`serve` when none is given). */
export const commandOf = (argv: string[]): string => (argv[0] && !argv[0].startsWith("-") ? argv[0] : "serve");

/** Whether a `weft` argument list starts a long-running command, which restarts once with the collector tuned. */
export const isLongRunning = (argv: string[]): boolean => ["serve", "mcp"].includes(commandOf(argv)) && !argv.includes("--help") && !argv.includes("-h");

export function execWithHeapTuning(env: NodeJS.ProcessEnv = process.env): void {
  if (env.BUN_JSC_forceRAMSize !== undefined || env.WEFT_HEAP_TUNING === "off") return;
  const execve = (process as { execve?: (file: string, args: string[], env: Record<string, string | undefined>) => never }).execve;
  if (typeof execve !== "function") return;
  // A compiled binary is its own script; from source the runtime needs its flags and the script again.
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  const args = compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, process.argv[1], ...process.argv.slice(2)];
  try {
    execve(process.execPath, args, { ...env, BUN_JSC_forceRAMSize: HEAP_RAM_SIZE });
  } catch {
    // Not possible here (e.g. a sandbox forbids exec): run with the runtime's defaults.
  }
}
