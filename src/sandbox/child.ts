/**
 * The sandbox process: `weft __sandbox` (src/main.ts dispatches here before loading any config).
 * It reads one JSON request per line on stdin, runs it in QuickJS exactly as inline isolation does,
 * and writes one JSON reply per line on stdout, flushed within ~2 ms of the call's end. The parent SIGKILLs it when a call overruns; stdin
 * closing (the parent exited or was killed, or retired it when idle) ends it.
 *
 * A call's time limit counts its CPU time, so a call is not stopped for having waited for a core (the
 * parent lowers the priority of a process whose call runs long, ./process-pool.ts). Each reply (and the ready line) carries this process's CPU time so far (`cpuMs`), from which the
 * parent tells a call that is stuck from one that is only waiting for a core, and a reply how long its call
 * ran here (`ms`), which the parent's clock cannot tell when its own thread is busy (./process-pool.ts).
 */
import { countCpuTimeAsCallTime, processCpuMs, runInline, warmInline } from "./quickjs-runner";

export interface ChildRequest {
  id: number;
  code: string;
  input: unknown;
  timeoutMs: number;
  memoryBytes: number;
  maxOutputBytes?: number;
}

/** Longest a finished call's reply is held back to share a write with the replies after it. */
const FLUSH_EVERY_MS = 2;

export async function runSandboxChild(): Promise<void> {
  countCpuTimeAsCallTime();
  const out = Bun.stdout.writer();
  const send = (message: unknown) => out.write(`${JSON.stringify(message)}\n`);
  await warmInline(Number(process.env.WEFT_SANDBOX_WARM_BYTES) || 64 * 1024 * 1024);
  send({ ready: true, cpuMs: processCpuMs() });
  out.flush();
  const decoder = new TextDecoder();
  let buffer = "";
  let lastFlush = performance.now();
  for await (const chunk of Bun.stdin.stream()) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      const request = JSON.parse(line) as ChildRequest;
      const started = performance.now();
      const result = await runInline(request);
      send({ id: request.id, result, ms: performance.now() - started, cpuMs: processCpuMs() });
      // Replies of quick calls go out together; none waits more than ~2 ms behind the calls after it,
      // since the parent's kill timer for the next call starts only when this reply arrives.
      if (!buffer.includes("\n") || performance.now() - lastFlush > FLUSH_EVERY_MS) {
        out.flush();
        lastFlush = performance.now();
      }
    }
    out.flush();
    lastFlush = performance.now();
  }
  process.exit(0);
}
