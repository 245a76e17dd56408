/**
 * The adaptive run writer (src/store/sqlite/adaptive-writer.ts), against a real database file: writes made around a
 * switch are committed in call order and all resolve; a definition pruned through one connection is stored
 * again by the other; the main thread's CPU share and the writes per commit move the commits to the thread and back; retention's
 * maintenance goes to the thread, which keeps the commits a while after it; the share is measured over at least SAMPLE_MS, from the thread's own CPU time;
 * a write after the inline side closed fails alone.
 */
import { afterEach, expect, spyOn, test } from "bun:test";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AdaptiveWriter,
  type AdaptiveWriterOptions,
  MAINTENANCE_HOLD_MS,
  mainThreadLoad,
  SAMPLE_MS,
  THREAD_MIN_WRITES,
  THREAD_WARM_MS,
  threadCpuMs,
  type WriterMode,
} from "../../src/store/sqlite/adaptive-writer";
import { openDatabase } from "../../src/store/sqlite/db";
import type { Db } from "../../src/store/db";
import { InlineWriter, ThreadWriter } from "../../src/store/sqlite/run-writers";
import { RunStore } from "../../src/store/sqlite/run-store";
import type { RunRow } from "../../src/store/run-rows";
import { runRow, stepRow } from "../support/run-rows";

const open: Array<{ writer: AdaptiveWriter; db: Db }> = [];
afterEach(async () => {
  for (const { writer, db } of open.splice(0)) {
    await writer.close();
    db.close();
  }
});

/**
 * As the engine makes it for a database file at synchronous=FULL (the inline side: a connection of its own that
 * syncs the WAL itself); starting on the thread unless told otherwise, so each switch below is one.
 */
function setup(options: AdaptiveWriterOptions = { load: () => undefined }, makeInline?: () => InlineWriter) {
  const path = join(mkdtempSync(join(tmpdir(), "weft-adaptive-")), "weft.db");
  const db = openDatabase(path, { synchronous: "FULL" });
  const errors: unknown[] = [];
  const onError = (error: unknown) => errors.push(error);
  const writer = new AdaptiveWriter(
    makeInline ??
      (() => new InlineWriter(openDatabase(path, { synchronous: "FULL", migrate: false, cacheKiB: 2_000 }), onError, { syncWal: `${path}-wal`, ownsDb: true })),
    new ThreadWriter({ dbPath: path, synchronous: "FULL" }, onError),
    { start: "thread", ...options },
  );
  open.push({ writer, db });
  return { db, writer, errors, path };
}

const running = (id: string, hash = "h1"): RunRow => ({ ...runRow(id, { definition_hash: hash }), status: "running", finished_at: null, duration_ms: null });
const definitionOf = (db: Db, hash: string) =>
  (db.query("SELECT definition FROM run_definitions WHERE hash = ?").get(hash) as { definition: string } | null)?.definition;

test("writes made while the writer switches are committed in call order, and each resolves once", async () => {
  const { db, writer, errors } = setup();
  expect(writer.current).toBe("thread");
  const done: string[] = [];
  const writes: Array<Promise<void>> = [];
  const write = (label: string, ops: Parameters<AdaptiveWriter["write"]>[0]) => writes.push(writer.write(ops).then(() => void done.push(label)));
  for (let round = 0; round < 6; round++) {
    const id = `r${round}`;
    write(`${id} inserted`, [
      { op: "putDefinition", hash: "h1", text: '{"trigger":{}}' },
      { op: "insertRun", row: running(id) },
      { op: "insertStep", row: stepRow(id, { status: "running", finished_at: null, output_data: null }) },
    ]);
    // Switched between a run's insert and the ops that finish it: they must land after the insert.
    const switched = writer.switchTo(round % 2 === 0 ? "inline" : "thread");
    write(`${id} finished`, [
      { op: "updateStep", row: stepRow(id) },
      { op: "patchRun", id, patch: { status: "completed", finished_at: "2026-11-22T00:00:00.001Z", duration_ms: 1 } },
    ]);
    await switched;
  }
  await Promise.all(writes);
  await writer.drain();
  expect(errors).toEqual([]);
  expect(writer.switches).toBe(6);
  expect(done.length).toBe(12);
  const store = new RunStore(db);
  for (let round = 0; round < 6; round++) {
    const id = `r${round}`;
    expect(done.indexOf(`${id} inserted`)).toBeLessThan(done.indexOf(`${id} finished`));
    expect(store.getRow(id)).toMatchObject({ status: "completed", duration_ms: 1 });
    expect(store.steps(id)).toEqual([stepRow(id)]);
  }
  expect(writer.pending).toBe(0);
});

test("writes made by code that resumes while a switch ends keep their order (held ones first)", async () => {
  const { db, writer, errors } = setup();
  await writer.switchTo("inline");
  const inserted = writer.write([{ op: "insertRun", row: running("r") }]);
  const switched = writer.switchTo("thread"); // waits for the insert's commit
  // As a run does: its continuation writes while the switch is held, awaits, then writes again.
  const steps = inserted.then(async () => {
    writer.fire({ op: "insertStep", row: stepRow("r", { status: "running", finished_at: null, output_data: null }) });
    await null;
    writer.fire({ op: "updateStep", row: stepRow("r") });
    await null;
    writer.fire({ op: "patchRun", id: "r", patch: { status: "completed", finished_at: "2026-11-22T00:00:00.001Z", duration_ms: 1 } });
  });
  await Promise.all([steps, switched]);
  await writer.drain();
  expect(errors).toEqual([]);
  expect(writer.current).toBe("thread");
  const store = new RunStore(db);
  expect(store.steps("r")).toEqual([stepRow("r")]);
  expect(store.getRow("r")).toMatchObject({ status: "completed" });
});

test("a main-thread connection that cannot open leaves the thread committing, and says why", async () => {
  const errors: unknown[] = [];
  const path = join(mkdtempSync(join(tmpdir(), "weft-adaptive-")), "weft.db");
  const db = openDatabase(path, { synchronous: "FULL" });
  const writer = new AdaptiveWriter(
    () => {
      throw new Error("EMFILE: too many open files");
    },
    new ThreadWriter({ dbPath: path, synchronous: "FULL" }, (error) => errors.push(error)),
    { load: () => undefined, onError: (error) => errors.push(error), start: "thread" },
  );
  open.push({ writer, db });
  await writer.switchTo("inline");
  expect(writer.current).toBe("thread");
  expect(String(errors[0])).toContain("EMFILE");
  await writer.write([{ op: "insertRun", row: runRow("a") }]);
  expect(new RunStore(db).getRow("a")).toMatchObject({ id: "a" });
});

test("it starts inline and loads the thread THREAD_WARM_MS after the start; a main-thread connection that cannot open leaves the thread committing", async () => {
  const { db, writer, errors } = setup({ load: () => undefined, start: undefined });
  expect(writer.current).toBe("inline"); // as the server starts: idle
  const warmed = spyOn(ThreadWriter.prototype, "warm");
  try {
    writer.warm();
    await writer.write([{ op: "insertRun", row: runRow("a") }]);
    expect(writer.current).toBe("inline");
    expect(new RunStore(db).getRow("a")).toMatchObject({ id: "a" });
    expect(warmed).not.toHaveBeenCalled(); // not while the server starts
    await Bun.sleep(THREAD_WARM_MS + 300);
    expect(warmed).toHaveBeenCalledTimes(1);
  } finally {
    warmed.mockRestore();
  }
  await writer.switchTo("thread");
  await writer.write([{ op: "insertRun", row: runRow("b") }]);
  expect(new RunStore(db).getRow("b")).toMatchObject({ id: "b" });
  expect(errors).toEqual([]);

  const failing = setup({ load: () => undefined, onError: (error) => failing.errors.push(error), start: undefined }, () => {
    throw new Error("EMFILE: too many open files");
  });
  await failing.writer.write([{ op: "insertRun", row: runRow("c") }]);
  expect(failing.writer.current).toBe("thread");
  expect(String(failing.errors[0])).toContain("EMFILE");
  expect(new RunStore(failing.db).getRow("c")).toMatchObject({ id: "c" });
});

test("a definition pruned through one connection is stored again by the other", async () => {
  const { db, writer } = setup();
  const text = (hash: string) => JSON.stringify({ trigger: { name: hash, padding: "x".repeat(5_000) } });
  const insert = (id: string, hash: string) =>
    writer.write([
      { op: "putDefinition", hash, text: text(hash) },
      { op: "insertRun", row: runRow(id, { definition_hash: hash }) },
    ]);
  // Each side learns its definition, the other side deletes every run of it and prunes it, then the first
  // side stores a run of it again: it must not take the definition for stored.
  for (const [first, second, hash] of [
    ["thread", "inline", "h-thread"],
    ["inline", "thread", "h-inline"],
  ] as Array<[WriterMode, WriterMode, string]>) {
    await writer.switchTo(first);
    await insert(`${hash}-1`, hash);
    await writer.switchTo(second);
    db.run("DELETE FROM runs WHERE id = ?", [`${hash}-1`]); // as retention's deletion would (below: on the thread)
    await writer.write([{ op: "pruneDefinitions" }]);
    expect(writer.current).toBe(second);
    expect(definitionOf(db, hash)).toBeUndefined();
    await writer.switchTo(first);
    await insert(`${hash}-2`, hash);
    expect(definitionOf(db, hash)).toBe(text(hash));
    expect(new RunStore(db).getRow(`${hash}-2`)).toMatchObject({ definition_hash: hash });
  }
});

test("a busy main thread moves the commits to the writer thread while many writes wait together; an idle one brings them back", async () => {
  const readings: Array<number | undefined> = [];
  const switches: Array<[WriterMode, number | undefined]> = [];
  const { db, writer } = setup({ load: () => readings.shift(), onSwitch: (mode, load) => switches.push([mode, load]) });
  const insert = (id: string) => writer.write([{ op: "insertRun", row: runRow(id) }]);
  /** `n` writes made together: the writer takes them in one batch. */
  const together = (prefix: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => insert(`${prefix}${i}`)));

  expect(writer.current).toBe("thread");
  await together("t", THREAD_MIN_WRITES);
  readings.push(0.5); // the thread takes work off the main thread, and has company: stays
  await insert("a");
  expect(writer.current).toBe("thread");
  readings.push(0.2);
  await insert("b"); // held until the thread drained, then committed inline
  expect(writer.current).toBe("inline");
  readings.push(0.6); // busy, but below the threshold: stays inline
  await insert("c");
  expect(writer.current).toBe("inline");
  readings.push(0.95); // busy, but its writes came one at a time (a few requests taking turns): stays inline
  await insert("d");
  expect(writer.current).toBe("inline");
  await together("e", 2 * THREAD_MIN_WRITES);
  readings.push(0.95); // busy with many writes a commit: the thread takes them
  await insert("f");
  expect(writer.current).toBe("thread");
  await insert("g");
  readings.push(0.6); // not idle, but the thread's commits are of one write each: back inline
  await insert("h");
  expect(writer.current).toBe("inline");
  expect(switches).toEqual([
    ["inline", 0.2],
    ["thread", 0.95],
    ["inline", 0.6],
  ]);
  expect((db.query("SELECT count(*) AS n FROM runs").get() as { n: number }).n).toBe(3 * THREAD_MIN_WRITES + 7);
});

test("retention's deletions and the WAL's truncation are done by the thread, whatever the load", async () => {
  const readings: Array<number | undefined> = [];
  let clock = 0;
  const { db, writer, path } = setup({ load: () => readings.shift(), now: () => clock });
  await writer.switchTo("inline");
  await writer.write([
    { op: "insertRun", row: runRow("a") },
    { op: "insertRun", row: runRow("b") },
  ]);
  expect(writer.current).toBe("inline");
  await writer.write([{ op: "deleteRuns", ids: ["a"] }]);
  expect(writer.current).toBe("thread");
  expect(new RunStore(db).getRow("a")).toBeNull();
  // The main thread is idle between a sweep's batches: the thread keeps the commits a while all the same.
  clock += MAINTENANCE_HOLD_MS - 1;
  readings.push(0.1);
  await writer.write([{ op: "insertRun", row: runRow("c") }]);
  expect(writer.current).toBe("thread");
  clock += 1;
  readings.push(0.1);
  await writer.write([{ op: "insertRun", row: runRow("d") }]);
  expect(writer.current).toBe("inline");
  await writer.switchTo("inline");
  await writer.write([{ op: "insertRun", row: runRow("e") }]); // something in the WAL
  expect(await writer.truncateWal()).toBe(true);
  expect(writer.current).toBe("thread");
  expect(statSync(`${path}-wal`).size).toBe(0);
  await writer.switchTo("inline");
  writer.fire({ op: "returnFreePages", pages: 10 });
  await writer.drain();
  expect(writer.current).toBe("thread");
  expect(new RunStore(db).getRow("b")).toMatchObject({ id: "b" });
  // A deletion made while a switch to inline drains turns it back: the thread does it.
  const toInline = writer.switchTo("inline");
  const deleted = writer.write([{ op: "deleteRuns", ids: ["b"] }]);
  await Promise.all([toInline, deleted]);
  expect(writer.current).toBe("thread");
  expect(new RunStore(db).getRow("b")).toBeNull();
});

test("a write made after the inline writer closed fails alone: nothing starts on its closed connection", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "weft-inline-")), "weft.db");
  openDatabase(path, { synchronous: "FULL" }).close();
  const errors: unknown[] = [];
  const writer = new InlineWriter(openDatabase(path, { synchronous: "FULL", migrate: false }), (error) => errors.push(error), {
    syncWal: `${path}-wal`,
    ownsDb: true,
  });
  await writer.write([{ op: "insertRun", row: runRow("before") }]);
  await writer.close();
  const late = await writer.write([{ op: "insertRun", row: runRow("after") }]).then(
    () => "committed",
    (error: Error) => error.message,
  );
  expect(late).toContain("closed");
  // A WAL checkpointer started by that write would answer within this; its answer used the closed connection.
  await Bun.sleep(500);
  const db = openDatabase(path, { synchronous: "FULL", migrate: false });
  expect((db.query("SELECT count(*) AS n FROM runs").get() as { n: number }).n).toBe(1);
  db.close();
  expect(errors).toEqual([]);
});

test("the main thread's CPU share is measured over at least SAMPLE_MS from its own CPU time", () => {
  let cpu = 1_000;
  let clock = 0;
  const load = mainThreadLoad(
    () => cpu,
    () => clock,
  );
  expect(load()).toBeUndefined(); // the first reading has nothing to compare with
  clock += SAMPLE_MS - 1;
  cpu += 100;
  expect(load()).toBeUndefined(); // too soon
  clock += 1;
  expect(load()).toBeCloseTo(100 / SAMPLE_MS);
  clock += 1_000;
  cpu += 900;
  expect(load()).toBeCloseTo(0.9);
  clock += 2_000;
  expect(load()).toBe(0);

  // On Linux the real reading is this thread's time, which grows while it computes (10 ms ticks).
  const before = threadCpuMs();
  if (before === undefined) return; // not Linux: the engine uses the writer thread alone
  // Spins until the reading moves (a loaded machine may give this thread little CPU at first), at most 5 s.
  const until = performance.now() + 5_000;
  let now = before;
  while (now < before + 20 && performance.now() < until) now = threadCpuMs()!;
  expect(now).toBeGreaterThanOrEqual(before + 20);
});
