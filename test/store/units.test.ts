/**
 * Units of work (`storage.atomically`, src/store/port.ts) take turns across processes on PostgreSQL, as SQLite's writers
 * do: what a unit reads cannot change before it writes. Three processes append to one list of the workspace
 * key-value store at once (`ctx.store.append`: read the list, write it back longer, in one unit) and no item
 * is lost. Needs a real PostgreSQL server (the Debian package postgresql).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Identity } from "../../src/core/identity";
import { storageOf } from "../../src/store/storage";
import { workspaceKv } from "../../src/store/kv";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";

announceMissingPostgres();

/** The same writer on the storage port: its append is a unit of the port (`workspaceKv`). */
const PORT_WRITER = `
import { openPool } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/postgres/connection.ts"))};
import { postgresStorage } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/postgres/storage.ts"))};
import { workspaceKv } from ${JSON.stringify(resolve(import.meta.dir, "../../src/store/kv.ts"))};
const [url, workspaceId, me, startAt, count] = process.argv.slice(2);
const store = workspaceKv(postgresStorage(openPool(url, 2)), workspaceId);
await Bun.sleep(Number(startAt) - Date.now());
for (let i = 0; i < Number(count); i++) await store.append("log", me + ":" + i);
process.exit(0);
`;

describe.skipIf(!postgresBinaries())("units of work on PostgreSQL, three processes at once", () => {
  test("appends through the storage port from three processes lose no item", async () => {
    const { db, url } = await freshPostgresDatabase();
    const storage = storageOf(db);
    const { workspaceId } = await new Identity(storage).ensureOrg();
    const script = join(mkdtempSync(join(tmpdir(), "weft-units-")), "port-writer.ts");
    writeFileSync(script, PORT_WRITER);
    const count = 150;
    const startAt = Date.now() + 1_000;
    const writers = ["a", "b", "c"].map((me) =>
      Bun.spawn([process.execPath, script, url, workspaceId, me, String(startAt), String(count)], { stderr: "inherit" }),
    );
    expect(await Promise.all(writers.map((writer) => writer.exited))).toEqual([0, 0, 0]);
    const log = (await workspaceKv(storage, workspaceId).get("log")) as string[];
    expect(log).toHaveLength(3 * count);
    for (const me of ["a", "b", "c"]) expect(log.filter((item) => item.startsWith(`${me}:`))).toEqual(Array.from({ length: count }, (_, i) => `${me}:${i}`));
  }, 30_000);
});
