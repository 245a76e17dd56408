/**
 * The run reader's threads give way to the serving thread (src/lib/thread-priority.ts): on Linux each reader
 * thread runs at nice 10, the thread that serves HTTP stays at 0, so 20 list reads on two busy cores do not
 * keep /healthz or a webhook waiting for a core. Read from /proc: what the kernel schedules by, per thread.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BACKGROUND_NICE } from "../../src/lib/thread-priority";
import { openDatabase } from "../../src/store/sqlite/db";
import { openRunReads } from "../../src/store/run-reads";

const dir = mkdtempSync(join(tmpdir(), "weft-reader-priority-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Each thread of this process: its id and nice value (field 19 of /proc/…/stat, after the command's parenthesis).
 * A thread that ends between the listing and the read (an I/O pool's idle thread) is left out.
 */
function threads(): Array<{ tid: number; nice: number }> {
  return readdirSync("/proc/self/task").flatMap((tid) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      return [];
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [{ tid: Number(tid), nice: Number(fields[16]) }];
  });
}

test.skipIf(process.platform !== "linux")("a reader thread runs at a lower priority than the serving thread", async () => {
  const before = new Set(threads().map((t) => t.tid));
  const file = join(dir, "weft.db");
  const db = openDatabase(file);
  const reads = openRunReads(db, file, { threads: 2, synchronous: "FULL" });
  try {
    expect(await reads.stepsBounded("no-such-run", 10)).toEqual({ steps: [], omitted: 0 });
    const started = threads().filter((t) => !before.has(t.tid));
    // The reader thread is new and yields; the serving thread (this one: its id is the process's) does not.
    expect(started.filter((t) => t.nice === BACKGROUND_NICE).length).toBeGreaterThanOrEqual(1);
    expect(threads().find((t) => t.tid === process.pid)?.nice).toBe(0);
  } finally {
    await reads.close();
    db.close();
  }
});
