/**
 * A real Weft server in a child process on a random loopback port with a fresh data dir.
 *   const s = await startServer(); ... await s.stop();
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT_TOKEN } from "./app";

const ROOT = resolve(import.meta.dir, "../..");

export interface ServerHandle {
  url: string;
  port: number;
  dataDir: string;
  token: string;
  proc: ReturnType<typeof Bun.spawn>;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number>;
  fetch(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
}

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

export async function startServer(
  options: { env?: Record<string, string>; dataDir?: string; command?: string[]; cwd?: string; timeoutMs?: number } = {},
): Promise<ServerHandle> {
  const port = await freePort();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "weft-srv-"));
  const command = options.command ?? [process.execPath, join(ROOT, "src/main.ts"), "serve"];
  let out = "";
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? ROOT,
    env: {
      ...process.env,
      WEFT_PORT: String(port),
      WEFT_HOST: "127.0.0.1",
      WEFT_DATA_DIR: dataDir,
      WEFT_BOOTSTRAP_TOKEN: ROOT_TOKEN,
      WEFT_LOG_LEVEL: "info",
      WEFT_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...options.env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) out += decoder.decode(chunk);
  };
  void pump(proc.stdout as ReadableStream<Uint8Array>);
  void pump(proc.stderr as ReadableStream<Uint8Array>);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}:\n${out}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not become healthy:\n${out}`);
    }
    await Bun.sleep(25);
  }
  return {
    url,
    port,
    dataDir,
    token: ROOT_TOKEN,
    proc,
    output: () => out,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return await proc.exited;
    },
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      const token = init.token === undefined ? ROOT_TOKEN : init.token;
      if (token !== null && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      return fetch(`${url}${path}`, { ...init, headers });
    },
  };
}
