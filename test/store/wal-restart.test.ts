/**
 * The inline run writer's WAL under steady load (src/store/run-writes.ts, InlineWriter.restartWal; the copying is
 * checkpoint-thread.ts's): commits never stop long enough for the background checkpoint to catch the last
 * frames, so without the writer's pause the WAL would grow with every run written. With it the file stops
 * growing near the restart limit (4,000 frames, ~16 MB) plus what arrives until the checkpointer catches up.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db";
import { InlineWriter } from "../../src/store/run-writes";
import { runRow } from "../support/run-rows";

test("under writes that never pause the WAL restarts instead of growing, and every write is stored", async () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-wal-"));
  const path = join(dir, "weft.db");
  openDatabase(path, { synchronous: "FULL" }).close();
  const errors: unknown[] = [];
  const db = openDatabase(path, { synchronous: "FULL", migrate: false, cacheKiB: 2_000 });
  const writer = new InlineWriter(db, (error) => errors.push(error), { syncWal: `${path}-wal`, ownsDb: true });
  // ~2 KB of trigger data a run: 60,000 runs write ~30,000 pages, several times the limit.
  const data = JSON.stringify({ text: "x".repeat(2_000) });
  const RUNS = 60_000;
  let written = 0;
  let largest = 0;
  // 50 writers that each wait for their commit, like webhooks: a commit is always in flight.
  await Promise.all(
    Array.from({ length: 50 }, async (_, lane) => {
      for (let i = lane; i < RUNS; i += 50) {
        await writer.write([{ op: "insertRun", row: runRow(`r${i}`, { trigger_data: data }) }]);
        if (++written % 1_000 === 0) largest = Math.max(largest, statSync(`${path}-wal`).size);
      }
    }),
  );
  await writer.close();
  const check = openDatabase(path, { synchronous: "FULL", migrate: false });
  expect((check.query("SELECT count(*) AS n FROM runs").get() as { n: number }).n).toBe(RUNS);
  check.close();
  expect(errors).toEqual([]);
  // Without the restart the WAL holds every frame written: ~350 MB here. With it, ~40 MB on 2 cores: the limit
  // plus the frames committed until the checkpointer next counts them (every 100 ms) and catches up.
  expect(largest).toBeLessThan(120 * 1024 * 1024);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);
