import { defaultSandboxProcesses, loadSandboxConfig } from "../config";

/**
 * The limits every user-code call runs under, and where their defaults come from.
 * Operators set them with WEFT_SANDBOX_TIMEOUT_MS, WEFT_SANDBOX_MEMORY_MB and WEFT_SANDBOX_ISOLATION
 * (parsed in src/config.ts); a call may ask for less time or memory, never for more isolation loss.
 */

/** `process`: a child process that is SIGKILLed when it overruns (the hard backstop). `inline`: QuickJS in the calling thread. */
export type SandboxIsolation = "process" | "inline";

export interface SandboxSettings {
  /**
   * Time limit for one call, enforced by the QuickJS interrupt handler (and by SIGKILL in process isolation).
   * In a sandbox process it counts the call's CPU time, so a call that shares a core is not stopped for it;
   * inline it counts wall-clock time (the calling thread's own CPU time cannot be read there).
   */
  timeoutMs: number;
  /** Heap the code may use, enforced by the maximum size of the WebAssembly memory it runs in. */
  memoryBytes: number;
  isolation: SandboxIsolation;
  /** Most sandbox processes per calling thread (process isolation); each runs one call at a time. */
  processes: number;
  /** A sandbox process idle this long is stopped, all but one (set by tests through configureSandbox; no variable). */
  processIdleMs: number;
  /** Calls that may wait for a free sandbox process; one more is refused with a clear error. */
  queue: number;
  /** Largest result of a call, characters of JSON (WEFT_STEP_MAX_OUTPUT_MB, a step's output limit). */
  maxOutputBytes: number;
}

/**
 * Fixed limits: not worth a knob. The QuickJS stack limit must stay well below the native stack the
 * host gives WebAssembly frames (smaller in Worker threads): 384 KiB already overflowed a Bun Worker.
 */
export const STACK_BYTES = 256 * 1024;
/** Input nesting deeper than this is refused before it reaches the sandbox (JSON.parse there recurses). */
export const MAX_INPUT_DEPTH = 200;
/** Extra time a sandbox process gets past its time limit before it is killed. */
export const KILL_GRACE_MS = 500;
/** Scheduling priority (nice) of a sandbox process once a call in it runs slow: code that computes yields the cores to the server. */
export const SANDBOX_NICE = 10;
/** console.* lines kept per call. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_CHARS = 2000;

export const DEFAULT_SETTINGS: SandboxSettings = {
  timeoutMs: 5_000,
  memoryBytes: 64 * 1024 * 1024,
  isolation: "inline",
  processes: defaultSandboxProcesses(),
  processIdleMs: 30_000,
  queue: 1_000,
  maxOutputBytes: 10 * 1024 * 1024,
};

let current: SandboxSettings | undefined;

/** Sets the process-wide defaults (the server calls this with the parsed config; tests and benches too). */
export function configureSandbox(settings: Partial<SandboxSettings>): SandboxSettings {
  current = { ...sandboxSettings(), ...settings };
  return current;
}

/**
 * The defaults in force. A Worker thread has its own module state, so when nothing configured this
 * thread the settings are read from the environment through the same parser the server uses.
 */
export function sandboxSettings(): SandboxSettings {
  if (current) return current;
  current = { ...DEFAULT_SETTINGS };
  try {
    current = { ...current, ...loadSandboxConfig(process.env) };
  } catch {
    // A bad variable already stopped the server at start-up with a clear message; threads keep the defaults.
  }
  return current;
}
