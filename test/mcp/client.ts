/**
 * MCP clients for tests, built from the SDK's own Client: over Streamable HTTP against the in-process
 * app (a fetch shim into `app.handle`) or a real server, and over stdio against `weft mcp`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

export interface ToolAnswer {
  isError: boolean;
  /** The tool's structured result: the API body ({data}, {data,total}) or {error:{code,message}}. */
  body: any;
  text: string;
}

export interface McpTestClient {
  client: Client;
  tools(): Promise<Array<{ name: string; description?: string; inputSchema: any }>>;
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  close(): Promise<void>;
}

function wrap(client: Client): McpTestClient {
  return {
    client,
    async tools() {
      return (await client.listTools()).tools as any;
    },
    async call(name, args = {}) {
      const result: any = await client.callTool({ name, arguments: args });
      const text = result.content?.[0]?.text ?? "";
      // The text part and the structured part must say the same thing.
      const body = result.structuredContent ?? JSON.parse(text);
      return { isError: result.isError === true, body, text };
    },
    close: () => client.close(),
  };
}

/** A client over Streamable HTTP; `handle` is `app.handle` for in-process tests, omitted for a real server. */
export async function httpClient(url: string, token: string, handle?: (request: Request) => Promise<Response> | Response): Promise<McpTestClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(handle ? { fetch: (input: string | URL | Request, init?: RequestInit) => Promise.resolve(handle(new Request(input, init))) } : {}),
  });
  const client = new Client({ name: "weft-test-agent", version: "1.0.0" });
  await client.connect(transport);
  return wrap(client);
}

/** `weft mcp` as a child process speaking stdio. */
export async function stdioClient(env: Record<string, string>): Promise<McpTestClient & { stderr(): string }> {
  let stderr = "";
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, "src/main.ts"), "mcp"],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "weft-test-desktop", version: "1.0.0" });
  await client.connect(transport);
  return { ...wrap(client), stderr: () => stderr };
}
