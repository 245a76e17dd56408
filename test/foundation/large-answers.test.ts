/**
 * Answers past 14 KiB leave a real server as a stream (src/http/answer-body.ts): Bun writes a larger answer made
 * after an `await` in one send per header piece otherwise, ~19 segments for a run-list page. What a caller of
 * the server sees: the JSON arrives whole, with its status, Content-Type and X-Request-Id, in the chunked
 * encoding instead of with a Content-Length; a small answer keeps its Content-Length. Three kinds of answer: an
 * object the app serialises (the workflow list), a run-list page a reader thread made as text, and a webhook's
 * synchronous reply from the server's own route.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../support/server";

let server: ServerHandle;
beforeAll(async () => {
  server = await startServer({ env: { WEFT_LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await server.stop();
});

const definition = (nextAction?: unknown) => ({
  schemaVersion: 2,
  trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {}, nextAction },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});

async function createWorkflow(name: string, nextAction?: unknown): Promise<string> {
  const res = await server.fetch("/api/workflows", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, definition: definition(nextAction) }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as any).data.id;
}

/** The answer's framing and text: chunked (no Content-Length) or with a Content-Length equal to its bytes. */
async function received(res: Response) {
  const bytes = new Uint8Array(await res.arrayBuffer());
  const length = res.headers.get("content-length");
  if (length !== null) expect(Number(length)).toBe(bytes.byteLength);
  return {
    chunked: res.headers.get("transfer-encoding") === "chunked" && length === null,
    bytes: bytes.byteLength,
    json: JSON.parse(new TextDecoder().decode(bytes)),
  };
}

test("a large object answer (the workflow list) arrives whole and chunked; a small one with its Content-Length", async () => {
  for (let i = 0; i < 60; i++) await createWorkflow(`workflow ${i}: ${"a name long enough to fill a page ".repeat(4)}`);
  const large = await server.fetch("/api/workflows?limit=60");
  expect(large.status).toBe(200);
  expect(large.headers.get("content-type")).toStartWith("application/json");
  expect(large.headers.get("x-request-id")).toBeTruthy();
  const page = await received(large);
  expect(page.bytes).toBeGreaterThan(14 * 1024);
  expect(page.chunked).toBe(true);
  expect(page.json.data).toHaveLength(60);
  expect(page.json.total).toBe(60);

  const small = await received(await server.fetch("/api/workflows?limit=1"));
  expect(small.chunked).toBe(false);
  expect(small.json.data).toHaveLength(1);
});

test("a webhook's large synchronous reply and the run-list page of its runs arrive whole", async () => {
  const id = await createWorkflow("echo", {
    name: "reply",
    type: "PIECE",
    pieceId: "webhook",
    actionId: "respond",
    config: { status: 200, body: "{{trigger.body}}" },
  });
  const published = (await (await server.fetch(`/api/workflows/${id}/publish`, { method: "POST" })).json()) as any;
  const url = `${server.url}/webhook/${published.data.webhookUrl.split("/webhook/")[1]}`;
  const body = { items: Array.from({ length: 400 }, (_, i) => ({ i, name: `item ${i}`, note: "ünïcödé text" })) };
  for (let call = 0; call < 3; call++) {
    const reply = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("x-weft-run-id")).toBeTruthy();
    const seen = await received(reply);
    expect(seen.bytes).toBeGreaterThan(14 * 1024);
    expect(seen.chunked).toBe(true);
    expect(seen.json).toEqual(body);
  }
  const small = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Ada" }) });
  const smallSeen = await received(small);
  expect(smallSeen.chunked).toBe(false);
  expect(smallSeen.json).toEqual({ name: "Ada" });

  const list = await server.fetch(`/api/runs?workflowId=${id}&limit=20`);
  expect(list.status).toBe(200);
  expect(list.headers.get("content-type")).toStartWith("application/json");
  const runs = await received(list);
  expect(runs.chunked).toBe(runs.bytes > 14 * 1024);
  expect(runs.json.pagination.total).toBe(4);
  expect(runs.json.data).toHaveLength(4);
});
