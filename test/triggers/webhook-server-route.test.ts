/**
 * A real server answers the production webhook URL through a route of its own (src/api/webhooks.ts,
 * webhookServerRoutes) for JSON calls without an Idempotency-Key, and through the app otherwise. Whichever
 * answers, the caller must see the same thing: each call below goes to a real server and to the app in
 * process (`app.handle`, always the app's route), and status, headers and body must match.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { testApp } from "../support/app";
import { startServer, type ServerHandle } from "../support/server";

const ENV = { WEFT_BODY_LIMIT: "2048", WEFT_LOG_LEVEL: "warn" };
type Side = { publish(definition: unknown): Promise<string>; call(token: string, init: RequestInit, suffix?: string): Promise<Response> };

let server: ServerHandle;
let remote: Side;
let local: Side;

function sideOf(request: (path: string, init: RequestInit & { auth?: boolean }) => Promise<Response>): Side {
  return {
    async publish(definition) {
      const created = (await (
        await request("/api/workflows", {
          method: "POST",
          auth: true,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "hook", definition }),
        })
      ).json()) as any;
      const published = (await (await request(`/api/workflows/${created.data.id}/publish`, { method: "POST", auth: true })).json()) as any;
      return published.data.webhookUrl.split("/webhook/")[1];
    },
    call: (token, init, suffix = "") => request(`/webhook/${token}${suffix}`, init),
  };
}

beforeAll(async () => {
  server = await startServer({ env: ENV });
  remote = sideOf((path, { auth, ...init }) => (auth ? server.fetch(path, init) : fetch(`${server.url}${path}`, init)));
  const t = await testApp(ENV);
  local = sideOf((path, { auth, ...init }) => {
    const headers = new Headers(init.headers);
    if (auth) headers.set("authorization", `Bearer ${server.token}`);
    return t.app.handle(new Request(`http://localhost${path}`, { ...init, headers }));
  });
});
afterAll(async () => {
  await server.stop();
});

const definition = (config: Record<string, unknown>, nextAction: unknown) => ({
  schemaVersion: 2,
  trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config, nextAction },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});
const greet = { name: "greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { greeting: "hello {{trigger.body.name}}" } } };
const reply = (config: Record<string, unknown>) => ({
  ...greet,
  nextAction: { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config },
});
const failing = {
  name: "boom",
  type: "PIECE",
  pieceId: "data",
  actionId: "set_fields",
  config: { fields: { x: "{{$error('boom')}}" } },
  nextAction: reply({ status: 200, body: "never" }).nextAction,
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** What a caller sees, with generated ids replaced so two sides compare. */
async function seen(res: Response) {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, key) => {
    if (key !== "date" && key !== "content-length") headers[key] = value.replace(UUID, "<id>");
  });
  return { status: res.status, headers, body: (await res.text()).replace(UUID, "<id>") };
}

async function both(definitionOf: unknown, init: () => RequestInit, suffix?: string) {
  const [a, b] = await Promise.all([remote.publish(definitionOf), local.publish(definitionOf)]);
  const fromServer = await seen(await remote.call(a, init(), suffix));
  const fromApp = await seen(await local.call(b, init(), suffix));
  return { fromServer, fromApp };
}

// Content-Length as a socket client sends it (a Request built in process has none unless given).
const json =
  (body: unknown, headers: Record<string, string> = {}) =>
  () => {
    const text = JSON.stringify(body);
    return { method: "POST", headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers }, body: text };
  };

test("an accepted call: 202 with the run id, the same headers and body", async () => {
  const { fromServer, fromApp } = await both(definition({}, greet), json({ name: "Ada" }));
  expect(fromServer.status).toBe(202);
  expect(fromServer.headers["x-weft-run-id"]).toBe("<id>");
  expect(fromServer.headers["x-request-id"]).toBe("<id>");
  expect(fromServer).toEqual(fromApp);
});

test("the caller's X-Request-Id comes back; PUT, PATCH and DELETE with JSON are accepted alike", async () => {
  for (const method of ["PUT", "PATCH", "DELETE"]) {
    const { fromServer, fromApp } = await both(definition({}, greet), () => ({
      method,
      headers: { "content-type": "application/json; charset=utf-8", "x-request-id": "trace-42" },
      body: "{}",
    }));
    expect(fromServer.headers["x-request-id"]).toBe("trace-42");
    expect(fromServer).toEqual(fromApp);
  }
});

test("errors answer in the same envelope: unknown token, invalid JSON, too large, wrong method", async () => {
  const unknownServer = await seen(await remote.call("wh_unknown_0123456789", json({})()));
  const unknownApp = await seen(await local.call("wh_unknown_0123456789", json({})()));
  expect(unknownServer.status).toBe(404);
  expect(unknownServer).toEqual(unknownApp);

  const invalid = await both(definition({}, greet), () => ({ method: "POST", headers: { "content-type": "application/json" }, body: "{not json" }));
  expect(invalid.fromServer.status).toBe(400);
  expect(invalid.fromServer).toEqual(invalid.fromApp);

  const large = await both(definition({}, greet), json({ name: "x".repeat(4000) }));
  expect(large.fromServer.status).toBe(413);
  expect(large.fromServer).toEqual(large.fromApp);

  const method = await both(definition({ method: "POST" }, greet), () => ({ ...json({})(), method: "PUT" }));
  expect(method.fromServer.status).toBe(405);
  expect(method.fromServer.headers.allow).toBe("POST");
  expect(method.fromServer).toEqual(method.fromApp);
});

test("synchronous replies: the respond step's status, headers and body; a run failing first answers 500", async () => {
  const replied = await both(definition({}, reply({ status: 201, headers: { "x-custom": "yes" }, body: "{{greet.output}}" })), json({ name: "Ada" }));
  expect(replied.fromServer.status).toBe(201);
  expect(JSON.parse(replied.fromServer.body)).toEqual({ greeting: "hello Ada" });
  expect(replied.fromServer).toEqual(replied.fromApp);

  const text = await both(definition({}, reply({ status: 200, body: "plain {{trigger.body.name}}" })), json({ name: "Ada" }));
  expect(text.fromServer.body).toBe("plain Ada");
  expect(text.fromServer).toEqual(text.fromApp);

  const failed = await both(definition({}, failing), json({}));
  expect(failed.fromServer.status).toBe(500);
  expect(failed.fromServer).toEqual(failed.fromApp);
});

test("calls the server route leaves to the app answer as before: an Idempotency-Key replays, a form body is parsed", async () => {
  const token = await remote.publish(definition({}, greet));
  const first = await remote.call(token, json({ name: "Ada" }, { "idempotency-key": "k-1" })());
  const again = await remote.call(token, json({ name: "Ada" }, { "idempotency-key": "k-1" })());
  expect(first.status).toBe(202);
  expect((await again.json()).data.runId).toBe((await first.json()).data.runId);

  const form = await both(definition({}, greet), () => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "name=Ada",
  }));
  expect(form.fromServer.status).toBe(202);
  expect(form.fromServer).toEqual(form.fromApp);
});

test("the flood limit applies to the server route: 429 with Retry-After in the envelope", async () => {
  const limited = await startServer({ env: { ...ENV, WEFT_FLOOD_LIMIT: "1" } });
  try {
    const side = sideOf((path, { auth, ...init }) => (auth ? limited.fetch(path, init) : fetch(`${limited.url}${path}`, init)));
    await Bun.sleep(2_100); // the bucket refills after the publish calls
    const token = await side.publish(definition({}, greet));
    await Bun.sleep(2_100);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await side.call(token, json({ name: "Ada" })()));
    const refused = answers.find((res) => res.status === 429);
    expect(refused).toBeDefined();
    expect(refused!.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused!.headers.get("x-request-id")).toBeTruthy();
    expect((await refused!.json()).error.code).toBe("RATE_LIMITED");
  } finally {
    await limited.stop();
  }
  // Two 2.1 s waits for the bucket, plus a server start: more than the runner's default 5 s.
}, 30_000);
