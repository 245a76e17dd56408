/**
 * An answer whose JSON is already text (a cached projection, a run-list page a reader thread made): sent as it
 * is, without Elysia serialising it again. Its route still declares the response schema for the contract, but
 * Elysia checks only answers it serialises itself: a route answering this way has a test checking its text
 * against the schema (test/runs/api.test.ts for the run list).
 */
export const jsonText = (body: string) => new Response(body, { headers: { "content-type": "application/json" } });
