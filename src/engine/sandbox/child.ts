/**
 * The sandbox process: `weft __sandbox` (src/main.ts dispatches here before loading any config).
 * It reads one JSON request per line on stdin, runs it in QuickJS exactly as inline isolation does,
 * and writes one JSON reply per line on stdout, flushed as soon as the call ends. The parent SIGKILLs it when a call overruns; stdin
 * closing (the parent exited or was killed) ends it.
 */
import { runInline, warmInline } from "./quickjs-runner";

export interface ChildRequest {
  id: number;
  code: string;
  input: unknown;
  timeoutMs: number;
  memoryBytes: number;
}

export async function runSandboxChild(): Promise<void> {
  const out = Bun.stdout.writer();
  const send = (message: unknown) => out.write(JSON.stringify(message) + "\n");
  await warmInline(Number(process.env.WEFT_SANDBOX_WARM_BYTES) || 64 * 1024 * 1024);
  send({ ready: true });
  out.flush();
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of Bun.stdin.stream()) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      const request = JSON.parse(line) as ChildRequest;
      const result = await runInline(request);
      send({ id: request.id, result });
      // At once: the parent's kill timer for this call runs until the reply arrives.
      out.flush();
    }
  }
  process.exit(0);
}
