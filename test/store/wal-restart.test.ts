/**
 * The inline run writer's WAL under steady load (src/store/sqlite/run-writers.ts, InlineWriter.restartWal; the
 * copying is checkpoint-thread.ts's): commits never stop long enough for the background checkpoint to catch the last
 * frames, so without the writer's pause the WAL would grow with every run written. With it the file stops
 * growing near the restart limit (4,000 frames, ~16 MB) plus what arrives until the checkpointer catches up.
 * While it catches up new commits are held — never for good: the thread's answer, its stop, or the wait's
 * limit (2 s) ends the hold, and nothing held is lost.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db";
import { InlineWriter } from "../../src/store/sqlite/run-writers";
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

/** The writer's checkpointer and its count of the WAL's frames, which these tests steer. */
type Steered = { checkpointer?: Worker; walFrames: number };

async function inlineWriter() {
  const dir = mkdtempSync(join(tmpdir(), "weft-wal-"));
  const path = join(dir, "weft.db");
  openDatabase(path, { synchronous: "FULL" }).close();
  const errors: unknown[] = [];
  const writer = new InlineWriter(openDatabase(path, { synchronous: "FULL", migrate: false }), (error) => errors.push(error), {
    syncWal: `${path}-wal`,
    ownsDb: true,
  });
  await writer.write([{ op: "insertRun", row: runRow("first") }]); // starts the checkpointer
  const steered = writer as unknown as Steered;
  expect(steered.checkpointer).toBeDefined();
  const count = () => {
    const db = openDatabase(path, { synchronous: "FULL", migrate: false });
    const n = (db.query("SELECT count(*) AS n FROM runs").get() as { n: number }).n;
    db.close();
    return n;
  };
  return { writer, steered, errors, count, dir };
}

/**
 * The writer sees its WAL past the restart limit until it asks for the restart (setting its count to 0); the
 * counts the checkpointer thread reports meanwhile are ignored, so the ask comes with the next commit.
 */
function pastRestartLimit(steered: Steered) {
  let asked = false;
  Object.defineProperty(steered, "walFrames", {
    configurable: true,
    get: () => (asked ? 0 : 1e9),
    set: (frames: number) => {
      if (frames === 0) asked = true;
    },
  });
}

const settled = (promise: Promise<unknown>) => {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
};

test("commits held for a restart the checkpointer never answers go on after the wait's limit, none lost", async () => {
  const { writer, steered, errors, count, dir } = await inlineWriter();
  // A checkpointer that hears nothing (as if its thread hung in a checkpoint).
  steered.checkpointer!.postMessage = () => {};
  pastRestartLimit(steered);
  await writer.write([{ op: "insertRun", row: runRow("a") }]); // committed; then the restart is asked for
  const b = writer.write([{ op: "insertRun", row: runRow("b") }]);
  const bDone = settled(b);
  await Bun.sleep(500);
  expect(bDone()).toBe(false); // held: a commit now would add frames the checkpointer must copy
  await b;
  expect(count()).toBe(3);
  await writer.close();
  expect(errors).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
}, 10_000);

test("stopping the checkpointer during a restart lets held commits go at once; closing then loses nothing", async () => {
  const { writer, steered, errors, count, dir } = await inlineWriter();
  steered.checkpointer!.postMessage = () => {};
  pastRestartLimit(steered);
  await writer.write([{ op: "insertRun", row: runRow("a") }]);
  const b = writer.write([{ op: "insertRun", row: runRow("b") }]);
  const bDone = settled(b);
  await Bun.sleep(100);
  expect(bDone()).toBe(false);
  writer.stopCheckpointer(); // as the adaptive writer does when the writer thread takes over
  const c = writer.write([{ op: "insertRun", row: runRow("c") }]);
  await Promise.race([Promise.all([b, c]), Bun.sleep(1_000).then(() => Promise.reject(new Error("held commits did not go on")))]);
  await writer.close();
  expect(count()).toBe(4);
  expect(errors).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
}, 10_000);

test("the checkpointer's answer ends the hold: a restart asked for returns the writer to committing", async () => {
  const { writer, steered, errors, count, dir } = await inlineWriter();
  pastRestartLimit(steered);
  await writer.write([{ op: "insertRun", row: runRow("a") }]);
  // The thread answers `finish` long before the wait's limit (2 s).
  await Promise.race([
    writer.write([{ op: "insertRun", row: runRow("b") }]),
    Bun.sleep(1_500).then(() => Promise.reject(new Error("no answer from the checkpointer"))),
  ]);
  await writer.close();
  expect(count()).toBe(3);
  expect(errors).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
}, 10_000);
