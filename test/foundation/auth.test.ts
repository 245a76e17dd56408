import { describe, expect, test, beforeAll } from "bun:test";
import { testApp, ROOT_TOKEN, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

describe("authentication and scopes", () => {
  test("no credential answers 401 UNAUTHORIZED with WWW-Authenticate: Bearer", async () => {
    const res = await t.req("GET", "/api/tokens", { token: null });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
  });

  test("an unknown token answers 401", async () => {
    const res = await t.req("GET", "/api/tokens", { token: "weft_not_a_real_token" });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
  });

  test("a token lacking the scope answers 403 naming the required scope", async () => {
    const weak = await t.token(["run:read"]);
    const res = await t.req("GET", "/api/tokens", { token: weak });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
    expect(res.body.error.message).toContain("workspace:admin");
  });

  test("auth is checked before the body is validated", async () => {
    const res = await t.req("POST", "/api/workspaces", { token: null, body: { wrong: true } });
    expect(res.status).toBe(401);
  });

  test("a revoked token answers 401 at once", async () => {
    const raw = await t.token(["workspace:admin"]);
    expect((await t.req("GET", "/api/tokens", { token: raw })).status).toBe(200);
    const list = await t.req("GET", "/api/tokens");
    const id = list.body.data.find((x: any) => raw.startsWith(x.prefix) && x.name === "test").id;
    const del = await t.req("DELETE", `/api/tokens/${id}`);
    expect(del.status).toBe(200);
    expect((await t.req("GET", "/api/tokens", { token: raw })).status).toBe(401);
  });

  test("minted tokens are shown once: the list never carries raw values or hashes", async () => {
    const created = await t.req("POST", "/api/tokens", { body: { name: "once", scopes: ["run:read"] } });
    expect(created.status).toBe(201);
    const raw = created.body.data.token;
    expect(raw).toStartWith("weft_");
    const list = await t.req("GET", "/api/tokens");
    expect(list.text).not.toContain(raw);
    expect(list.text).not.toContain("hash");
    const row = list.body.data.find((x: any) => x.id === created.body.data.id);
    expect(row).toMatchObject({ name: "once", scopes: ["run:read"], prefix: raw.slice(0, 12) });
    expect("lastUsedAt" in row).toBe(true);
  });

  test("unknown scopes are refused naming the legal list", async () => {
    const res = await t.req("POST", "/api/tokens", { body: { name: "x", scopes: ["workflow:fly"] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("workflow:read");
  });

  test("a token cannot mint a token with scopes it lacks", async () => {
    const admin = await t.token(["workspace:admin"]);
    const res = await t.req("POST", "/api/tokens", { token: admin, body: { name: "x", scopes: ["workflow:write"] } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("workflow:write");
  });

  test("a token acts only in its workspace: another workspace's ids answer 404", async () => {
    const other = await t.otherWorkspace();
    const mine = await t.req("GET", "/api/tokens");
    const myTokenId = mine.body.data[0].id;
    const res = await t.req("DELETE", `/api/tokens/${myTokenId}`, { token: other.token });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("NOT_FOUND");
    const theirs = await t.req("GET", "/api/tokens", { token: other.token });
    expect(theirs.body.data.every((x: any) => x.workspaceId === other.workspaceId)).toBe(true);
    expect((await t.req("GET", "/api/tokens")).status).toBe(200);
  });

  test("malformed ids in paths answer 400, never 500", async () => {
    const res = await t.req("DELETE", "/api/tokens/not-a-uuid");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
  });
});

describe("browser sessions and CSRF", () => {
  test("setup → cookie session; cookie writes need X-CSRF-Token, bearer writes do not", async () => {
    const fresh = await testApp();
    expect((await fresh.req("GET", "/api/auth/status", { token: null })).body.data.needsSetup).toBe(true);
    const setup = await fresh.req("POST", "/api/auth/setup", { token: null, body: { email: "owner@example.com", password: "correct horse" } });
    expect(setup.status).toBe(201);
    const cookie = setup.headers.get("set-cookie")!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    const session = cookie.split(";")[0]!;
    const csrf = setup.body.data.csrfToken;

    const again = await fresh.req("POST", "/api/auth/setup", { token: null, body: { email: "x@example.com", password: "another one" } });
    expect(again.status).toBe(409);

    const read = await fresh.req("GET", "/api/tokens", { token: null, headers: { cookie: session } });
    expect(read.status).toBe(200);
    const noCsrf = await fresh.req("POST", "/api/workspaces", { token: null, headers: { cookie: session }, body: { name: "w" } });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.message).toContain("X-CSRF-Token");
    const withCsrf = await fresh.req("POST", "/api/workspaces", { token: null, headers: { cookie: session, "x-csrf-token": csrf }, body: { name: "w" } });
    expect(withCsrf.status).toBe(201);
    const bearer = await fresh.req("POST", "/api/workspaces", { token: ROOT_TOKEN, body: { name: "w2" } });
    expect(bearer.status).toBe(201);

    const wrong = await fresh.req("POST", "/api/auth/login", { token: null, body: { email: "owner@example.com", password: "wrong password" } });
    expect(wrong.status).toBe(401);
    const login = await fresh.req("POST", "/api/auth/login", { token: null, body: { email: "owner@example.com", password: "correct horse" } });
    expect(login.status).toBe(200);
    const second = login.headers.get("set-cookie")!.split(";")[0]!;
    const logout = await fresh.req("POST", "/api/auth/logout", { token: null, headers: { cookie: second, "x-csrf-token": login.body.data.csrfToken } });
    expect(logout.status).toBe(200);
    expect((await fresh.req("GET", "/api/auth/me", { token: null, headers: { cookie: second } })).status).toBe(401);
  });
});
