/** Each built-in piece on its own: a fake ActionContext, and a loopback HTTP server where the piece calls out. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import type { PieceDef } from "../../src/pieces-sdk/types";
import { normaliseSubmission, renderForm } from "../../pieces/form";
import { checkPayload } from "../../pieces/subflows";
import { fakeContext, loopback, memoryStore } from "./fake-context";

const registry = builtinRegistry();
const runAction = async (piece: string, actionId: string, config: Record<string, unknown>, options: Parameters<typeof fakeContext>[1] = {}) => {
  const ctx = fakeContext(config, options);
  const output = await registry.action(piece, actionId)!.run(ctx);
  return { ctx, output: output as any };
};

describe("data", () => {
  test("set_fields builds nested objects from dotted names", async () => {
    expect((await runAction("data", "set_fields", { fields: { name: "Ada", "address.city": "London", n: 2 } })).output).toEqual({
      name: "Ada",
      address: { city: "London" },
      n: 2,
    });
  });
  test("parse_json parses, and says why when it cannot", async () => {
    expect((await runAction("data", "parse_json", { text: '{"a":[1,2]}' })).output).toEqual({ value: { a: [1, 2] } });
    await expect(runAction("data", "parse_json", { text: "{nope" })).rejects.toThrow("not valid JSON");
  });
  test("to_json, pretty when asked", async () => {
    expect((await runAction("data", "to_json", { value: { a: 1 } })).output).toEqual({ json: '{"a":1}' });
    expect((await runAction("data", "to_json", { value: { a: 1 }, pretty: true, indent: 4 })).output.json).toBe('{\n    "a": 1\n}');
  });
  test("pick keeps only the listed paths", async () => {
    const object = { id: 1, secret: "x", customer: { email: "a@b.c", phone: "1" } };
    expect((await runAction("data", "pick", { object, paths: ["id", "customer.email", "missing"] })).output).toEqual({ id: 1, customer: { email: "a@b.c" } });
    expect((await runAction("data", "pick", { object, paths: "id, secret" })).output).toEqual({ id: 1, secret: "x" });
  });
  test("merge: shallow and deep", async () => {
    const objects = [{ a: { x: 1 }, b: 1 }, { a: { y: 2 } }];
    expect((await runAction("data", "merge", { objects })).output).toEqual({ a: { y: 2 }, b: 1 });
    expect((await runAction("data", "merge", { objects, mode: "deep" })).output).toEqual({ a: { x: 1, y: 2 }, b: 1 });
    await expect(runAction("data", "merge", { objects: [1] })).rejects.toThrow("objects[0] must be an object");
  });
  test("every data action is pure", () => {
    for (const a of Object.values(registry.get("data")!.actions)) expect(a.sideEffects).toBe("pure");
  });
});

describe("text", () => {
  test("template fills {placeholders} from values", async () => {
    expect(
      (await runAction("text", "template", { template: "Hi {name}, order {order.id} {missing}", values: { name: "Ada", order: { id: 7 } } })).output,
    ).toEqual({ text: "Hi Ada, order 7 {missing}" });
  });
  test("replace: plain (all or first) and regex", async () => {
    expect((await runAction("text", "replace", { text: "a-b-c", find: "-", replace_with: "+" })).output.text).toBe("a+b+c");
    expect((await runAction("text", "replace", { text: "a-b-c", find: "-", replace_with: "+", all: false })).output.text).toBe("a+b-c");
    expect((await runAction("text", "replace", { text: "a1b22", find: "\\d+", replace_with: "#", use_regex: true, flags: "g" })).output.text).toBe("a#b#");
    await expect(runAction("text", "replace", { text: "x", find: "(", use_regex: true })).rejects.toThrow("not a valid regular expression");
  });
  test("split trims and drops empty items", async () => {
    expect((await runAction("text", "split", { text: "a, b,,c ", separator: "," })).output).toEqual({ items: ["a", "b", "c"], count: 3 });
    expect((await runAction("text", "split", { text: "a\nb", separator: "\\n" })).output.items).toEqual(["a", "b"]);
  });
  test("case conversions", async () => {
    const cases: Record<string, string> = {
      upper: "HELLO WORLD",
      lower: "hello world",
      title: "Hello World",
      snake: "hello_world",
      kebab: "hello-world",
      camel: "helloWorld",
    };
    for (const [kind, expected] of Object.entries(cases))
      expect((await runAction("text", "case", { text: "hello World", case: kind })).output.text).toBe(expected);
    await expect(runAction("text", "case", { text: "x", case: "sponge" })).rejects.toThrow("use one of upper");
  });
});

describe("webhook", () => {
  test("respond sends the synchronous reply through ctx.respond", async () => {
    const { ctx, output } = await runAction("webhook", "respond", { status: 201, body: { ok: true }, headers: { "X-Id": "7" } });
    expect(output).toEqual({ status: 201 });
    expect(ctx.replies).toEqual([{ status: 201, headers: { "x-id": "7", "content-type": "application/json" }, body: { ok: true } }]);
    const text = await runAction("webhook", "respond", { body: "hi" });
    expect(text.ctx.replies[0]).toEqual({ status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: "hi" });
    expect((await runAction("webhook", "respond", { status: 204 })).ctx.replies[0]).toEqual({ status: 204, headers: {}, body: null });
    // Scalars and arrays are JSON values too.
    expect((await runAction("webhook", "respond", { body: [1, 2] })).ctx.replies[0]).toEqual({
      status: 200,
      headers: { "content-type": "application/json" },
      body: [1, 2],
    });
    expect((await runAction("webhook", "respond", { body: 0 })).ctx.replies[0]!.body).toBe(0);
    await expect(runAction("webhook", "respond", { status: 42 })).rejects.toThrow("100–599");
    await expect(runAction("webhook", "respond", { headers: "x" })).rejects.toThrow("headers must be an object");
  });
  test("respond never parses text: a string that is valid JSON stays a string", async () => {
    const { ctx } = await runAction("webhook", "respond", { body: '{"a":1}' });
    expect(ctx.replies[0]).toEqual({ status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: '{"a":1}' });
    const typed = await runAction("webhook", "respond", { body: '{"a":1}', headers: { "Content-Type": "application/json" } });
    expect(typed.ctx.replies[0]).toEqual({ status: 200, headers: { "content-type": "application/json" }, body: '{"a":1}' });
  });
  test("respond's properties are status, headers and body", () => {
    const props = registry.action("webhook", "respond")!.props;
    expect(Object.keys(props)).toEqual(["status", "headers", "body"]);
    expect(props.status!.default).toBe(200);
  });
  test("catch_webhook is a webhook trigger", () => expect(registry.trigger("webhook", "catch_webhook")!.type).toBe("webhook"));
});

describe("schedule", () => {
  const cron = registry.trigger("schedule", "cron")!;
  const every = registry.trigger("schedule", "every")!;
  test("cron validates with croner and reports the schedule", () => {
    expect(cron.schedule!({ expression: " 0 9 * * 1-5 ", timezone: "Europe/Berlin" })).toEqual({ cron: "0 9 * * 1-5", timezone: "Europe/Berlin" });
    expect(cron.schedule!({ expression: "*/10 * * * * *" })).toEqual({ cron: "*/10 * * * * *", timezone: "UTC" });
    expect(() => cron.schedule!({ expression: "not cron" })).toThrow("not a valid cron expression");
    expect(() => cron.schedule!({})).toThrow("expression is required");
  });
  test("every converts to seconds and refuses tiny intervals", () => {
    expect(every.schedule!({ interval: 2, unit: "hours" })).toEqual({ everySeconds: 7200 });
    expect(() => every.schedule!({ interval: 5, unit: "seconds" })).toThrow("minimum is 10 seconds");
    expect(() => every.schedule!({ interval: 1, unit: "weeks" })).toThrow("use one of seconds");
  });
});

describe("http", () => {
  let api: ReturnType<typeof loopback>;
  beforeAll(() => {
    api = loopback((req, body) => {
      const url = new URL(req.url);
      if (url.pathname === "/fail") return new Response("nope", { status: 503 });
      if (url.pathname === "/text") return new Response("plain");
      if (url.pathname === "/items") return Response.json({ data: { items: [{ id: 1 }, { id: 2 }] } });
      return Response.json({
        method: req.method,
        query: Object.fromEntries(url.searchParams),
        auth: req.headers.get("authorization"),
        type: req.headers.get("content-type"),
        body,
      });
    });
  });
  afterAll(() => api.stop());
  const send = (config: Record<string, unknown>, auth?: any) => runAction("http", "send_request", config, { auth });

  test("JSON body, query and bearer auth", async () => {
    const { output } = await send({
      method: "POST",
      url: `${api.url}/echo`,
      query: { q: "a b" },
      body_type: "json",
      body_json: { x: 1 },
      auth_type: "bearer",
      token: "t0k",
    });
    expect(output.status).toBe(200);
    expect(output.body).toEqual({ method: "POST", query: { q: "a b" }, auth: "Bearer t0k", type: "application/json", body: '{"x":1}' });
  });
  test("form and raw bodies, basic auth", async () => {
    const form = (
      await send({
        method: "POST",
        url: `${api.url}/echo`,
        body_type: "form",
        body_form: { a: "1", b: "x y" },
        auth_type: "basic",
        username: "u",
        password: "p",
      })
    ).output.body;
    expect(form).toMatchObject({ type: "application/x-www-form-urlencoded", body: "a=1&b=x+y", auth: `Basic ${btoa("u:p")}` });
    const raw = (await send({ method: "PUT", url: `${api.url}/echo`, body_type: "raw", body_raw: "<x/>", content_type: "application/xml" })).output.body;
    expect(raw).toMatchObject({ type: "application/xml", body: "<x/>" });
  });
  test("connection auth uses the step's connection", async () => {
    const out = (
      await send({ url: `${api.url}/echo`, auth_type: "connection" }, { kind: "custom", values: { header_name: "Authorization", header_value: "Token abc" } })
    ).output.body;
    expect(out.auth).toBe("Token abc");
    await expect(send({ url: `${api.url}/echo`, auth_type: "connection" })).rejects.toThrow("needs a connection");
  });
  test("text responses, 4xx/5xx failing unless told otherwise", async () => {
    expect((await send({ url: `${api.url}/text` })).output.body).toBe("plain");
    await expect(send({ url: `${api.url}/fail` })).rejects.toThrow("answered 503: nope");
    expect((await send({ url: `${api.url}/fail`, fail_on_error: false })).output).toMatchObject({ status: 503, body: "nope" });
  });
  test("bad input is refused before any call", async () => {
    await expect(send({ url: "ftp://x" })).rejects.toThrow("http or https");
    await expect(send({ url: "nope" })).rejects.toThrow("not an absolute URL");
    await expect(send({ url: `${api.url}/echo`, method: "GET", body_type: "json", body_json: {} })).rejects.toThrow("cannot carry a body");
  });
  test("poll_json returns the items at items_path and dedupes by id_field", async () => {
    const trigger = registry.trigger("http", "poll_json")!;
    const config = { url: `${api.url}/items`, items_path: "data.items", id_field: "id", auth_type: "bearer", token: "x" };
    const items = await trigger.poll!({ config, fetch: (u, i) => fetch(u, i), workflowId: "wf", store: memoryStore() });
    expect(items).toEqual([{ id: 1 }, { id: 2 }]);
    expect(trigger.type).toBe("poll");
    expect(trigger.dedupe!.strategy).toBe("id");
    expect(items.map((i) => trigger.dedupe!.key(i, config))).toEqual([1, 2]);
    await expect(trigger.poll!({ config: { ...config, items_path: "data" }, fetch, workflowId: "wf", store: memoryStore() })).rejects.toThrow("not an array");
  });
  test("pieces call out only through ctx.fetch", async () => {
    const calls: string[] = [];
    const ctx = fakeContext({ url: `${api.url}/echo` });
    ctx.fetch = async (url, init) => {
      calls.push(String(url));
      return fetch(url, init);
    };
    await registry.action("http", "send_request")!.run(ctx);
    expect(calls).toEqual([`${api.url}/echo`]);
  });
});

describe("oauth2 (generic)", () => {
  test("request sends the connection's access token", async () => {
    const api = loopback((req) => Response.json({ auth: req.headers.get("authorization") }));
    try {
      const { output } = await runAction("oauth2", "request", { method: "GET", url: `${api.url}/me` }, { auth: { kind: "oauth2", accessToken: "at_1" } });
      expect(output.body).toEqual({ auth: "Bearer at_1" });
      await expect(runAction("oauth2", "request", { url: `${api.url}/me` })).rejects.toThrow("OAuth2 connection");
    } finally {
      api.stop();
    }
  });
  test("declares connection config authUrl, tokenUrl, scope", () => {
    const auth = registry.get("oauth2")!.auth as any;
    expect(Object.keys(auth.connectionConfig)).toEqual(["authUrl", "tokenUrl", "scope"]);
  });
});

describe("github", () => {
  let api: ReturnType<typeof loopback>;
  const auth = () => ({ kind: "oauth2" as const, accessToken: "gho_x", data: { apiBaseUrl: api.url } });
  beforeAll(() => {
    api = loopback((req, body) => {
      const url = new URL(req.url);
      if (req.headers.get("authorization") !== "Bearer gho_x") return Response.json({ message: "Bad credentials" }, { status: 401 });
      if (req.method === "POST" && url.pathname === "/repos/octo/hello/issues") {
        const input = JSON.parse(body);
        return Response.json(
          {
            id: 9,
            number: 42,
            title: input.title,
            state: "open",
            html_url: "https://github.com/octo/hello/issues/42",
            labels: input.labels.map((name: string) => ({ name })),
            created_at: "2025-01-01T00:00:00Z",
          },
          { status: 201 },
        );
      }
      if (url.pathname === "/repos/octo/hello/issues")
        return Response.json([
          { id: 1, number: 1, title: "Bug", state: "open", html_url: "u", labels: [], created_at: "c" },
          { id: 2, number: 2, title: "PR", pull_request: {}, labels: [] },
        ]);
      if (url.pathname === "/user") return Response.json({ login: "octo" });
      return Response.json({ message: "Not Found" }, { status: 404 });
    });
  });
  afterAll(() => api.stop());

  test("create_issue posts the issue with labels", async () => {
    const { output } = await runAction(
      "github",
      "create_issue",
      { repository: "octo/hello", title: "Found a bug", body: "Steps…", labels: "bug, p1" },
      { auth: auth() },
    );
    expect(output).toEqual({
      id: 9,
      number: 42,
      title: "Found a bug",
      state: "open",
      url: "https://github.com/octo/hello/issues/42",
      labels: ["bug", "p1"],
      createdAt: "2025-01-01T00:00:00Z",
    });
    const sent = api.requests.find((r) => r.method === "POST")!;
    expect(JSON.parse(sent.body)).toEqual({ title: "Found a bug", body: "Steps…", labels: ["bug", "p1"] });
    expect(sent.headers.get("accept")).toBe("application/vnd.github+json");
  });
  test("list_issues excludes pull requests and passes filters", async () => {
    const { output } = await runAction("github", "list_issues", { repository: "octo/hello", state: "all", labels: "bug", limit: 5 }, { auth: auth() });
    expect(output.count).toBe(1);
    expect(output.issues[0].title).toBe("Bug");
    expect(api.requests.at(-1)!.path).toBe("/repos/octo/hello/issues?state=all&per_page=5&labels=bug");
  });
  test("errors name the problem", async () => {
    await expect(runAction("github", "create_issue", { repository: "nope", title: "x" }, { auth: auth() })).rejects.toThrow("owner/name");
    await expect(runAction("github", "list_issues", { repository: "octo/missing" }, { auth: auth() })).rejects.toThrow("GitHub answered 404");
    await expect(runAction("github", "list_issues", { repository: "octo/hello" })).rejects.toThrow("GitHub connection");
  });
  test("checkConnection reports the login", async () => {
    const piece = registry.get("github")!;
    expect(await piece.checkConnection!({ auth: auth(), fetch, signal: new AbortController().signal })).toEqual({ ok: true, message: "connected as octo" });
    expect((await piece.checkConnection!({ auth: { ...auth(), accessToken: "bad" }, fetch, signal: new AbortController().signal })).ok).toBe(false);
  });
});

describe("delay", () => {
  test("delay_for pauses until now + seconds, and continues when resumed", async () => {
    const before = Date.now();
    const { output } = await runAction("delay", "delay_for", { seconds: 120 });
    expect(output.__pause).toBe(true);
    expect(output.mode).toBe("time");
    const at = new Date(output.resumeAt).getTime();
    expect(at).toBeGreaterThanOrEqual(before + 120_000);
    expect(at).toBeLessThan(before + 125_000);
    expect((await runAction("delay", "delay_for", { seconds: 120 }, { resumePayload: {} })).output.__pause).toBeUndefined();
    expect((await runAction("delay", "delay_for", { seconds: 0 })).output.__pause).toBeUndefined();
    expect((await runAction("delay", "delay_for", { seconds: "90" })).output.__pause).toBe(true);
    expect((await runAction("delay", "delay_for", { seconds: 366 * 86_400 })).output.__pause).toBe(true);
    await expect(runAction("delay", "delay_for", { seconds: 366 * 86_400 + 1 })).rejects.toThrow("366 days");
    for (const bad of [-1, "soon", null, "", true]) await expect(runAction("delay", "delay_for", { seconds: bad })).rejects.toThrow("must be a number ≥ 0");
  });
  test("delay_for declares one property, seconds, bounded 0–366 days", () => {
    const props = registry.action("delay", "delay_for")!.props;
    expect(Object.keys(props)).toEqual(["seconds"]);
    expect(props.seconds).toMatchObject({ type: "number", required: true, min: 0, max: 366 * 86_400 });
  });
  test("delay_until pauses until the date, or continues if it has passed", async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    expect((await runAction("delay", "delay_until", { until })).output).toMatchObject({ __pause: true, mode: "time", resumeAt: until });
    expect((await runAction("delay", "delay_until", { until: "2000-01-01T00:00:00Z" })).output.__pause).toBeUndefined();
    await expect(runAction("delay", "delay_until", { until: "tomorrow" })).rejects.toThrow("ISO 8601");
  });
});

describe("tags", () => {
  test("add_tags attaches trimmed, unique tags to the run", async () => {
    const { ctx, output } = await runAction("tags", "add_tags", { tags: ["vip", " eu ", "vip"] });
    expect(ctx.tags).toEqual(["vip", "eu"]);
    expect(output).toEqual({ tags: ["vip", "eu"] });
    expect((await runAction("tags", "add_tags", { tags: "a,b" })).ctx.tags).toEqual(["a", "b"]);
    await expect(runAction("tags", "add_tags", { tags: [] })).rejects.toThrow("at least one tag");
  });
});

describe("subflows", () => {
  test("call_workflow calls through ctx.callWorkflow, waiting by default", async () => {
    const workflowId = crypto.randomUUID();
    const { ctx, output } = await runAction("subflows", "call_workflow", { workflow_id: workflowId, payload: { n: 1 } });
    expect(ctx.calls).toEqual([{ workflowId, payload: { n: 1 }, wait: true }]);
    expect(output).toEqual({ runId: "00000000-0000-4000-8000-0000000000aa", status: "completed", response: { ok: true } });
    const noWait = await runAction("subflows", "call_workflow", { workflow_id: workflowId, wait: false }, { callResult: { runId: "r", status: "pending" } });
    expect(noWait.ctx.calls[0].wait).toBe(false);
    expect(noWait.output.response).toBeNull();
    await expect(runAction("subflows", "call_workflow", { workflow_id: "x" })).rejects.toThrow("uuid");
  });
  test("return_response hands the value to the caller", async () => {
    const { ctx } = await runAction("subflows", "return_response", { value: { total: 3 } });
    expect(ctx.returned).toEqual([{ total: 3 }]);
  });
  test("callable checks payloads against its declared fields", () => {
    const config = {
      fields: [
        { name: "orderId", type: "integer", required: true },
        { name: "note", type: "string" },
      ],
    };
    expect(checkPayload(config, { orderId: 3 })).toEqual([]);
    expect(checkPayload(config, { note: 1 })).toEqual(['"orderId" is required', '"note" must be string, got number']);
    expect(registry.trigger("subflows", "callable")!.type).toBe("callable");
  });
});

describe("runs", () => {
  const onError = registry.trigger("runs", "on_error")!;
  const finished = registry.trigger("runs", "on_run_finished")!;
  test("on_error matches failed runs of the listed workflows (or any)", () => {
    expect(onError.type).toBe("error");
    expect(onError.matches!({}, { workflowId: "w1", status: "failed" })).toBe(true);
    expect(onError.matches!({}, { workflowId: "w1", status: "completed" })).toBe(false);
    expect(onError.matches!({ workflow_ids: ["w2"] }, { workflowId: "w1", status: "failed" })).toBe(false);
  });
  test("on_run_finished filters by workflows and statuses", () => {
    expect(finished.type).toBe("run_finished");
    expect(finished.matches!({}, { workflowId: "w1", status: "completed" })).toBe(true);
    expect(finished.matches!({}, { workflowId: "w1", status: "running" })).toBe(false);
    expect(finished.matches!({ statuses: ["failed", "cancelled"] }, { workflowId: "w1", status: "completed" })).toBe(false);
    expect(finished.matches!({ statuses: "failed,cancelled", workflow_ids: ["w1"] }, { workflowId: "w1", status: "cancelled" })).toBe(true);
  });
});

describe("store", () => {
  test("get / put / delete / append through ctx.store", async () => {
    const ctx = (await runAction("store", "put", { key: "k", value: { n: 1 } })).ctx;
    const store = registry.get("store")!.actions;
    const call = (id: string, config: Record<string, unknown>) => store[id].run({ ...ctx, config });
    expect(await call("get", { key: "k" })).toEqual({ key: "k", found: true, value: { n: 1 } });
    expect(await call("get", { key: "none", default_value: 0 })).toEqual({ key: "none", found: false, value: 0 });
    expect(await call("append", { key: "list", value: "a" })).toEqual({ key: "list", length: 1 });
    expect(await call("append", { key: "list", value: "b" })).toEqual({ key: "list", length: 2 });
    expect(await call("delete", { key: "k" })).toEqual({ key: "k", deleted: true });
    expect(await call("delete", { key: "k" })).toEqual({ key: "k", deleted: false });
    expect(ctx.kv.get("list")).toEqual(["a", "b"]);
  });
});

describe("approval", () => {
  test("pauses with approve/reject links, then reports the decision", async () => {
    const { output } = await runAction("approval", "wait_for_approval", { message: "Ship it?" });
    expect(output).toEqual({
      __pause: true,
      mode: "webhook",
      data: { message: "Ship it?", approveUrl: "http://weft.test/resume/approve", rejectUrl: "http://weft.test/resume/reject" },
    });
    expect((await runAction("approval", "wait_for_approval", {}, { resumePayload: { decision: "approve" } })).output).toMatchObject({
      approved: true,
      decision: "approve",
    });
    expect((await runAction("approval", "wait_for_approval", {}, { resumePayload: { decision: "reject" } })).output).toMatchObject({
      approved: false,
      decision: "reject",
    });
  });
  test("an expiry sets resumeAt; resuming without a decision means expired", async () => {
    const { output } = await runAction("approval", "wait_for_approval", { expires_in_hours: 2 });
    expect(new Date(output.resumeAt).getTime() - Date.now()).toBeGreaterThan(7_100_000);
    expect((await runAction("approval", "wait_for_approval", {}, { resumePayload: {} })).output).toMatchObject({ approved: false, decision: "expired" });
    await expect(runAction("approval", "wait_for_approval", { expires_in_hours: "soon" })).rejects.toThrow("positive number");
  });
});

describe("form", () => {
  const config = {
    title: "Contact <us>",
    fields: [
      { name: "email", label: "E-mail", type: "email", required: true },
      { name: "age", type: "number" },
      { name: "news", type: "checkbox" },
    ],
  };
  test("renders an escaped HTML form that posts to the submit URL", () => {
    const html = registry.trigger("form", "form_submission")!.page!({ config, submitUrl: "https://weft.example/webhook/abc" });
    expect(html).toContain('<form method="post" action="https://weft.example/webhook/abc"');
    expect(html).toContain("Contact &lt;us&gt;");
    expect(html).toContain('<input type="email" id="f_email" name="email" required>');
    expect(renderForm(config, "x")).toContain('type="checkbox"');
  });
  test("normalises a urlencoded submission", () => {
    expect(normaliseSubmission(config, { email: "a@b.c", age: "41", news: "on" })).toEqual({ email: "a@b.c", age: 41, news: true });
  });
  test("refuses a form without fields", () => {
    expect(() => registry.trigger("form", "form_submission")!.sample!({ title: "x" })).toThrow("at least one field");
  });
});

describe("catalog", () => {
  test("every built-in piece is registered with the ids the issue fixes", () => {
    const expected: Record<string, { actions: string[]; triggers: string[] }> = {
      webhook: { actions: ["respond"], triggers: ["catch_webhook"] },
      schedule: { actions: [], triggers: ["cron", "every"] },
      http: { actions: ["send_request"], triggers: ["poll_json"] },
      data: { actions: ["set_fields", "parse_json", "to_json", "pick", "merge"], triggers: [] },
      text: { actions: ["template", "replace", "split", "case"], triggers: [] },
      delay: { actions: ["delay_for", "delay_until"], triggers: [] },
      tags: { actions: ["add_tags"], triggers: [] },
      subflows: { actions: ["call_workflow", "return_response"], triggers: ["callable"] },
      runs: { actions: [], triggers: ["on_error", "on_run_finished"] },
      store: { actions: ["get", "put", "delete", "append"], triggers: [] },
      approval: { actions: ["wait_for_approval"], triggers: [] },
      form: { actions: [], triggers: ["form_submission"] },
      oauth2: { actions: ["request"], triggers: [] },
      github: { actions: ["create_issue", "list_issues"], triggers: [] },
    };
    for (const [id, steps] of Object.entries(expected)) {
      const piece: PieceDef = registry.get(id)!;
      expect(piece, id).toBeDefined();
      expect(Object.keys(piece.actions)).toEqual(steps.actions);
      expect(Object.keys(piece.triggers)).toEqual(steps.triggers);
    }
  });
});
