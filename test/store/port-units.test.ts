/**
 * Units of work on the storage port (`storage.atomically`, src/store/port.ts): a refusal inside one comes out
 * as Weft's StorageError with its kind and leaves nothing the unit wrote; a unit holds its connection, so on
 * SQLite a call from outside the unit waits for it instead of joining its transaction. Runs on SQLite, and
 * on PostgreSQL under `npm run test:postgres`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StorageError } from "../../src/lib/storage-error";
import type { Db } from "../../src/store/db";
import { openDatabase } from "../../src/store/sqlite/db";
import { storageOf } from "../../src/store/storage";
import { freshPostgresDatabase, testStorage } from "../support/postgres-storage";
import { runRow } from "../support/run-rows";

const dir = mkdtempSync(join(tmpdir(), "weft-port-units-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openStoreDb(): Promise<Db> {
  return testStorage() === "postgres" ? (await freshPostgresDatabase()).db : openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: "NORMAL" });
}

const at = "2026-11-29T00:00:00.000Z";

describe(`units of work on the storage port (${testStorage()})`, () => {
  test("a unique key refused inside a unit: StorageError 'unique', and none of the unit's writes are kept", async () => {
    const storage = storageOf(await openStoreDb());
    await storage.identity.insertOrg({ id: "org-1", name: "One", created_at: at });
    const thrown = await storage
      .atomically(async (unit) => {
        await unit.networkRanges.insert({ cidr: "10.0.0.0/8", added_by: "test", added_at: at });
        await unit.identity.insertOrg({ id: "org-2", name: "Two", created_at: at });
        await unit.identity.insertOrg({ id: "org-1", name: "Again", created_at: at });
      })
      .catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(StorageError);
    expect((thrown as StorageError).kind).toBe("unique");
    expect(await storage.networkRanges.list()).toEqual([]);
    expect((await storage.identity.firstOrg())?.id).toBe("org-1");
    expect(await storage.identity.workspacesOfOrg("org-2")).toEqual([]);
  });

  test("a foreign key refused inside a unit: 'foreign_key'; an error of the caller's is thrown as it is, and rolls back too", async () => {
    const storage = storageOf(await openStoreDb());
    const orphan = await storage
      .atomically((unit) => unit.identity.insertWorkspace({ id: "ws-1", org_id: "no-such-org", name: "W", created_at: at }))
      .catch((error: unknown) => error);
    expect((orphan as StorageError).kind).toBe("foreign_key");
    const mine = new Error("the caller changed its mind");
    const thrown = await storage
      .atomically(async (unit) => {
        await unit.networkRanges.insert({ cidr: "192.168.0.0/16", added_by: "test", added_at: at });
        throw mine;
      })
      .catch((error: unknown) => error);
    expect(thrown).toBe(mine);
    expect(await storage.networkRanges.list()).toEqual([]);
  });

  test("a call from outside a unit waits for it to commit, and units take turns; a nested unit joins its caller", async () => {
    const storage = storageOf(await openStoreDb());
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => {
      wrote = resolve;
    });
    const first = storage.atomically(async (unit) => {
      await unit.networkRanges.insert({ cidr: "10.1.0.0/16", added_by: "first", added_at: at });
      await unit.atomically((inner) => inner.networkRanges.insert({ cidr: "10.2.0.0/16", added_by: "nested", added_at: at }));
      order.push("first wrote");
      wrote();
      await held;
      order.push("first ends");
    });
    // Asked for once the first holds its turn (two units asked for at the same moment take turns in either order).
    await written;
    const second = storage.atomically(async (unit) => {
      order.push(`second sees ${(await unit.networkRanges.list()).length}`);
    });
    await Bun.sleep(50);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["first wrote", "first ends", "second sees 2"]);
  });

  test("a run inserted in a unit is stored with it or not at all; what waits for the commit runs after it, never after a rollback", async () => {
    const storage = storageOf(await openStoreDb());
    const definition = { hash: "def-1", text: JSON.stringify({ trigger: { type: "manual" }, steps: [] }) };
    const heard: string[] = [];
    await storage.atomically(async (unit) => {
      await unit.runInserts.insert(runRow("run-kept", { definition_hash: definition.hash }), definition);
      unit.afterCommit(() => heard.push("kept committed"));
      heard.push("kept written");
    });
    const dropped = await storage
      .atomically(async (unit) => {
        await unit.runInserts.insert(runRow("run-dropped", { definition_hash: "def-2" }), { hash: "def-2", text: "{}" });
        unit.afterCommit(() => heard.push("dropped committed"));
        throw new Error("the trigger changed its mind");
      })
      .catch((error: Error) => error.message);
    expect(dropped).toBe("the trigger changed its mind");
    expect(heard).toEqual(["kept written", "kept committed"]);
    expect((await storage.runReads.getRow("run-kept"))?.workflow_id).toBe(runRow("x").workflow_id);
    expect(await storage.runReads.definition(definition.hash)).toBe(definition.text);
    expect(await storage.runReads.has("run-dropped")).toBe(false);
    expect(await storage.runReads.definition("def-2")).toBeNull();
  });
});
