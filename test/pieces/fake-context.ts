/**
 * A fake ActionContext for testing pieces on their own: records what the piece asked of the engine
 * (tags, replies, pauses, sub-flow calls) and keeps `ctx.store` in memory.
 */
import type { ActionContext, KeyValueStore, PauseRequest, ResolvedAuth } from "../../src/pieces-sdk/types";

export interface FakeContext extends ActionContext {
  tags: string[];
  replies: Array<{ status: number; headers?: Record<string, string>; body: unknown }>;
  returned: unknown[];
  calls: Array<{ workflowId: string; payload: Record<string, unknown>; wait: boolean }>;
  logs: string[];
  kv: Map<string, unknown>;
}

export function memoryStore(kv = new Map<string, unknown>()): KeyValueStore {
  return {
    get: async (k) => kv.get(k),
    put: async (k, v) => void kv.set(k, v),
    delete: async (k) => kv.delete(k),
    append: async (k, v) => {
      const list = [...((kv.get(k) as unknown[]) ?? []), v];
      kv.set(k, list);
      return list.length;
    },
  };
}

export function fakeContext(
  config: Record<string, unknown>,
  options: { auth?: ResolvedAuth; resumePayload?: Record<string, unknown>; callResult?: { runId: string; status: string; response?: unknown } } = {},
): FakeContext {
  const kv = new Map<string, unknown>();
  const ctx: FakeContext = {
    config,
    auth: options.auth,
    run: { id: crypto.randomUUID(), workflowId: crypto.randomUUID(), workspaceId: crypto.randomUUID(), environment: "test", stepName: "step_1", depth: 0 },
    signal: new AbortController().signal,
    fetch: (url, init) => fetch(url, init),
    store: memoryStore(kv),
    kv,
    tags: [],
    replies: [],
    returned: [],
    calls: [],
    logs: [],
    log: (message) => void ctx.logs.push(message),
    pause: (request): PauseRequest => ({ __pause: true, ...request }),
    resumeUrls: (decisions) => Object.fromEntries(decisions.map((d) => [d, `http://weft.test/resume/${d}`])),
    resumePayload: options.resumePayload,
    addTags: (tags) => void ctx.tags.push(...tags),
    respond: (reply) => void ctx.replies.push(reply),
    callWorkflow: async (input) => {
      ctx.calls.push(input);
      return options.callResult ?? { runId: "00000000-0000-4000-8000-0000000000aa", status: "completed", response: { ok: true } };
    },
    returnResponse: (value) => void ctx.returned.push(value),
    waiting: () => undefined,
  };
  return ctx;
}

/** A loopback HTTP server that records requests; `handler` answers them. */
export function loopback(handler: (req: Request, body: string) => Response | Promise<Response>) {
  const requests: Array<{ method: string; path: string; headers: Headers; body: string }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      const url = new URL(req.url);
      requests.push({ method: req.method, path: url.pathname + url.search, headers: req.headers, body });
      return handler(req, body);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}
