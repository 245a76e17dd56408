import { describe, expect, test, beforeAll } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { postgresClient } from "../support/postgres-storage";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

describe("envelope and errors", () => {
  test("unknown path answers 404 NOT_FOUND inside the envelope", async () => {
    const res = await t.req("GET", "/api/nope");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("NOT_FOUND");
    expect(typeof res.body.error.message).toBe("string");
  });

  test("unknown method on a known path answers 404 in the envelope", async () => {
    const res = await t.req("PATCH", "/api/tokens");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("NOT_FOUND");
  });

  test("malformed JSON answers 400 VALIDATION_FAILED", async () => {
    const res = await t.req("POST", "/api/tokens", { raw: "{not json" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
    expect(res.body.error.message).toContain("JSON");
  });

  test("a schema failure names the path and the expected type", async () => {
    const res = await t.req("POST", "/api/workspaces", { body: { name: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
    expect(res.body.error.message).toContain("body.name");
    expect(res.body.error.message).toContain("string");
  });

  test("an unknown key answers 400 UNKNOWN_FIELD naming it and the allowed keys", async () => {
    const res = await t.req("POST", "/api/workspaces", { body: { name: "x", colour: "red" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("UNKNOWN_FIELD");
    expect(res.body.error.message).toContain("colour");
    expect(res.body.error.message).toContain("name");
  });

  test("__proto__, constructor and prototype keys are refused", async () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      const res = await t.req("POST", "/api/workspaces", { raw: `{"name":"x","nested":{"${key}":{"polluted":true}}}` });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(key);
    }
    expect(({} as any).polluted).toBeUndefined();
  });

  test("JSON nested deeper than 64 answers 400", async () => {
    const deep = "[".repeat(70) + "]".repeat(70);
    const res = await t.req("POST", "/api/workspaces", { raw: `{"name":${deep}}` });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("deeper than 64");
  });

  test("a body over the limit answers 413 PAYLOAD_TOO_LARGE", async () => {
    const small = await testApp({ WEFT_BODY_LIMIT: "2048" });
    const res = await small.req("POST", "/api/workspaces", { body: { name: "x".repeat(5000) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("an unexpected error answers 500 INTERNAL with a request id and no stack", async () => {
    const broken = await testApp();
    // A table the request needs is gone (on PostgreSQL with the foreign keys that point at it).
    if (broken.databaseUrl) await postgresClient(broken.databaseUrl).run("DROP TABLE workspaces CASCADE");
    else {
      broken.db.run("PRAGMA foreign_keys = OFF");
      broken.db.run("DROP TABLE workspaces");
    }
    const res = await broken.req("GET", "/api/workspaces");
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe("INTERNAL");
    const requestId = res.headers.get("x-request-id")!;
    expect(requestId.length).toBeGreaterThan(8);
    expect(res.body.error.message).toContain(requestId);
    expect(res.text).not.toContain("at ");
    expect(broken.logLines.some((l) => l.includes(requestId) && l.includes("unhandled error"))).toBe(true);
  });

  test("success bodies are enveloped: single and list", async () => {
    const one = await t.req("GET", "/api/auth/me");
    expect(one.status).toBe(200);
    expect(one.body.data.workspace.id).toBeString();
    const list = await t.req("GET", "/api/tokens");
    expect(Array.isArray(list.body.data)).toBe(true);
    expect(list.body.total).toBe(list.body.data.length);
  });
});

describe("request body content types", () => {
  test("a non-JSON body on an API route is refused naming the Content-Type to send", async () => {
    const res = await t.req("POST", "/api/workspaces", { raw: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
    expect(res.body.error.message).toContain("application/json");
  });
});
