/**
 * Disk full (issue 6 item 3), simulated with `PRAGMA max_page_count` on the app's own connection (the
 * engine's group commits use it too): writes answer 503 SERVICE_UNAVAILABLE with Retry-After, never a
 * 2xx; a run start that could not be committed was never acknowledged and never runs; every start that
 * was acknowledged exists and finishes; service returns when space does.
 *
 * `max_page_count` is per connection, so this runs the engine's inline writer (the app's connection); the
 * writer thread reports the same SQLite error through its batch answer (test/engine/run-writes.test.ts).
 */
import { afterAll, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { testStorage } from "../support/postgres-storage";
import { createWorkflow, definition, engineApp, stopEngines, template, until } from "../engine/support";

afterAll(stopEngines);

/** Caps the database at its current size and fills every free byte, so any write that needs a page fails. */
function fillDisk(t: TestApp) {
  t.db.run("CREATE TABLE IF NOT EXISTS test_filler (x BLOB)");
  const { page_count } = t.db.query("PRAGMA page_count").get() as { page_count: number };
  t.db.run(`PRAGMA max_page_count = ${page_count}`);
  for (const size of [4000, 500, 50, 1]) {
    try {
      for (;;) t.db.run(`INSERT INTO test_filler VALUES (randomblob(${size}))`);
    } catch (error) {
      expect(String((error as Error).message)).toContain("full");
    }
  }
}

function freeDisk(t: TestApp) {
  t.db.run("PRAGMA max_page_count = 1073741823");
  t.db.run("DROP TABLE test_filler");
}

const expect503 = (res: { status: number; headers: Headers; body: any; text: string }) => {
  expect(res.status).toBe(503);
  expect(res.body.error.code).toBe("SERVICE_UNAVAILABLE");
  expect(res.body.error.message).toContain("storage is full");
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
};

// The fault is simulated SQLite's way (max_page_count). On PostgreSQL a full disk is SQLSTATE 53100, which the
// store throws as the same StorageError kind "full" (src/store/storage-errors.ts); it is not simulated on the PostgreSQL pass.
test.skipIf(testStorage() === "postgres")(
  "a full disk answers 503 with Retry-After, never a 2xx for a start it could not commit; service returns with space",
  async () => {
    const t = await engineApp({ WEFT_RUN_WRITER: "inline" });
    const id = await createWorkflow(t, definition(template("a", "hello {{trigger.body.name}}")), { publish: true });
    const hook = await createWorkflow(
      t,
      {
        ...definition(template("a", "{{trigger.body.i}}")),
        trigger: {
          name: "trigger",
          type: "webhook",
          pieceId: "webhook",
          actionId: "catch_webhook",
          config: {},
          nextAction: template("a", "{{trigger.body.i}}"),
        },
      },
      { publish: true },
    );
    const webhookPath = new URL((await t.req("GET", `/api/workflows/${hook}`)).body.data.webhookUrl).pathname;
    const warm = await t.req("POST", `/api/workflows/${id}/run?environment=production&wait=5`, { body: { name: "before" } });
    expect(warm.body.data.status).toBe("completed");

    fillDisk(t);
    // Each start needs fresh pages: random text, which a run's compressed record cannot shrink.
    const padding = Buffer.from(crypto.getRandomValues(new Uint8Array(2400))).toString("base64");
    const accepted: string[] = [];
    let refused = 0;
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? t.req("POST", `/api/workflows/${id}/run?environment=production`, { body: { name: `n${i}`, padding } })
          : t.req("POST", webhookPath, { token: null, body: { i, padding } }),
      ),
    );
    for (const res of answers) {
      if (res.status === 202) accepted.push(res.body.data.id ?? res.body.data.runId);
      else {
        expect503(res);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
    // A write that needs new pages (a small one may still fit in a page's free space, and then it is stored).
    expect503(await t.req("POST", "/api/workflows", { body: { name: "no room", definition: definition(template("big", padding.repeat(3))) } }));
    expect503(await t.req("POST", `/api/workflows/${id}/run?environment=production&wait=5`, { body: { name: "sync", padding } }));

    freeDisk(t);
    // Back: a run starts and completes, a workflow is created.
    const after = await t.req("POST", `/api/workflows/${id}/run?environment=production&wait=5`, { body: { name: "after" } });
    expect(after.status).toBe(200);
    expect(after.body.data.status).toBe("completed");
    expect((await t.req("POST", "/api/workflows", { body: { name: "room again", definition: definition(undefined) } })).status).toBe(201);

    // Every acknowledged start exists and finishes; the refused ones were never written.
    for (const runId of accepted) {
      const run = await until(
        async () => (await t.req("GET", `/api/runs/${runId}`)).body.data,
        (r) => r?.status === "completed",
        10_000,
      );
      expect(run.steps).toHaveLength(1);
    }
    const total = async (workflowId: string) => (await t.req("GET", `/api/runs?workflowId=${workflowId}&limit=1`)).body.pagination.total;
    expect((await total(id)) + (await total(hook))).toBe(accepted.length + 2);
  },
  30_000,
);
