/**
 * src/store/sqlite/commit-sync.ts: a write through the storage port on a SQLite file commits without an fsync on
 * the calling thread and answers once the WAL is on disk. The fsync is made slow here (a wrapper around the real
 * fs.fdatasync that waits first) to show that the thread serves other work meanwhile, that the answer waits for
 * it, and that one fsync covers the commits made while the one before it ran.
 */
import { afterEach, expect, test } from "bun:test";
import { fdatasync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommitSync } from "../../src/store/sqlite/commit-sync";
import { openDatabase } from "../../src/store/sqlite/db";
import { sqliteStorage } from "../../src/store/sqlite/storage";
import type { InstanceRow } from "../../src/store/instances";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store on a new file whose fsyncs wait `delayMs` first (or fail with `failWith`); `syncs` counts them. */
function store(options: { delayMs?: number; failWith?: string; synchronous?: "FULL" | "NORMAL" } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "weft-commit-sync-"));
  dirs.push(dir);
  const db = openDatabase(join(dir, "weft.db"), { synchronous: options.synchronous ?? "FULL" });
  const syncs = { count: 0 };
  const slow = ((fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
    syncs.count++;
    setTimeout(() => (options.failWith ? done(Object.assign(new Error(options.failWith), { code: "EIO" })) : fdatasync(fd, done)), options.delayMs ?? 0);
  }) as typeof fdatasync;
  const commits = CommitSync.of(db, slow);
  return { db, storage: sqliteStorage(db), syncs, commits };
}

const row = (id: string, at = "2026-11-30T10:00:00.000Z"): InstanceRow => ({
  id,
  hostname: "host",
  pid: 1,
  version: "test",
  role: "all",
  started_at: at,
  heartbeat_at: at,
  pieces: "[]",
});

const synchronous = (db: ReturnType<typeof openDatabase>) => (db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;

test("a write answers once the WAL is synced, and the thread runs other work while the fsync waits", async () => {
  const { db, storage, syncs } = store({ delayMs: 150 });
  const started = performance.now();
  let timerAt: number | undefined;
  setTimeout(() => {
    timerAt = performance.now() - started;
  }, 10);
  await storage.instances.put(row("a"));
  const answeredAt = performance.now() - started;
  expect(syncs.count).toBe(1);
  expect(answeredAt).toBeGreaterThanOrEqual(145);
  // The timer ran while the write waited for its fsync: the thread was not held.
  expect(timerAt).toBeDefined();
  expect(timerAt!).toBeLessThan(answeredAt);
  // The connection is back at FULL for everything else that commits on it.
  expect(synchronous(db)).toBe(2);
  expect((await storage.instances.list()).map((r) => r.id)).toEqual(["a"]);
});

test("a read, and a write that changed no row, answer without waiting for an fsync", async () => {
  const { storage, syncs } = store({ delayMs: 500 });
  const started = performance.now();
  expect(await storage.instances.list()).toEqual([]);
  expect(await storage.instances.beat("nobody", "2026-11-30T10:00:00.000Z")).toBe(false);
  expect(performance.now() - started).toBeLessThan(100);
  expect(syncs.count).toBe(0);
});

test("one fsync covers every commit made while the one before it ran", async () => {
  const { storage, syncs } = store({ delayMs: 60 });
  await Promise.all(Array.from({ length: 10 }, (_, i) => storage.instances.put(row(`i${i}`))));
  // The first commit's fsync, then one for the nine committed while it ran.
  expect(syncs.count).toBe(2);
  expect((await storage.instances.list()).length).toBe(10);
});

test("an fsync that fails fails the write that waited for it, naming the disk", async () => {
  const failing = store({ failWith: "input/output error" });
  await expect(failing.storage.instances.put(row("x"))).rejects.toThrow(/could not be synced to disk: input\/output error/);
  expect(synchronous(failing.db)).toBe(2);
});

test("a call that committed and then failed answers its own failure, and a failing fsync after it is nobody's error", async () => {
  const { db, commits } = store({ failWith: "input/output error" });
  expect(() =>
    commits!.run(() => {
      db.run("INSERT INTO instances (id, hostname, pid, version, role, started_at, heartbeat_at, pieces) VALUES ('f', 'h', 1, 'v', 'all', 'a', 'a', '[]')");
      throw new Error("the call's own failure");
    }),
  ).toThrow("the call's own failure");
  // The fsync that followed failed; nothing waited for it, and no rejection is left unhandled.
  await Bun.sleep(50);
  expect(synchronous(db)).toBe(2);
});

test("a unit of work answers after its commit is synced; a unit rolled back answers its own error at once", async () => {
  const { storage, syncs } = store({ delayMs: 120 });
  const started = performance.now();
  await storage.atomically(async (unit) => {
    await unit.instances.put(row("u1"));
    await unit.instances.put(row("u2"));
  });
  expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  expect(syncs.count).toBe(1);
  const failedAt = performance.now();
  await expect(
    storage.atomically(async (unit) => {
      await unit.instances.put(row("u3"));
      throw new Error("the unit's own refusal");
    }),
  ).rejects.toThrow("the unit's own refusal");
  expect(performance.now() - failedAt).toBeLessThan(100);
  expect((await storage.instances.list()).map((r) => r.id).sort()).toEqual(["u1", "u2"]);
});

test("a connection that does not fsync its commits is left as it is: in memory, or at synchronous=NORMAL", () => {
  expect(CommitSync.of(openDatabase(":memory:"))).toBeNull();
  expect(store({ synchronous: "NORMAL" }).commits).toBeNull();
});
