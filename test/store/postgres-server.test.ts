/**
 * A real `weft serve` on PostgreSQL (WEFT_DATABASE_URL, Debian `postgresql`): it migrates an empty database,
 * answers a synchronous webhook, stores the run where a second process sees it, and after a restart on a
 * new, empty data directory still has the workflow, its runs and a working webhook — so nothing of the
 * product's state was left in the data directory.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase, postgresClient } from "../support/postgres-storage";
import { startServer, type ServerHandle } from "../support/server";
import { storageOf } from "../../src/store/storage";
import { STATUS_CODES } from "../../src/store/run-layout";

announceMissingPostgres();

describe.skipIf(!postgresBinaries())("weft serve on PostgreSQL", () => {
  let server: ServerHandle | undefined;
  afterAll(async () => {
    await server?.stop("SIGKILL");
  });

  test("webhook runs are stored in PostgreSQL and outlive the data directory", async () => {
    const { url, db } = await freshPostgresDatabase();
    // The test's own connection (the store's Db answers no SQL).
    const client = postgresClient(url);
    // The template is migrated: start from a database with no Weft tables, as an operator would.
    await client.run("DROP SCHEMA public CASCADE");
    await client.run("CREATE SCHEMA public");
    const env = { WEFT_DATABASE_URL: url, WEFT_ENCRYPTION_KEY: "k".repeat(44) };
    server = await startServer({ env });
    const created = await server.fetch("/api/workflows", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: readFileSync(join(import.meta.dir, "../fixtures/examples/webhook-greet-respond.json"), "utf8"),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    expect((await server.fetch(`/api/workflows/${id}/publish`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(
      200,
    );
    const hook = ((await (await server.fetch(`/api/workflows/${id}/trigger`)).json()) as { data: { webhook: { url: string } } }).data.webhook.url;
    const call = async (base: string) => {
      const res = await fetch(hook.replace(/^http:\/\/[^/]+/, base), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"name":"Ada"}',
      });
      return { status: res.status, body: await res.json() };
    };
    expect(await call(server.url)).toEqual({ status: 200, body: { name: "Ada", greeting: "hello Ada" } });

    // Another connection (not the server's) sees the run and its steps.
    // Stored compact (src/store/run-layout.ts): the workflow as its name's key, the status as its code.
    const stored = await client.all<{ id: string; status: number }>(
      "SELECT id, status FROM runs WHERE workflow_id = (SELECT key FROM run_names WHERE name = $1)",
      [id],
    );
    expect(stored).toEqual([{ id: expect.any(String), status: STATUS_CODES.completed }]);
    // As rows or packed into the run's row (a run inserted finished): the store reads both.
    expect((await storageOf(db).runReads.steps(stored[0]!.id)).map((step) => step.status)).toEqual(["completed", "completed"]);

    await server.stop("SIGKILL");
    server = await startServer({ env });
    const runs = (await (await server.fetch(`/api/runs?workflowId=${id}`)).json()) as { data: Array<{ status: string }> };
    expect(runs.data.map((r) => r.status)).toEqual(["completed"]);
    expect(await call(server.url)).toEqual({ status: 200, body: { name: "Ada", greeting: "hello Ada" } });
  }, 60_000);
});
