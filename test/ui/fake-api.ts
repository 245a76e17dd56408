/**
 * A scripted stand-in for the server in UI unit tests: routes by "METHOD /path" (query ignored),
 * records every request, and answers in the JSON envelope. Also what every UI test file sets up the same
 * way: the DOM (`useHappyDom`) and a workflow as GET /api/workflows/{id} answers it (`workflowRecord`).
 */
import { GlobalRegistrator } from "@happy-dom/global-registrator";
import { afterAll, beforeAll } from "bun:test";

/** A browser DOM (happy-dom) for this test file, registered before its tests and taken down after them. */
export function useHappyDom(): void {
  beforeAll(() => GlobalRegistrator.register({ url: "http://weft.test/" }));
  // Let Preact flush its queued effects first: a queue left pending on a closed window stalls the next file's effects.
  afterAll(async () => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    await GlobalRegistrator.unregister();
  });
}

/** A workflow record as the API answers it: a draft with no published version, unless `fields` say otherwise. */
export function workflowRecord(fields: Record<string, unknown> & { id: string; definition: unknown }) {
  return {
    name: "Workflow",
    description: "",
    status: "draft",
    triggerType: "manual",
    latestVersionId: null,
    definitionRev: 1,
    hasUnpublishedChanges: true,
    folderId: null,
    tags: [],
    createdAt: "2025-01-01T00:00:00Z",
    updatedAt: "2025-01-01T00:00:00Z",
    lastRun: null,
    ...fields,
  };
}
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
