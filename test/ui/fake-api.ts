/**
 * A scripted stand-in for the server in UI unit tests: routes by "METHOD /path" (query ignored),
 * records every request, and answers in the JSON envelope.
 */
export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: any;
}
export type Handler = (request: Recorded) => { status?: number; body: unknown } | Promise<{ status?: number; body: unknown }>;

export function fakeApi(routes: Record<string, Handler>) {
  const calls: Recorded[] = [];
  const original = globalThis.fetch;
  const fake = async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input), "http://weft.test");
    const method = (init.method ?? "GET").toUpperCase();
    const recorded: Recorded = {
      method,
      path: url.pathname,
      query: url.searchParams,
      headers: new Headers(init.headers),
      body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
    };
    calls.push(recorded);
    const handler = routes[`${method} ${url.pathname}`];
    const answer = handler
      ? await handler(recorded)
      : { status: 404, body: { error: { code: "NOT_FOUND", message: `no route for ${method} ${url.pathname}` } } };
    return new Response(JSON.stringify(answer.body), { status: answer.status ?? 200, headers: { "content-type": "application/json" } });
  };
  globalThis.fetch = fake as typeof fetch;
  if (typeof window !== "undefined") (window as any).fetch = fake;
  return {
    calls,
    restore() {
      globalThis.fetch = original;
    },
  };
}

export const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` passes (it throws while not yet), for UI that settles asynchronously. */
export async function until(check: () => void, timeoutMs = 2000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await tick(10);
    }
  }
}
