/**
 * A cluster's claims on runs through the storage port (src/store/run-claims.ts): on PostgreSQL awaited on
 * the pool, each run taken by one instance however many claim at once; rows come back with their names, as
 * the engine recovers them. Runs on SQLite, and on PostgreSQL under `npm run test:postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/store/db";
import { openDatabase } from "../../src/store/sqlite/db";
import type { RunRow } from "../../src/store/run-rows";
import { storageOf } from "../../src/store/storage";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";
import { runRow } from "../support/run-rows";

const dir = mkdtempSync(join(tmpdir(), "weft-run-claims-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

/**
 * `n` unfinished runs held by `owner`, ids r00…, and one finished run; `also` sets more columns of some of them.
 * Inserted through the port (src/store/run-inserts.ts), which stores them in each database's layout.
 */
async function seed(db: Db, n: number, owner: string | null, status: "pending" | "running" | "paused" = "running", also: Record<string, Partial<RunRow>> = {}) {
  const runs = storageOf(db).runInserts;
  const definition = { hash: "h1", text: "{}" };
  for (let i = 0; i < n; i++) {
    const id = `r${String(i).padStart(2, "0")}`;
    await runs.insert(runRow(id, { status, finished_at: null, duration_ms: null, owner, workflow_id: "wf-claimed", ...also[id] }), definition);
  }
  await runs.insert(runRow("done", { owner }), definition);
}

/** The ids of claimed rows, sorted: an UPDATE … RETURNING answers in no particular order. */
const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id).sort();

describe(`claims on runs (${testStorage()})`, () => {
  test("unfinished runs of a dead instance are taken oldest id first, with their names; finished ones never", async () => {
    const db = await openStoreDb();
    await seed(db, 5, "dead");
    const claims = storageOf(db).runClaims;
    expect(await claims.unfinishedHolders()).toEqual({ owners: ["dead"], unowned: false });
    const first = await claims.claim("me", "dead", 3);
    expect(ids(first)).toEqual(["r00", "r01", "r02"]);
    expect(first.find((row) => row.id === "r00")).toMatchObject({
      owner: "me",
      status: "running",
      workflow_id: "wf-claimed",
      workspace_id: "ws",
      environment: "production",
    });
    expect(ids(await claims.claim("me", "dead", 10))).toEqual(["r03", "r04"]);
    expect(await claims.claim("me", "dead", 10)).toEqual([]);
    expect(await claims.unfinishedHolders()).toEqual({ owners: ["me"], unowned: false });
  });

  test("the shared queue: skipped ids and ids at or below the cursor are left; a released run is nobody's again", async () => {
    const db = await openStoreDb();
    await seed(db, 4, null, "pending");
    const claims = storageOf(db).runClaims;
    expect(await claims.unfinishedHolders()).toEqual({ owners: [], unowned: true });
    expect(ids(await claims.claim("me", null, 10, ["r01"], "r00"))).toEqual(["r02", "r03"]);
    await claims.release("r02", "me");
    await claims.release("r03", "someone-else"); // not theirs: stays mine
    expect(ids(await claims.claim("other", null, 10))).toEqual(["r00", "r01", "r02"]);
  });

  test("two instances claiming at once never take the same run", async () => {
    const db = await openStoreDb();
    await seed(db, 40, "dead");
    const claims = storageOf(db).runClaims;
    const [a, b] = await Promise.all([claims.claim("a", "dead", 25), claims.claim("b", "dead", 25)]);
    const taken = [...a, ...b].map((row) => row.id);
    expect(new Set(taken).size).toBe(taken.length);
    expect(taken.length).toBe(40);
  });

  test("a paused run resumes once: by its link's token (spent), or from its owner; a dead instance's run is taken once", async () => {
    const db = await openStoreDb();
    // r00 was paused with a link: its token's hash is stored with it.
    await seed(db, 2, "dead", "paused", { r00: { resume_token_hash: "hash" } });
    const claims = storageOf(db).runClaims;
    expect(await claims.takePaused("r00", "a", { tokenHash: "hash" })).toBe(true);
    expect(await claims.takePaused("r00", "b", { tokenHash: "hash" })).toBe(false);
    expect(await claims.takePaused("r01", "b", { owner: "someone" })).toBe(false);
    expect(await claims.takePaused("r01", "b", { owner: "dead" })).toBe(true);
    expect(await claims.takeRun("r01", "c", "dead")).toBe(false);
    expect(await claims.takeRun("r01", "c", "b")).toBe(true);
    expect(await claims.takeRun("done", "c", "dead")).toBe(false);
  });
});
