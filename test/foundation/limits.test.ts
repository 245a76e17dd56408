import { describe, expect, test } from "bun:test";
import { testApp } from "../support/app";
import { appSql } from "../support/app-sql";

describe("rate limits", () => {
  test("every authenticated answer carries X-RateLimit-* and the IETF RateLimit pair", async () => {
    const t = await testApp({ WEFT_RATE_LIMIT: "10", WEFT_RATE_BURST: "20" });
    const res = await t.req("GET", "/api/auth/me");
    expect(res.headers.get("x-ratelimit-limit")).toBe("20");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("19");
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThanOrEqual(0);
    expect(res.headers.get("ratelimit-policy")).toContain("q=20");
    expect(res.headers.get("ratelimit")).toContain("r=19");
    const failed = await t.req("GET", "/api/nope/x");
    expect(failed.status).toBe(404);
  });

  test("an exhausted bucket answers 429 RATE_LIMITED with Retry-After", async () => {
    const t = await testApp({ WEFT_RATE_LIMIT: "1", WEFT_RATE_BURST: "3" });
    for (let i = 0; i < 3; i++) expect((await t.req("GET", "/api/auth/me")).status).toBe(200);
    const res = await t.req("GET", "/api/auth/me");
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe("RATE_LIMITED");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  test("a burst of 1,000 calls at once with one token is limited to the bucket and its refill, on either database", async () => {
    const t = await testApp({ WEFT_RATE_LIMIT: "50", WEFT_RATE_BURST: "200" });
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 1_000 }, () => t.req("GET", "/api/auth/me")));
    const seconds = (performance.now() - started) / 1000;
    const allowed = answers.filter((res) => res.status === 200).length;
    expect(answers.filter((res) => res.status !== 200).every((res) => res.status === 429 && res.body.error.code === "RATE_LIMITED")).toBe(true);
    // The 200 of the bucket, and what refilled (50 a second) while the burst was answered.
    expect(allowed).toBeGreaterThanOrEqual(200);
    expect(allowed).toBeLessThanOrEqual(200 + Math.ceil(50 * seconds) + 1);
  });

  test("buckets are per credential: one token's exhaustion leaves another's untouched", async () => {
    const t = await testApp({ WEFT_RATE_LIMIT: "1", WEFT_RATE_BURST: "2" });
    const other = await t.token(["workspace:admin"]); // the mint itself takes from the root bucket
    await t.req("GET", "/api/auth/me");
    expect((await t.req("GET", "/api/auth/me")).status).toBe(429);
    expect((await t.req("GET", "/api/auth/me", { token: other })).status).toBe(200);
  });

  test("an unauthenticated flood cannot exhaust a valid token's bucket", async () => {
    const t = await testApp({ WEFT_RATE_LIMIT: "1", WEFT_RATE_BURST: "2", WEFT_FLOOD_LIMIT: "0" });
    for (let i = 0; i < 50; i++) expect((await t.req("GET", "/api/auth/me", { token: "weft_bogus" })).status).toBe(401);
    expect((await t.req("GET", "/api/auth/me")).status).toBe(200);
  });

  test("the per-address flood ceiling applies before authentication", async () => {
    const t = await testApp({ WEFT_FLOOD_LIMIT: "2" });
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) answers.push((await t.req("GET", "/api/auth/me", { token: "weft_bogus" })).status);
    expect(answers).toContain(401);
    expect(answers.at(-1)).toBe(429);
    const res = await t.req("GET", "/healthz", { token: null });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe("RATE_LIMITED");
    expect(res.headers.get("retry-after")).not.toBeNull();
  });
});

describe("idempotency", () => {
  const create = (t: Awaited<ReturnType<typeof testApp>>, key: string, name: string, extra: Record<string, string> = {}) =>
    t.req("POST", "/api/workspaces", { body: { name }, headers: { "idempotency-key": key, ...extra } });

  test("a replay returns the stored status and body with Idempotency-Replayed: true and creates nothing", async () => {
    const t = await testApp();
    const first = await create(t, "k1", "alpha");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const second = await create(t, "k1", "alpha");
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    const list = await t.req("GET", "/api/workspaces");
    expect(list.body.data.filter((w: any) => w.name === "alpha").length).toBe(1);
  });

  test("the same key with a different body, path or query answers 422 IDEMPOTENCY_MISMATCH", async () => {
    const t = await testApp();
    await create(t, "k2", "alpha");
    const res = await create(t, "k2", "beta");
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("IDEMPOTENCY_MISMATCH");
    const query = await t.req("POST", "/api/workspaces?x=1", { body: { name: "alpha" }, headers: { "idempotency-key": "k2" } });
    expect(query.status).toBe(422);
  });

  test("records are per credential", async () => {
    const t = await testApp();
    const other = await t.token(["workspace:admin"]);
    await create(t, "shared", "one");
    const res = await t.req("POST", "/api/workspaces", { token: other, body: { name: "one" }, headers: { "idempotency-key": "shared" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("idempotency-replayed")).toBeNull();
  });

  test("a key over 255 characters answers 400", async () => {
    const t = await testApp();
    const res = await create(t, "k".repeat(256), "alpha");
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("255");
    expect((await create(t, "k".repeat(255), "alpha")).status).toBe(201);
  });

  test("a 4xx answer is stored and replayed; a 5xx answer is not", async () => {
    const t = await testApp();
    const bad = await t.req("POST", "/api/workspaces", { body: { name: "" }, headers: { "idempotency-key": "k4" } });
    expect(bad.status).toBe(400);
    // Validation failed before the handler ran: nothing was claimed, so a fixed body with the same key is a fresh request.
    const good = await t.req("POST", "/api/workspaces", { body: { name: "ok" }, headers: { "idempotency-key": "k4" } });
    expect(good.status).toBe(201);

    const broken = await testApp();
    const sql = appSql(broken);
    // On SQLite with foreign-key enforcement off while the table is away; PostgreSQL needs no such step.
    if (!broken.databaseUrl) await sql.run("PRAGMA foreign_keys = OFF");
    await sql.run("ALTER TABLE workspaces RENAME TO workspaces_gone");
    const failed = await broken.req("POST", "/api/workspaces", { body: { name: "x" }, headers: { "idempotency-key": "k5" } });
    expect(failed.status).toBe(500);
    await sql.run("ALTER TABLE workspaces_gone RENAME TO workspaces");
    const retried = await broken.req("POST", "/api/workspaces", { body: { name: "x" }, headers: { "idempotency-key": "k5" } });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotency-replayed")).toBeNull();
  });

  test("a key whose original request is still running answers 409 IDEMPOTENCY_IN_PROGRESS after a short wait", async () => {
    const t = await testApp();
    // Simulate an original request that is still running under this credential.
    const sql = appSql(t);
    const tokenRow = (await sql.get<{ id: string }>("SELECT id FROM api_tokens WHERE name = 'bootstrap'"))!;
    const { createHash } = await import("node:crypto");
    const fingerprint = createHash("sha256")
      .update(`POST\n/api/workspaces\n\n${JSON.stringify({ name: "slow" })}`)
      .digest("hex");
    await sql.run("INSERT INTO idempotency_records (credential, key, fingerprint, state, created_at) VALUES (?, 'k6', ?, 'running', ?)", [
      tokenRow.id,
      fingerprint,
      Date.now(),
    ]);
    const started = Date.now();
    const res = await create(t, "k6", "slow");
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });

  test("operations that do not accept the key refuse it with 400", async () => {
    const t = await testApp();
    const res = await t.req("POST", "/api/tokens", { body: { name: "x", scopes: ["run:read"] }, headers: { "idempotency-key": "k7" } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("does not accept the Idempotency-Key");
  });
});
