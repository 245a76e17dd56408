import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { authorize, createGeneric, registerTestPieces } from "./support/flow";
import { startProvider, type Provider } from "./support/oauth-provider";

let t: TestApp;
let provider: Provider;

beforeAll(async () => {
  provider = await startProvider();
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
  registerTestPieces(t);
});
afterAll(() => provider.stop());

const create = (body: Record<string, unknown>, token?: string) => t.req("POST", "/api/connections", { body, token });

describe("POST /api/connections validates against the piece's auth declaration", () => {
  const cases: Array<[string, Record<string, unknown>, number, string[]]> = [
    ["unknown piece names the pieces that take connections", { pieceId: "nope", name: "a" }, 400, ["nope", "oauth2", "github"]],
    ["a piece without auth is refused naming the ones with auth", { pieceId: "text", name: "a", apiKey: "k" }, 400, ["declares no authentication", "oauth2"]],
    [
      "a field of another auth kind names the fields that apply",
      { pieceId: "github", name: "a", apiKey: "k" },
      400,
      ["apiKey", "clientId, clientSecret, config"],
    ],
    ["OAuth2 without clientId and no managed app", { pieceId: "github", name: "a" }, 400, ["clientId is required", "WEFT_OAUTH_APPS"]],
    [
      "a declared piece refuses connection URLs",
      { pieceId: "github", name: "a", clientId: "c", config: { authUrl: "https://x.example/a" } },
      400,
      ["config.authUrl", "declares its own"],
    ],
    [
      "the generic piece needs config.tokenUrl",
      { pieceId: "oauth2", name: "a", clientId: "c", config: { authUrl: "https://x.example/a" } },
      400,
      ["config.tokenUrl is required"],
    ],
    [
      "the generic piece needs config.authUrl for authorization_code",
      { pieceId: "oauth2", name: "a", clientId: "c", config: { tokenUrl: "https://x.example/t" } },
      400,
      ["config.authUrl is required", "client_credentials"],
    ],
    [
      "URLs must be http(s)",
      { pieceId: "oauth2", name: "a", clientId: "c", config: { authUrl: "javascript:alert(1)", tokenUrl: "https://x.example/t" } },
      400,
      ["not an http(s) URL"],
    ],
    [
      "a grant the piece does not support",
      { pieceId: "github", name: "a", clientId: "c", config: { grantType: "client_credentials" } },
      400,
      ["client_credentials", "authorization_code"],
    ],
    ["api_key needs apiKey", { pieceId: "test-apikey", name: "a" }, 400, ["apiKey is required"]],
    ["basic needs username and password", { pieceId: "test-basic", name: "a", username: "u" }, 400, ["username and password are required"]],
    [
      "custom: unknown value names the declared fields",
      { pieceId: "test-custom", name: "a", values: { subdomain: "x", token: "y", colour: 1 } },
      400,
      ["values.colour", "subdomain, token, region"],
    ],
    ["custom: required value missing", { pieceId: "test-custom", name: "a", values: { subdomain: "x" } }, 400, ["values.token"]],
    ["custom: enum value outside the list", { pieceId: "test-custom", name: "a", values: { subdomain: "x", token: "y", region: "mars" } }, 400, ['"eu", "us"']],
    ["an unknown body key is UNKNOWN_FIELD naming the allowed keys", { pieceId: "oauth2", name: "a", colour: "red" }, 400, ["colour", "clientSecret"]],
  ];
  for (const [name, body, status, fragments] of cases) {
    test(name, async () => {
      const res = await create(body);
      expect(res.status).toBe(status);
      for (const fragment of fragments) expect(res.body.error.message).toContain(fragment);
    });
  }

  test("nothing was stored by the refusals", async () => {
    const list = await t.req("GET", "/api/connections?pieceId=github");
    expect(list.body.total).toBe(0);
  });
});

describe("connection records", () => {
  test("an OAuth2 connection starts pending; secrets are masked and never returned", async () => {
    const res = await create({
      pieceId: "oauth2",
      name: "generic one",
      clientId: "cid-1",
      clientSecret: "super-secret-value-1",
      config: { authUrl: provider.authUrl, tokenUrl: provider.tokenUrl, scope: "read" },
    });
    expect(res.status).toBe(201);
    const c = res.body.data;
    expect(c).toMatchObject({
      pieceId: "oauth2",
      name: "generic one",
      authKind: "oauth2",
      grantType: "authorization_code",
      status: "pending",
      clientId: "cid-1",
      managedApp: false,
      tokenExpiresAt: null,
    });
    expect(c.config).toEqual({ authUrl: provider.authUrl, tokenUrl: provider.tokenUrl, scope: "read", grantType: "authorization_code" });
    expect(c.credentials).toEqual({ clientSecret: "********" });
    expect(res.text).not.toContain("super-secret-value-1");
    const read = await t.req("GET", `/api/connections/${c.id}`);
    expect(read.status).toBe(200);
    expect(read.text).not.toContain("super-secret-value-1");
  });

  test("api_key, basic and custom connections are active at once and mask their secrets", async () => {
    const key = await create({ pieceId: "test-apikey", name: "key", apiKey: "good-key-0001" });
    expect(key.status).toBe(201);
    expect(key.body.data).toMatchObject({ authKind: "api_key", status: "active", credentials: { apiKey: "********" } });
    const basic = await create({ pieceId: "test-basic", name: "basic", username: "alice", password: "pa55word-secret" });
    expect(basic.body.data).toMatchObject({ authKind: "basic", status: "active", username: "alice", credentials: { password: "********" } });
    const custom = await create({ pieceId: "test-custom", name: "custom", values: { subdomain: "acme", token: "custom-secret-token" } });
    expect(custom.body.data).toMatchObject({ authKind: "custom", status: "active", values: { subdomain: "acme", token: "********" } });
    for (const res of [key, basic, custom]) {
      for (const secret of ["good-key-0001", "pa55word-secret", "custom-secret-token"]) expect(res.text).not.toContain(secret);
    }
    const auth = await t.deps.connections.resolveConnectionAuth({
      workspaceId: custom.body.data.workspaceId,
      connectionId: custom.body.data.id,
      pieceId: "test-custom",
    });
    expect(auth).toEqual({ kind: "custom", values: { subdomain: "acme", token: "custom-secret-token" } });
  });

  test("names are unique in a workspace: a clash is 409 naming the existing connection", async () => {
    const first = await create({ pieceId: "test-apikey", name: "twice", apiKey: "k1" });
    const second = await create({ pieceId: "test-apikey", name: "twice", apiKey: "k2" });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toContain(first.body.data.id);
  });

  test("list filters by pieceId and status, paginates, and ignores an unknown status", async () => {
    const all = await t.req("GET", "/api/connections");
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(all.body.data.length);
    const pending = await t.req("GET", "/api/connections?status=pending");
    expect(pending.body.data.length).toBeGreaterThan(0);
    expect(pending.body.data.every((c: any) => c.status === "pending")).toBe(true);
    const ofPiece = await t.req("GET", "/api/connections?pieceId=test-apikey");
    expect(ofPiece.body.data.every((c: any) => c.pieceId === "test-apikey")).toBe(true);
    expect(ofPiece.body.total).toBe(2);
    const bogus = await t.req("GET", "/api/connections?status=bogus");
    expect(bogus.status).toBe(200);
    expect(bogus.body.total).toBe(all.body.total);
    const page = await t.req("GET", "/api/connections?limit=1&page=2");
    expect(page.body.data.length).toBe(1);
    expect(page.body.data[0].id).toBe(all.body.data[1].id);
    expect(page.body.total).toBe(all.body.total);
    const empty = await t.req("GET", "/api/connections?pieceId=none");
    expect(empty.body).toEqual({ data: [], total: 0 });
  });

  test("PATCH renames, replaces a secret, and re-validates", async () => {
    const made = await create({ pieceId: "test-apikey", name: "to patch", apiKey: "old-key-aaaa" });
    const id = made.body.data.id;
    const renamed = await t.req("PATCH", `/api/connections/${id}`, { body: { name: "patched", apiKey: "new-key-bbbb" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe("patched");
    expect(renamed.text).not.toContain("new-key-bbbb");
    const auth = await t.deps.connections.resolveConnectionAuth({ workspaceId: made.body.data.workspaceId, connectionId: id, pieceId: "test-apikey" });
    expect(auth).toEqual({ kind: "api_key", apiKey: "new-key-bbbb" });
    const wrong = await t.req("PATCH", `/api/connections/${id}`, { body: { clientId: "x" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("apiKey");
    const piece = await t.req("PATCH", `/api/connections/${id}`, { body: { pieceId: "oauth2" } });
    expect(piece.status).toBe(400);
    expect(piece.body.error.code).toBe("UNKNOWN_FIELD");
  });

  test("a new client secret keeps the tokens; a new scope or client clears them (pending: authorize again)", async () => {
    const c = await createGeneric(t, provider);
    expect((await authorize(t, c.id)).callback.status).toBe(200);
    const secret = await t.req("PATCH", `/api/connections/${c.id}`, { body: { clientSecret: provider.clientSecret } });
    expect(secret.body.data.status).toBe("active");
    expect(secret.body.data.credentials.accessToken).toBe("********");
    const scoped = await t.req("PATCH", `/api/connections/${c.id}`, { body: { config: { scope: "admin" } } });
    expect(scoped.body.data).toMatchObject({ status: "pending", tokenExpiresAt: null, credentials: { clientSecret: "********" } });
    expect(scoped.body.data.credentials.accessToken).toBeUndefined();
    expect(scoped.body.data.config).toMatchObject({ scope: "admin", authUrl: provider.authUrl, tokenUrl: provider.tokenUrl });
  });

  test("POST /api/connections/{id}/test runs the piece's check; a piece without one answers 422", async () => {
    const good = await create({ pieceId: "test-apikey", name: "check good", apiKey: "good-key-0001" });
    const ok = await t.req("POST", `/api/connections/${good.body.data.id}/test`);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ ok: true, message: expect.stringContaining("works") });
    const bad = await create({ pieceId: "test-apikey", name: "check bad", apiKey: "bad" });
    const refused = await t.req("POST", `/api/connections/${bad.body.data.id}/test`);
    expect(refused.body.data).toEqual({ ok: false, message: "key refused" });
    const basic = await create({ pieceId: "test-basic", name: "no check", username: "u", password: "p" });
    const none = await t.req("POST", `/api/connections/${basic.body.data.id}/test`);
    expect(none.status).toBe(422);
    expect(none.body.error.message).toContain("declares no connection check");
  });

  test("DELETE removes a connection not used by live workflows", async () => {
    const made = await create({ pieceId: "test-apikey", name: "to delete", apiKey: "k" });
    const del = await t.req("DELETE", `/api/connections/${made.body.data.id}`);
    expect(del.status).toBe(200);
    expect(del.body.data.id).toBe(made.body.data.id);
    expect((await t.req("GET", `/api/connections/${made.body.data.id}`)).status).toBe(404);
  });
});

describe("scopes and workspace isolation", () => {
  test("connection:read can read but not write; writes need connection:write", async () => {
    const reader = await t.token(["connection:read"]);
    expect((await t.req("GET", "/api/connections", { token: reader })).status).toBe(200);
    const refused = await create({ pieceId: "test-apikey", name: "r", apiKey: "k" }, reader);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("connection:write");
    const none = await t.token(["workflow:read"]);
    expect((await t.req("GET", "/api/connections", { token: none })).status).toBe(403);
    expect((await t.req("GET", "/api/connections", { token: null })).status).toBe(401);
  });

  test("another workspace's connection answers 404 everywhere and is not listed", async () => {
    const mine = await create({ pieceId: "test-apikey", name: "isolated", apiKey: "isolated-key" });
    const id = mine.body.data.id;
    const other = await t.otherWorkspace();
    for (const [method, path] of [
      ["GET", `/api/connections/${id}`],
      ["PATCH", `/api/connections/${id}`],
      ["DELETE", `/api/connections/${id}`],
      ["POST", `/api/connections/${id}/oauth2/start`],
      ["POST", `/api/connections/${id}/test`],
    ] as const) {
      const res = await t.req(method, path, { token: other.token, body: method === "PATCH" ? { name: "stolen" } : undefined });
      expect(res.status).toBe(404);
    }
    expect((await t.req("GET", "/api/connections", { token: other.token })).body.total).toBe(0);
    await expect(t.deps.connections.resolveConnectionAuth({ workspaceId: other.workspaceId, connectionId: id, pieceId: "test-apikey" })).rejects.toThrow(
      "not found in this workspace",
    );
  });

  test("a step may use only a connection of the piece it names", async () => {
    const key = await create({ pieceId: "test-apikey", name: "bound", apiKey: "bound-key" });
    const { id, workspaceId } = key.body.data;
    await expect(t.deps.connections.resolveConnectionAuth({ workspaceId, connectionId: id, pieceId: "github" })).rejects.toThrow(
      'belongs to piece "test-apikey"',
    );
    expect(await t.deps.connections.connectionExists(workspaceId, id, "test-apikey")).toBe(true);
    expect(await t.deps.connections.connectionExists(workspaceId, id, "github")).toBe(false);
    const other = await t.otherWorkspace();
    expect(await t.deps.connections.connectionExists(other.workspaceId, id, "test-apikey")).toBe(false);
  });
});

describe("contract", () => {
  test("every connections route is documented with its scope; the callback is public and answers HTML", async () => {
    const doc = (await t.req("GET", "/api/openapi.json", { token: null })).body;
    const expected: Array<[string, string, string]> = [
      ["/api/connections", "post", "connection:write"],
      ["/api/connections", "get", "connection:read"],
      ["/api/connections/{id}", "get", "connection:read"],
      ["/api/connections/{id}", "patch", "connection:write"],
      ["/api/connections/{id}", "delete", "connection:write"],
      ["/api/connections/{id}/oauth2/start", "post", "connection:write"],
      ["/api/connections/{id}/test", "post", "connection:write"],
      ["/api/oauth2/callback", "get", "public"],
    ];
    for (const [path, method, scope] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op["x-permission"]).toBe(scope);
      expect(op.tags).toEqual(["Connections"]);
    }
    expect(doc.paths["/api/connections/{id}/oauth2/start"].post["x-idempotent"]).toBe(false);
    expect(doc.paths["/api/oauth2/callback"].get.responses["200"].content["text/html"]).toBeDefined();
  });
});
