/** Public webhook URLs: runs from each body kind, synchronous replies, 404 rules, rotate, the test URL. */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import * as ids from "../../src/lib/ids";
import { testStepsPiece } from "../support/test-steps";
import { definition, triggerApp, webhookTrigger, type TriggerApp } from "./harness";

/** Test-only steps that run on the main thread (pure): a slow one and a failing one. */
const testPiece = testStepsPiece("trigtest");

const setFields = (fields: Record<string, unknown>, next?: Record<string, unknown>) => ({
  name: "greet",
  displayName: "Build greeting",
  type: "PIECE",
  pieceId: "data",
  actionId: "set_fields",
  config: { fields },
  ...(next ? { nextAction: next } : {}),
});
const respond = (config: Record<string, unknown> = { status: 201, body: "{{greet.output}}", headers: { "x-greeting": "yes" } }) => ({
  name: "reply",
  displayName: "Reply",
  type: "PIECE",
  pieceId: "webhook",
  actionId: "respond",
  config,
});

let h: TriggerApp;
beforeAll(async () => {
  h = await triggerApp({ env: { WEFT_WEBHOOK_REPLY_TIMEOUT: "1", WEFT_BODY_LIMIT: "4096" }, pieces: [testPiece] });
});
afterAll(async () => {
  await h.close();
});

describe("asynchronous webhooks", () => {
  let wf: any;
  beforeAll(async () => {
    wf = await h.publishWorkflow(definition(webhookTrigger(), setFields({ got: "{{trigger.body}}" })), "async");
  });

  test("the workflow record names its public URL", () => {
    expect(wf.webhookUrl).toBe(`http://weft.test/webhook/${wf.webhookToken}`);
  });

  const kinds: Array<[string, Record<string, string>, BodyInit, unknown]> = [
    ["JSON", { "content-type": "application/json" }, JSON.stringify({ name: "Ada", n: 21 }), { name: "Ada", n: 21 }],
    ["form", { "content-type": "application/x-www-form-urlencoded" }, "name=Ada&tag=a&tag=b", { name: "Ada", tag: ["a", "b"] }],
    ["text", { "content-type": "text/plain" }, "hello", "hello"],
    [
      "binary",
      { "content-type": "application/octet-stream" },
      new Uint8Array([0, 255, 1]),
      { encoding: "base64", contentType: "application/octet-stream", size: 3, data: "AP8B" },
    ],
  ];
  for (const [kind, headers, raw, expected] of kinds) {
    test(`a ${kind} body starts a production run with {method, headers, query, body}`, async () => {
      const res = await h.hook("POST", `${wf.webhookUrl}?source=test&x=1&x=2`, { raw, headers: { ...headers, "x-signature": "abc" } });
      expect(res.status).toBe(202);
      expect(res.body.data.status).toBe("pending");
      const runId = res.body.data.runId;
      expect(res.headers.get("x-weft-run-id")).toBe(runId);
      const run = await h.run(runId);
      expect(run.status).toBe("completed");
      expect(run.triggerType).toBe("webhook");
      expect(run.environment).toBe("production");
      expect(run.triggerData.method).toBe("POST");
      expect(run.triggerData.query).toEqual({ source: "test", x: ["1", "2"] });
      expect(run.triggerData.headers["x-signature"]).toBe("abc");
      expect(run.triggerData.body).toEqual(expected);
    });
  }

  test("GET and DELETE work too; an empty body is {}", async () => {
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const res = await h.hook(method, wf.webhookUrl);
      expect(res.status).toBe(202);
      const run = await h.run(res.body.data.runId);
      expect(run.triggerData.method).toBe(method);
      expect(run.triggerData.body).toEqual({});
    }
  });

  test("a body over the limit is 413 in the envelope and starts nothing", async () => {
    const before = (await h.runsOf(wf.id)).length;
    const res = await h.hook("POST", wf.webhookUrl, { raw: "x".repeat(5000), headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("PAYLOAD_TOO_LARGE");
    const json = await h.hook("POST", wf.webhookUrl, { raw: JSON.stringify({ a: "y".repeat(5000) }), headers: { "content-type": "application/json" } });
    expect(json.status).toBe(413);
    expect((await h.runsOf(wf.id)).length).toBe(before);
  });

  test("invalid JSON under a JSON Content-Type is a 400, not a guess", async () => {
    const res = await h.hook("POST", wf.webhookUrl, { raw: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
  });

  test("the token is confirmed with the constant-time comparison after a lookup by hash", async () => {
    const spy = spyOn(ids, "safeEqual");
    const hash = spyOn(ids, "sha256");
    try {
      const res = await h.hook("POST", wf.webhookUrl, { body: {} });
      expect(res.status).toBe(202);
      expect(hash).toHaveBeenCalledWith(wf.webhookToken);
      expect(spy).toHaveBeenCalledWith(wf.webhookToken, wf.webhookToken);
    } finally {
      spy.mockRestore();
      hash.mockRestore();
    }
    // One character off: not found.
    const last = wf.webhookToken.at(-1) === "A" ? "B" : "A";
    const wrong = await h.hook("POST", `http://weft.test/webhook/${wf.webhookToken.slice(0, -1)}${last}`, { body: {} });
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.code).toBe("NOT_FOUND");
  });

  test("a provider retry with the same Idempotency-Key starts no second run", async () => {
    const first = await h.hook("POST", wf.webhookUrl, { body: { delivery: 1 }, headers: { "idempotency-key": "delivery-1" } });
    const second = await h.hook("POST", wf.webhookUrl, { body: { delivery: 1 }, headers: { "idempotency-key": "delivery-1" } });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    expect(second.body.data.runId).toBe(first.body.data.runId);
    // Keys are scoped to the URL: another workflow's URL with the same key is a new call.
    const other = await h.publishWorkflow(definition(webhookTrigger(), setFields({ b: 1 })), "other");
    const third = await h.hook("POST", other.webhookUrl, { body: { delivery: 2 }, headers: { "idempotency-key": "delivery-1" } });
    expect(third.status).toBe(202);
    expect(third.body.data.runId).not.toBe(first.body.data.runId);
  });
});

describe("synchronous webhooks (webhook.respond)", () => {
  test("the respond step's status, headers and body are the reply; incoming data is never evaluated", async () => {
    const wf = await h.publishWorkflow(
      definition(webhookTrigger(), setFields({ greeting: "hello {{trigger.body.name}}", name: "{{trigger.body.name}}" }, respond())),
      "sync",
    );
    const res = await h.hook("POST", wf.webhookUrl, { body: { name: "{{ run.id }}" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-greeting")).toBe("yes");
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body).toEqual({ greeting: "hello {{ run.id }}", name: "{{ run.id }}" });
    const run = await h.run(res.headers.get("x-weft-run-id")!);
    expect(run.status).toBe("completed");
  });

  test("a text reply is sent as text", async () => {
    const wf = await h.publishWorkflow(definition(webhookTrigger(), respond({ status: 200, body: "pong {{trigger.query.q}}" })), "text-reply");
    const res = await h.hook("GET", `${wf.webhookUrl}?q=1`);
    expect(res.status).toBe(200);
    expect(res.text).toBe("pong 1");
    expect(res.headers.get("content-type")).toContain("text/plain");
  });

  test("no reply within the timeout answers 504 with the run id; the run keeps going", async () => {
    const slow = {
      name: "slow",
      type: "PIECE",
      pieceId: "trigtest",
      actionId: "sleep",
      config: { ms: 1500 },
      nextAction: respond({ status: 200, body: { late: true } }),
    };
    const wf = await h.publishWorkflow(definition(webhookTrigger(), slow), "slow");
    const started = Date.now();
    const res = await h.hook("POST", wf.webhookUrl, { body: {} });
    expect(res.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(1450);
    expect(res.body.error.code).toBe("GATEWAY_TIMEOUT");
    const runId = res.body.error.details.runId;
    expect(res.body.error.message).toContain(runId);
    expect((await h.run(runId)).status).toBe("completed");
  });

  test("a run that fails before replying answers 500 in the envelope with the run id", async () => {
    const boom = { name: "boom", type: "PIECE", pieceId: "trigtest", actionId: "boom", config: {}, nextAction: respond({ status: 200, body: "never" }) };
    const wf = await h.publishWorkflow(definition(webhookTrigger(), boom), "failing");
    const res = await h.hook("POST", wf.webhookUrl, { body: {} });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe("RUN_FAILED");
    const run = await h.run(res.body.error.details.runId);
    expect(run.status).toBe("failed");
    // The step's own error stays in the run; the public caller only gets the run id.
    expect(res.text).not.toContain("upstream said no");
  });
});

describe("synchronous webhooks that pause", () => {
  test("a run that pauses before replying answers 202 with the run id instead of holding the call", async () => {
    const wait = {
      name: "wait",
      type: "PIECE",
      pieceId: "delay",
      actionId: "delay_for",
      config: { seconds: 3600 },
      nextAction: respond({ status: 200, body: "later" }),
    };
    const wf = await h.publishWorkflow(definition(webhookTrigger(), wait), "pausing");
    const res = await h.hook("POST", wf.webhookUrl, { body: {} });
    expect(res.status).toBe(202);
    expect(res.body.data.status).toBe("paused");
    const run = (await h.req("GET", `/api/runs/${res.body.data.runId}`)).body.data;
    expect(run.status).toBe("paused");
    expect(run.waitStep).toBe("wait");
  });
});

describe("lifecycle of the URL", () => {
  test("paused → 404 in the envelope; re-publish → the same URL works again", async () => {
    const wf = await h.publishWorkflow(definition(webhookTrigger(), setFields({ a: 1 })), "pausable");
    expect((await h.hook("POST", wf.webhookUrl, { body: {} })).status).toBe(202);
    const paused = await h.req("POST", `/api/workflows/${wf.id}/unpublish`);
    expect(paused.body.data.status).toBe("paused");
    expect(paused.body.data.webhookToken).toBe(wf.webhookToken);
    const gone = await h.hook("POST", wf.webhookUrl, { body: {} });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("NOT_FOUND");
    const again = await h.publish(wf.id);
    expect(again.body.data.webhookUrl).toBe(wf.webhookUrl);
    expect((await h.hook("POST", wf.webhookUrl, { body: {} })).status).toBe(202);
  });

  test("a draft never published and an unknown token answer the same 404", async () => {
    const draft = await h.createWorkflow("draft", definition(webhookTrigger()));
    const a = await h.hook("POST", draft.webhookUrl, { body: {} });
    const b = await h.hook("POST", "http://weft.test/webhook/wh_doesnotexist", { body: {} });
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    expect(a.body).toEqual(b.body);
  });

  test("rotate revokes the old token at once; the new URL works", async () => {
    const wf = await h.publishWorkflow(definition(webhookTrigger(), setFields({ a: 1 })), "rotating");
    const rotated = await h.req("POST", `/api/workflows/${wf.id}/webhook/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.webhookToken).not.toBe(wf.webhookToken);
    expect((await h.hook("POST", wf.webhookUrl, { body: {} })).status).toBe(404);
    expect((await h.hook("POST", rotated.body.data.webhookUrl, { body: {} })).status).toBe(202);
  });

  test("a live version whose trigger is no longer a webhook does not answer at the old URL", async () => {
    const wf = await h.publishWorkflow(definition(webhookTrigger(), setFields({ a: 1 })), "switching");
    const manual = definition({ name: "trigger", type: "manual", config: {} }, setFields({ a: 1 }));
    const put = await h.req("PUT", `/api/workflows/${wf.id}`, { body: { name: "switching", definition: manual } });
    expect(put.status).toBe(200);
    expect((await h.publish(wf.id)).status).toBe(200);
    expect((await h.hook("POST", wf.webhookUrl, { body: {} })).status).toBe(404);
  });

  test("the trigger's method filter answers 405 naming the allowed method", async () => {
    const wf = await h.publishWorkflow(definition(webhookTrigger({ method: "POST" }), setFields({ a: 1 })), "post-only");
    const res = await h.hook("GET", wf.webhookUrl);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect((await h.hook("POST", wf.webhookUrl, { body: {} })).status).toBe(202);
  });
});

describe("test URL", () => {
  test("runs the draft as a test run and records the call as the trigger's test payload", async () => {
    const wf = await h.createWorkflow("listening", definition(webhookTrigger(), setFields({ v: "{{trigger.body.v}}" })));
    const res = await h.hook("POST", `${wf.webhookUrl}/test?debug=1`, { body: { v: 42 } });
    expect(res.status).toBe(202);
    expect(res.body.data.environment).toBe("test");
    const run = await h.run(res.body.data.runId);
    expect(run.environment).toBe("test");
    expect(run.status).toBe("completed");
    const payloads = await h.req("GET", `/api/workflows/${wf.id}/test-payloads`);
    expect(payloads.status).toBe(200);
    const recorded = payloads.body.data.trigger;
    expect(recorded.method).toBe("POST");
    expect(recorded.query).toEqual({ debug: "1" });
    expect(recorded.body).toEqual({ v: 42 });
    // Test runs stay out of the default run list.
    const listed = await h.req("GET", `/api/runs?workflowId=${wf.id}`);
    expect(listed.body.data).toEqual([]);
  });
});

describe("hosted forms", () => {
  test("GET shows the form; a browser submission starts a run and gets the thank-you page", async () => {
    const form = {
      name: "trigger",
      type: "webhook",
      pieceId: "form",
      actionId: "form_submission",
      config: { title: "Join <us>", fields: [{ name: "email", type: "email", required: true }], success_message: "Thanks!" },
    };
    const wf = await h.publishWorkflow(definition(form, setFields({ email: "{{trigger.body.email}}" })), "form");
    const page = await h.hook("GET", wf.webhookUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain("Join &lt;us&gt;");
    expect(page.text).toContain(`action="${wf.webhookUrl}"`);
    const posted = await h.hook("POST", wf.webhookUrl, {
      raw: "email=ada%40example.com",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
    });
    expect(posted.status).toBe(200);
    expect(posted.text).toContain("Thanks!");
    const run = await h.run(posted.headers.get("x-weft-run-id")!);
    expect(run.triggerData.body).toEqual({ email: "ada@example.com" });
  });
});

describe("trigger state endpoint", () => {
  test("another workspace's workflow is not found", async () => {
    const wf = await h.createWorkflow("mine", definition(webhookTrigger()));
    const mine = await h.req("GET", `/api/workflows/${wf.id}/trigger`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.webhook).toEqual({ url: wf.webhookUrl, testUrl: `${wf.webhookUrl}/test`, live: false });
    const ws = await h.req("POST", "/api/workspaces", { body: { name: "elsewhere" } });
    const token = await h.req("POST", "/api/tokens", { body: { name: "t", scopes: "all", workspaceId: ws.body.data.id } });
    const theirs = await h.req("GET", `/api/workflows/${wf.id}/trigger`, { token: token.body.data.token });
    expect(theirs.status).toBe(404);
  });
});

describe("contract", () => {
  test("the public URLs are documented with security: [] under Triggers", async () => {
    const doc = (await h.req("GET", "/api/openapi.json", { token: null })).body;
    for (const path of ["/webhook/{token}", "/webhook/{token}/test"]) {
      for (const method of ["get", "post", "put", "patch", "delete"]) {
        const op = doc.paths[path][method];
        expect(op.security).toEqual([]);
        expect(op["x-permission"]).toBe("public");
        expect(op.tags).toEqual(["Triggers"]);
      }
    }
  });
});
