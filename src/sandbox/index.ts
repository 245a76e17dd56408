/**
 * User code, contained. `runUserCode` is the one entry point the `code` piece (and anything else
 * that runs user JavaScript) calls:
 *
 *   const result = await runUserCode({ code: "return input.a + 1", input: { a: 1 } });
 *   // { ok: true, value: 2, logs: [] }  or  { ok: false, reason: "timeout", error: "code ran longer than ..." }
 *
 * It never throws. Limits default to the operator's settings (./limits.ts) and a call may only
 * lower them. How the defences fit together: docs/security.md.
 */
import { LRUCache } from "lru-cache";
import { sandboxSettings, type SandboxIsolation } from "./limits";
import { runInProcess } from "./process-pool";
import { runInline } from "./quickjs-runner";
import type { SandboxResult } from "./result";

export { configureSandbox, sandboxSettings, type SandboxIsolation, type SandboxSettings } from "./limits";
export type { SandboxFailureReason, SandboxResult } from "./result";
export { sandboxProcessCounts, stopSandboxProcesses, type SandboxProcessCounts } from "./process-pool";

export interface UserCodeRequest {
  /** A function body using `input` and `return`, or a module exporting `code`/`default` (./user-code.ts). */
  code: string;
  /** Any JSON value; the code receives a copy as `input`. */
  input?: unknown;
  /** At most the operator's limit. */
  timeoutMs?: number;
  /** At most the operator's limit. */
  memoryBytes?: number;
  /** Only "process" can be asked for when the operator chose "inline"; never the reverse. */
  isolation?: SandboxIsolation;
  /** Told when the call waits for a free sandbox process (true) and when it starts (false). */
  onWait?: (waiting: boolean) => void;
}

/**
 * Code that ran into its time limit inline is "heavy": its later runs go to a sandbox process, where
 * the kill is exact. (Inline, the interrupt handler is consulted every few thousand operations, so a
 * loop around an expensive built-in can overshoot the limit; once is enough to learn that.) Made by the
 * first such code: the cache allocates room for all its entries at once, which no start should pay for.
 */
let heavy: LRUCache<number | bigint, true> | undefined;

/** Where the code would run now: the operator's choice, or "process" for code flagged heavy. */
export function isolationFor(code: string, requested?: SandboxIsolation): SandboxIsolation {
  if (sandboxSettings().isolation === "process" || requested === "process") return "process";
  return heavy?.has(Bun.hash(code)) ? "process" : "inline";
}

export async function runUserCode(request: UserCodeRequest): Promise<SandboxResult> {
  const settings = sandboxSettings();
  if (typeof request.code !== "string" || request.code.trim() === "") {
    return { ok: false, reason: "error", error: "there is no code to run; write a function body that uses `input` and `return`s a value", logs: [] };
  }
  const timeoutMs = Math.max(1, Math.min(request.timeoutMs ?? settings.timeoutMs, settings.timeoutMs));
  const memoryBytes = Math.max(1024 * 1024, Math.min(request.memoryBytes ?? settings.memoryBytes, settings.memoryBytes));
  const call = { code: request.code, input: request.input, timeoutMs, memoryBytes, maxOutputBytes: settings.maxOutputBytes };
  if (isolationFor(request.code, request.isolation) === "process") return runInProcess(call, settings, request.onWait);
  const result = await runInline(call);
  if (!result.ok && result.reason === "timeout") {
    heavy ??= new LRUCache({ max: 10_000 });
    heavy.set(Bun.hash(request.code), true);
  }
  return result;
}
