/**
 * What a user-code call answers, and the failure messages users see (they name the limit that was
 * hit and what to change).
 */

export type SandboxFailureReason =
  /** The code ran past its time limit (interrupted). */
  | "timeout"
  /** The code needed more memory than its limit. */
  | "memory"
  /** The code recursed deeper than the sandbox stack. */
  | "stack"
  /** The input could not be handed to the code (too deep, not JSON). */
  | "input"
  /** The code's return value is not JSON. */
  | "output"
  /** The code threw, or does not parse. */
  | "error"
  /** The sandbox process overran and was killed (process isolation). */
  | "killed"
  /** The sandbox itself failed; it was replaced. */
  | "internal"
  /** Every sandbox process was busy and the queue of waiting calls was full (process isolation). */
  | "busy";

export type SandboxResult = { ok: true; value: unknown; logs: string[] } | { ok: false; error: string; reason: SandboxFailureReason; logs: string[] };

const MIB = 1024 * 1024;

export function failure(reason: SandboxFailureReason, error: string, logs: string[] = []): SandboxResult {
  return { ok: false, reason, error, logs };
}

export function timeoutFailure(timeoutMs: number, logs: string[] = []): SandboxResult {
  return failure(
    "timeout",
    `code ran longer than its time limit of ${timeoutMs} ms and was stopped; do less work per run, or ask the operator to raise WEFT_SANDBOX_TIMEOUT_MS`,
    logs,
  );
}

export function memoryFailure(memoryBytes: number, logs: string[] = []): SandboxResult {
  return failure(
    "memory",
    `code needed more than its memory limit of ${Math.round(memoryBytes / MIB)} MiB and was stopped; process less data per run, or ask the operator to raise WEFT_SANDBOX_MEMORY_MB`,
    logs,
  );
}

export function stackFailure(logs: string[] = []): SandboxResult {
  return failure("stack", "code recursed too deeply (stack overflow) and was stopped; use a loop instead of deep recursion", logs);
}

export function outputTooLarge(size: number, limit: number, logs: string[] = []): SandboxResult {
  return failure(
    "output",
    `the code's result is ${(size / MIB).toFixed(1)} MB of JSON; a step's output is limited to ${Math.round(limit / MIB)} MB — return less data, or ask the operator to raise WEFT_STEP_MAX_OUTPUT_MB`,
    logs,
  );
}

export function killedFailure(timeoutMs: number): SandboxResult {
  return failure(
    "killed",
    `code did not stop at its time limit of ${timeoutMs} ms (stuck inside a built-in function), so its sandbox process was killed; do less work per run`,
  );
}
