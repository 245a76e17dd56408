/**
 * Spec 8 (and the 409/422 rows of 7) on the operation the spec names: POST /api/workflows with
 * Idempotency-Key. The generic mechanism is tested on other routes in test/foundation/limits.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { testApp, type TestApp } from "../support/app";
import { type AppSql, appSql } from "../support/app-sql";

let t: TestApp;
let sql: AppSql;
beforeAll(async () => {
  t = await testApp();
  sql = appSql(t);
});

const create = (key: string, body: unknown, path = "/api/workflows") => t.req("POST", path, { body, headers: { "idempotency-key": key } });
const count = async () => (await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM workflows"))!.n;

describe("8 Idempotency-Key on POST /api/workflows", () => {
  test("a replay answers the first result with Idempotency-Replayed: true and creates nothing", async () => {
    const first = await create("create-1", { name: "once" });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const before = await count();
    const replay = await create("create-1", { name: "once" });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(await count()).toBe(before);
  });

  // what differs from the first request with the same key → 422 IDEMPOTENCY_MISMATCH, nothing created
  const mismatches: [string, unknown, string][] = [
    ["the body", { name: "twice" }, "/api/workflows"],
    ["the query string", { name: "once" }, "/api/workflows?copy=1"],
    ["the path", { name: "once", weftExport: 1, definition: { schemaVersion: 2, trigger: { name: "trigger", type: "manual" } } }, "/api/workflows/import"],
  ];
  for (const [what, body, path] of mismatches) {
    test(`the same key with a different ${what} → 422 IDEMPOTENCY_MISMATCH`, async () => {
      await create("create-2", { name: "once" });
      const before = await count();
      const res = await create("create-2", body, path);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe("IDEMPOTENCY_MISMATCH");
      expect(await count()).toBe(before);
    });
  }

  test("a key whose original request is still running → 409 IDEMPOTENCY_IN_PROGRESS after a short wait", async () => {
    const credential = (await sql.get<{ id: string }>("SELECT id FROM api_tokens WHERE name = 'bootstrap'"))!.id;
    const body = { name: "slow" };
    const fingerprint = createHash("sha256")
      .update(`POST\n/api/workflows\n\n${JSON.stringify(body)}`)
      .digest("hex");
    await sql.run("INSERT INTO idempotency_records (credential, key, fingerprint, state, created_at) VALUES (?, 'create-3', ?, 'running', ?)", [
      credential,
      fingerprint,
      Date.now(),
    ]);
    const res = await create("create-3", body);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
  });

  test("records are kept 24 hours: an older one no longer replays", async () => {
    const first = await create("create-4", { name: "old" });
    await sql.run("UPDATE idempotency_records SET created_at = ? WHERE key = 'create-4'", [Date.now() - 24 * 3600_000 - 1000]);
    const again = await create("create-4", { name: "old" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBeNull();
    expect(again.body.data.id).not.toBe(first.body.data.id);
  });

  // key length: at most 255 characters
  const lengths: [number, number][] = [
    [1, 201],
    [255, 201],
    [256, 400],
  ];
  for (const [length, status] of lengths) {
    test(`a key of ${length} characters → ${status}`, async () => {
      const res = await create("k".repeat(length - 1) + String(length % 10), { name: `len ${length}` });
      expect(res.status).toBe(status);
      if (status === 400) expect(res.body.error.message).toContain("255");
    });
  }
});
