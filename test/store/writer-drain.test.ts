/**
 * What a read of runs waits for (src/store/run-writes.ts, QueueingWriter.drainRuns): every queued write of
 * runs and steps, but not retention's upkeep (deletions, the definitions' prune, returning free pages), which
 * on PostgreSQL can take longer than a request should wait.
 */
import { expect, test } from "bun:test";
import { QueueingWriter, type WriteOp } from "../../src/store/run-writes";
import { runRow } from "../support/run-rows";

/** A writer that commits only when told to, each batch in the order taken. */
class HeldWriter extends QueueingWriter {
  private held: Array<ReturnType<QueueingWriter["take"]>["entries"]> = [];
  protected get inFlight() {
    return this.held.reduce((n, entries) => n + entries.length, 0);
  }
  protected kick() {
    if (this.queue.length > 0) this.held.push(this.take().entries);
  }
  /** Commits the oldest batch taken. */
  commitNext() {
    const entries = this.held.shift() ?? [];
    this.settle(
      entries,
      entries.map(() => null),
    );
  }
  async truncateWal() {
    return true;
  }
  async close() {}
}

const settledYet = async (promise: Promise<void>) => {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await Bun.sleep(5);
  return done;
};

test("a read waits for queued run writes, not for retention's deletions", async () => {
  const writer = new HeldWriter(() => {});
  const upkeep: WriteOp[] = [{ op: "deleteRuns", ids: ["old-1", "old-2"] }, { op: "pruneDefinitions" }];
  void writer.write(upkeep);
  await Bun.sleep(1);
  expect(writer.pending).toBe(1);
  expect(writer.pendingRuns).toBe(0);
  expect(await settledYet(writer.drainRuns())).toBe(true);
  expect(await settledYet(writer.drain())).toBe(false);

  void writer.write([{ op: "insertRun", row: runRow("r1") }]);
  await Bun.sleep(1);
  expect(writer.pendingRuns).toBe(1);
  const read = writer.drainRuns();
  expect(await settledYet(read)).toBe(false);
  writer.commitNext(); // the deletions: the read still waits for the run
  expect(await settledYet(read)).toBe(false);
  writer.commitNext();
  expect(await settledYet(read)).toBe(true);
  expect([writer.pending, writer.pendingRuns]).toEqual([0, 0]);
});
