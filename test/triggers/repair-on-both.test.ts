/**
 * The triggers' start-up repair (`triggers.reconcile`) on the app's own database — SQLite, and PostgreSQL
 * under `npm run test:postgres` (the trigger harness of the other files here runs on SQLite only): a schedule
 * row whose workflow is no longer live (its unpublish hook never finished) is deleted, the rows of live
 * workflows are kept. On PostgreSQL the stale ids go to the database as JSON text: a JSON parameter sent
 * without `::text` first arrived as a JSON string, and `weft serve` on a copied database stopped at start-up.
 */
import { describe, expect, test } from "bun:test";
import { testApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { testStorage } from "../support/postgres-storage";

const schedule = (name: string) => ({
  name,
  definition: {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "cron",
      pieceId: "schedule",
      actionId: "cron",
      config: { expression: "0 * * * *", timezone: "UTC" },
      nextAction: { name: "note", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { a: 1 } } },
    },
  },
});

describe(`the triggers' start-up repair (${testStorage()})`, () => {
  test("a schedule row of a workflow no longer live is deleted; a live one's is kept", async () => {
    const t = await testApp();
    const ids: string[] = [];
    for (const name of ["kept", "stale"]) {
      const created = await t.req("POST", "/api/workflows", { body: schedule(name) });
      expect(created.status).toBe(201);
      expect((await t.req("POST", `/api/workflows/${created.body.data.id}/publish`)).status).toBe(200);
      ids.push(created.body.data.id);
    }
    const [kept, stale] = ids as [string, string];
    expect(await t.deps.storage.triggers.schedules.get(stale)).not.toBeNull();
    // Unpublished behind the hooks' back, as an unpublish whose hook never finished leaves it.
    await appSql(t).run("UPDATE workflows SET status = 'inactive' WHERE id = ?", [stale]);
    await t.deps.triggers.reconcile();
    expect(await t.deps.storage.triggers.schedules.get(stale)).toBeNull();
    expect(await t.deps.storage.triggers.schedules.get(kept)).not.toBeNull();
  });
});
