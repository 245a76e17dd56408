/**
 * GET /readyz (docs/operations.md, "Health and readiness"): 200 once the storage answers, the schema is the one
 * this build migrates to and the engine has started; otherwise 503 SERVICE_UNAVAILABLE in the envelope, naming
 * what is not ready — before the start, while stopping, with a migration missing, with the database gone.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { testApp, type TestApp } from "../support/app";

async function readyz(t: TestApp) {
  return t.req("GET", "/readyz", { token: null });
}

function expectNotReady(res: Awaited<ReturnType<typeof readyz>>, check: string, words: string) {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("1");
  expect(res.body.error.code).toBe("SERVICE_UNAVAILABLE");
  expect(res.body.error.message).toStartWith("not ready: ");
  expect(res.body.error.message).toContain(`${check}: ${words}`);
  expect(res.body.error.details.checks[check]).toContain(words);
}

/** Takes the newest migration's record away, as a database an older weft left would be. */
async function unapplyNewestMigration(t: TestApp): Promise<number> {
  if (t.databaseUrl) {
    const sql = new SQL(t.databaseUrl, { max: 1 });
    try {
      const [row] = await sql`DELETE FROM weft_schema_migrations WHERE version = (SELECT max(version) FROM weft_schema_migrations) RETURNING version`;
      return Number(row.version);
    } finally {
      await sql.close();
    }
  }
  const version = (t.db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  t.db.run(`PRAGMA user_version = ${version - 1}`);
  return version;
}

describe("GET /readyz", () => {
  test("503 until the engine has started, 200 once it has, 503 again while it stops", async () => {
    const t = await testApp();
    const before = await readyz(t);
    expectNotReady(before, "engine", "the engine has not started");
    // The other checks passed: only the engine is named.
    expect(before.body.error.details.checks).toMatchObject({ storage: "ok", migrations: "ok" });

    await t.deps.engine.start();
    const ready = await readyz(t);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ data: { status: "ready", checks: { storage: "ok", migrations: "ok", engine: "ok" } } });

    const stopping = t.deps.engine.stop(500);
    expectNotReady(await readyz(t), "engine", "the engine is stopping");
    await stopping;
  });

  test("a database short of this build's newest migration is not ready, and says which versions", async () => {
    const t = await testApp();
    await t.deps.engine.start();
    const latest = await unapplyNewestMigration(t);
    expectNotReady(await readyz(t), "migrations", `the database is at schema version ${latest - 1}; this weft needs ${latest}`);
    await t.deps.engine.stop(500);
  });

  test("a database that does not answer is not ready, and /healthz fails too", async () => {
    const t = await testApp();
    await t.deps.engine.start();
    await t.deps.engine.stop(500);
    t.db.close();
    const res = await readyz(t);
    expect(res.status).toBe(503);
    expect(res.body.error.details.checks.storage).toStartWith("the database does not answer: ");
    expect(res.body.error.message).toContain("storage: the database does not answer");
    const healthz = await t.req("GET", "/healthz", { token: null });
    expect(healthz.status).toBe(503);
    expect(healthz.body.error.message).toStartWith("the database does not answer: ");
  });

  test("is public: a wrong bearer token changes nothing", async () => {
    const t = await testApp();
    await t.deps.engine.start();
    const res = await t.req("GET", "/readyz", { token: null, headers: { authorization: "Bearer not-a-token" } });
    expect(res.status).toBe(200);
    await t.deps.engine.stop(500);
  });
});
