/**
 * `weft mcp` against a running server: stdin/stdout relayed to its Streamable HTTP endpoint with the
 * bearer token. Used when WEFT_URL is set, or when a Weft server already answers at the configured
 * address — two processes must not execute the runs of one data directory.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config";

const PROBE_TIMEOUT_MS = 500;

/** The base URL of a Weft server answering at the configured host and port, or undefined. */
export async function runningServer(config: Pick<Config, "host" | "port">): Promise<string | undefined> {
  if (config.port === 0) return undefined;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
  try {
    const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body = (await res.json().catch(() => null)) as { data?: { status?: string } } | null;
    return res.ok && body?.data?.status === "ok" ? base : undefined;
  } catch {
    return undefined;
  }
}

/** Relays MCP messages between stdio and `{baseUrl}/mcp` until stdin closes. */
export async function bridgeMcpStdio(baseUrl: string, token: string): Promise<void> {
  const upstream = new StreamableHTTPClientTransport(new URL(`${baseUrl.replace(/\/+$/, "")}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const local = new StdioServerTransport();
  // Relays still in flight when stdin closes are awaited, so a client that writes its requests and
  // closes its end (`printf … | weft mcp`) still gets every answer.
  const inFlight = new Set<Promise<unknown>>();
  const track = (promise: Promise<unknown>) => {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise));
  };
  local.onmessage = (message: JSONRPCMessage) => {
    track(
      upstream.send(message).catch((error: Error) => {
        // A request must get an answer even when the server cannot be reached or refuses the token.
        if ("id" in message && "method" in message) {
          return local.send({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: `Weft at ${baseUrl}: ${error.message}` } });
        }
      }),
    );
  };
  upstream.onmessage = (message) => track(local.send(message));
  upstream.onerror = (error) => process.stderr.write(`weft mcp: ${error.message}\n`);
  const closed = new Promise<void>((resolve) => process.stdin.once("end", () => resolve()));
  await upstream.start();
  await local.start();
  await closed;
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  await upstream.close().catch(() => {});
  await local.close().catch(() => {});
}
