/** The Pieces API beyond projections: list, detail, summary, options and samples (docs/pieces.md "The Pieces API"). */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { fixturePiece } from "./fixture-piece";
import { loopback } from "./fake-context";
import { createGuardedFetch } from "../../src/net/guarded-fetch";

let t: TestApp;
const BUILTINS = [
  "approval",
  "data",
  "delay",
  "email",
  "feed",
  "form",
  "github",
  "http",
  "llm",
  "mqtt",
  "notify",
  "oauth2",
  "runs",
  "schedule",
  "sql",
  "store",
  "subflows",
  "tags",
  "text",
  "webhook",
];
beforeAll(async () => {
  t = await testApp();
});

describe("GET /api/pieces", () => {
  test("lists every piece with its version, paginated with a total", async () => {
    const res = await t.req("GET", "/api/pieces?limit=100");
    expect(res.status).toBe(200);
    const ids = res.body.data.map((p: any) => p.id);
    for (const id of BUILTINS) expect(ids).toContain(id);
    expect(res.body.total).toBe(ids.length);
    const http = res.body.data.find((p: any) => p.id === "http");
    expect(http).toEqual({
      id: "http",
      name: "HTTP",
      version: "1.0.0",
      description: expect.any(String),
      icon: "🌐",
      auth: "custom",
      actions: ["send_request"],
      triggers: ["poll_json"],
    });
    // Every built-in piece has an icon for the step picker, in the list and in its detail.
    for (const piece of res.body.data.filter((p: any) => BUILTINS.includes(p.id))) expect(`${piece.id}: ${typeof piece.icon}`).toBe(`${piece.id}: string`);
    expect((await t.req("GET", "/api/pieces/mqtt")).body.data.icon).toBe("📡");

    const page = await t.req("GET", "/api/pieces?limit=2&page=2");
    expect(page.body.data.map((p: any) => p.id)).toEqual(ids.slice(2, 4));
    expect(page.body.total).toBe(ids.length);
  });

  test("out-of-range page and limit fall back instead of failing", async () => {
    const res = await t.req("GET", "/api/pieces?page=0&limit=1000");
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBe(Math.min(20, res.body.total));
  });

  test("q filters by piece, action and trigger ids, names and descriptions", async () => {
    const github = await t.req("GET", "/api/pieces?q=GitHub");
    expect(github.body.data.map((p: any) => p.id)).toEqual(["github"]);
    const poll = await t.req("GET", "/api/pieces?q=poll_json");
    expect(poll.body.data.map((p: any) => p.id)).toEqual(["http"]);
    const none = await t.req("GET", "/api/pieces?q=zzzz");
    expect(none.body).toEqual({ data: [], total: 0 });
  });

  test("needs the piece:read scope", async () => {
    const token = await t.token(["workflow:read"]);
    const res = await t.req("GET", "/api/pieces", { token });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("piece:read");
    const ok = await t.req("GET", "/api/pieces/http/actions/send_request", { token: await t.token(["piece:read"]) });
    expect(ok.status).toBe(200);
    expect((await t.req("GET", "/api/pieces", { token: null })).status).toBe(401);
  });
});

describe("GET /api/pieces/{id}", () => {
  test("detail carries auth.oauth2 with the extra authorize parameters", async () => {
    const res = await t.req("GET", "/api/pieces/github");
    expect(res.status).toBe(200);
    expect(res.body.data.auth).toEqual({
      kind: "oauth2",
      oauth2: {
        authorizeUrl: "https://github.com/login/oauth/authorize",
        tokenUrl: "https://github.com/login/oauth/access_token",
        scopes: ["repo"],
        extraAuthorizeParams: { allow_signup: "false", prompt: "select_account" },
        grantTypes: ["authorization_code"],
        fromConnectionConfig: false,
      },
    });
    expect(res.body.data.actions.map((a: any) => a.id)).toEqual(["create_issue", "list_issues"]);
    expect(res.body.data.actions[1]).toMatchObject({ sideEffects: "read", requiresAuth: true, retry: { maxAttempts: 3, backoffMs: 1000 } });
  });

  test("the generic oauth2 piece takes its URLs from the connection config", async () => {
    const res = await t.req("GET", "/api/pieces/oauth2");
    expect(res.body.data.auth.oauth2.fromConnectionConfig).toBe(true);
    expect(res.body.data.auth.oauth2.grantTypes).toEqual(["authorization_code", "client_credentials"]);
  });

  test("each trigger has its lowercase type", async () => {
    const expected: Record<string, Record<string, string>> = {
      webhook: { catch_webhook: "webhook" },
      schedule: { cron: "cron", every: "cron" },
      http: { poll_json: "poll" },
      runs: { on_error: "error", on_run_finished: "run_finished" },
      subflows: { callable: "callable" },
      form: { form_submission: "webhook" },
    };
    for (const [piece, triggers] of Object.entries(expected)) {
      const res = await t.req("GET", `/api/pieces/${piece}`);
      expect(Object.fromEntries(res.body.data.triggers.map((tr: any) => [tr.id, tr.type]))).toEqual(triggers);
    }
  });

  test("a piece without auth answers auth null", async () => {
    expect((await t.req("GET", "/api/pieces/data")).body.data.auth).toBeNull();
  });

  test("unknown piece: 404 naming the pieces", async () => {
    const res = await t.req("GET", "/api/pieces/htp");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('"htp"');
    for (const id of BUILTINS) expect(res.body.error.message).toContain(`"${id}"`);
  });

  test("view=summary answers the DESIGN shape with discriminators", async () => {
    const res = await t.req("GET", "/api/pieces/http?view=summary");
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: "http",
      name: "HTTP",
      version: "1.0.0",
      pieceVersion: "1.0.0",
      auth: "custom",
      actions: [
        {
          id: "send_request",
          name: "Send HTTP request",
          discriminators: { body_type: ["none", "json", "form", "raw"], auth_type: ["none", "bearer", "basic", "connection"] },
        },
      ],
      triggers: [{ id: "poll_json", name: "Poll a JSON endpoint", type: "poll", discriminators: { auth_type: ["none", "bearer", "basic"] } }],
    });
    const github = await t.req("GET", "/api/pieces/github?view=summary");
    expect(github.body.data.auth).toBe("oauth2");
  });

  test("an unknown view is refused naming the legal one", async () => {
    const res = await t.req("GET", "/api/pieces/http?view=full");
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("summary");
  });
});

describe("POST .../options/{propertyName}", () => {
  beforeAll(() => t.deps.pieces.register(fixturePiece()));
  const options = (prop: string, body?: unknown, piece = "fixture", action = "gated") =>
    t.req("POST", `/api/pieces/${piece}/actions/${action}/options/${prop}`, { body });

  test("answers the piece's options for the step's current config", async () => {
    const res = await options("dyn", { config: { mode: "b" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { options: [{ label: "mode b", value: "b" }], placeholder: "Pick one" } });
  });

  test("an error thrown by the piece is a clear 422, not a 500", async () => {
    const res = await options("dyn", { config: { fail: true } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("the upstream said no");
    expect(res.body.error.message).toContain("dyn");
  });

  test("a malformed answer from the piece is a 422", async () => {
    const res = await options("dyn", { config: { malformed: true } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("no options list");
  });

  test("unknown property: 404 naming the dynamic properties; static property: 400", async () => {
    const missing = await options("dny", {});
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('"dyn"');
    const fixed = await options("mode", {});
    expect(fixed.status).toBe(400);
    expect(fixed.body.error.message).toContain('"dyn"');
  });

  test("unknown action: 404 naming the actions; unknown body key: 400", async () => {
    const res = await options("dyn", {}, "fixture", "nope");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('"gated", "other"');
    const bad = await options("dyn", { confg: {} });
    expect(bad.status).toBe(400);
  });

  test("a body is optional", async () => {
    const res = await t.req("POST", "/api/pieces/fixture/actions/gated/options/dyn");
    expect(res.status).toBe(200);
  });

  test("a property refreshed by auth needs a connectionId", async () => {
    const res = await options("repository", { config: {} }, "github", "create_issue");
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("connectionId");
  });

  test("github repositories come from the connection, through the guarded fetch", async () => {
    const api = loopback((req) => {
      if (req.headers.get("authorization") !== "Bearer gho_test") return Response.json({ message: "Bad credentials" }, { status: 401 });
      return Response.json([
        { full_name: "octo/one", private: false },
        { full_name: "octo/two", private: true },
      ]);
    });
    const seen: string[] = [];
    const original = { resolve: t.deps.resolveConnectionAuth, fetch: t.deps.guardedFetch };
    t.deps.resolveConnectionAuth = async ({ connectionId, pieceId }) => {
      seen.push(`${pieceId}:${connectionId}`);
      return { kind: "oauth2", accessToken: "gho_test", data: { apiBaseUrl: api.url } };
    };
    // The loopback provider is reachable only because this guard allow-lists it, as WEFT_ALLOW_CIDRS would.
    t.deps.guardedFetch = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] });
    try {
      const connectionId = crypto.randomUUID();
      const res = await options("repository", { config: {}, connectionId }, "github", "list_issues");
      expect(res.status).toBe(200);
      expect(res.body.data.options).toEqual([
        { label: "octo/one", value: "octo/one" },
        { label: "octo/two (private)", value: "octo/two" },
      ]);
      expect(seen).toEqual([`github:${connectionId}`]);
      expect(api.requests[0].path).toBe("/user/repos?per_page=100&sort=updated");

      t.deps.resolveConnectionAuth = async () => ({ kind: "oauth2", accessToken: "wrong", data: { apiBaseUrl: api.url } });
      const denied = await options("repository", { connectionId }, "github", "list_issues");
      expect(denied.status).toBe(422);
      expect(denied.body.error.message).toContain("Bad credentials");
    } finally {
      t.deps.resolveConnectionAuth = original.resolve;
      t.deps.guardedFetch = original.fetch;
      api.stop();
    }
  });

  test("a connectionId that names no connection of the workspace is refused, never a 500", async () => {
    const res = await options("repository", { connectionId: crypto.randomUUID() }, "github", "create_issue");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain("not found in this workspace");
  });

  test("without connections wired, a connectionId is refused with a 422", async () => {
    const original = t.deps.resolveConnectionAuth;
    t.deps.resolveConnectionAuth = undefined;
    try {
      const res = await options("repository", { connectionId: crypto.randomUUID() }, "github", "create_issue");
      expect(res.status).toBe(422);
      expect(res.body.error.message).toContain("connections are not available");
    } finally {
      t.deps.resolveConnectionAuth = original;
    }
  });
});

describe("POST .../triggers/{triggerId}/sample", () => {
  const sample = (piece: string, trigger: string, body?: unknown) => t.req("POST", `/api/pieces/${piece}/triggers/${trigger}/sample`, { body });

  test("schedule.cron derives the next fire time from the expression and time zone", async () => {
    const res = await sample("schedule", "cron", { config: { expression: "30 9 * * *", timezone: "Europe/Berlin" } });
    expect(res.status).toBe(200);
    expect(res.body.data.derived).toBe(true);
    const s = res.body.data.sampleData;
    expect(s).toMatchObject({ expression: "30 9 * * *", timezone: "Europe/Berlin" });
    const at = new Date(s.scheduledAt);
    expect(at.getTime()).toBeGreaterThan(Date.now());
    expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(at)).toBe("09:30");
  });

  test("an invalid cron expression is a 400 that says why", async () => {
    const res = await sample("schedule", "cron", { config: { expression: "61 * * * *" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
    expect(res.body.error.message).toContain("61 * * * *");
    const tz = await sample("schedule", "cron", { config: { expression: "* * * * *", timezone: "Mars/Base" } });
    expect(tz.status).toBe(400);
    expect(tz.body.error.message).toContain("Mars/Base");
  });

  test("schedule.every, form and callable derive from their config", async () => {
    const every = await sample("schedule", "every", { config: { interval: 5, unit: "minutes" } });
    expect(every.body.data.sampleData.everySeconds).toBe(300);

    const form = await sample("form", "form_submission", {
      config: {
        title: "Contact",
        fields: [
          { name: "email", type: "email" },
          { name: "age", type: "number" },
          { name: "plan", type: "select", options: ["free", "pro"] },
        ],
      },
    });
    expect(form.body.data).toEqual({
      derived: true,
      sampleData: {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        query: {},
        body: { email: "ada@example.com", age: 42, plan: "free" },
      },
    });

    const callable = await sample("subflows", "callable", {
      config: {
        fields: [
          { name: "orderId", type: "integer", required: true },
          { name: "note", type: "string" },
        ],
      },
    });
    expect(callable.body.data.sampleData).toEqual({ body: { orderId: 1, note: "text" }, headers: {}, query: {} });
  });

  test("a trigger without a derivation answers its declared example", async () => {
    const res = await sample("webhook", "catch_webhook", {});
    expect(res.body.data).toEqual({
      derived: false,
      sampleData: { method: "POST", headers: { "content-type": "application/json" }, query: {}, body: { hello: "world" } },
    });
  });

  test("unknown trigger: 404 naming the triggers", async () => {
    const res = await sample("schedule", "crn", {});
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('"cron", "every"');
  });
});

describe("contract", () => {
  test("every Pieces route declares piece:read and the Pieces tag", async () => {
    const doc: any = (await t.req("GET", "/api/openapi.json")).body;
    const routes = [
      ["get", "/api/pieces"],
      ["get", "/api/pieces/{id}"],
      ["get", "/api/pieces/{id}/actions/{actionId}"],
      ["get", "/api/pieces/{id}/triggers/{triggerId}"],
      ["post", "/api/pieces/{id}/actions/{actionId}/options/{propertyName}"],
      ["post", "/api/pieces/{id}/triggers/{triggerId}/sample"],
    ];
    for (const [method, path] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op["x-permission"]).toBe("piece:read");
      expect(op.tags).toEqual(["Pieces"]);
    }
  });
});
