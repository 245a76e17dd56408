/**
 * How long a read of runs waits for queued writes (src/core/runs/runs.ts, READ_WAIT_MS; Engine.committed): with the writer stuck (a
 * commit held up, as when PostgreSQL flushes a checkpoint), a list and the detail of a run this process does
 * not hold still answer, with what is committed; the detail of a run it is finishing waits for its rows,
 * also when the run ends while the read waits.
 */
import { expect, test } from "bun:test";
import { Runs } from "../../src/core/runs/runs";
import { Engine } from "../../src/engine/engine";
import { openDatabase } from "../../src/store/sqlite/db";
import { openRunReads } from "../../src/store/run-reads";
import { RunStore } from "../../src/store/sqlite/run-store";
import { runRow, stepRow } from "../support/run-rows";

/** The engine's own ways of reading stored runs and waiting for commits, over the fake's `reads` and `writes`. */
const engineReads = {
  listRuns: Engine.prototype.listRuns,
  storedStepsBounded: Engine.prototype.storedStepsBounded,
  committed: Engine.prototype.committed,
};

/** An engine whose writer never finishes committing until `release()`, holding the runs in `held`. */
function stuckEngine(held: Set<string>) {
  const store = new RunStore(openDatabase(":memory:"));
  for (const id of ["done", "finishing"]) {
    store.insertRun(runRow(id, { workspace_id: "ws" }));
    store.insertStep(stepRow(id));
  }
  let release!: () => void;
  const drained = new Promise<void>((resolve) => {
    release = resolve;
  });
  const engine = {
    ...engineReads,
    store,
    reads: openRunReads(store.db, null, { synchronous: "FULL" }),
    writes: { pending: 3, drain: () => drained },
    // A run's end is committed with everything else the writer holds.
    waitFor: () => drained.then(() => null),
    holds: (id: string) => held.has(id),
    row: (workspaceId: string, id: string) => store.get(workspaceId, id),
    withWait: (run: unknown) => run,
  };
  return { runs: new Runs(engine as unknown as Engine), release };
}

/** "answered" when `promise` settles before the writer is released, else "waiting". */
const raced = async (promise: Promise<unknown>) => Promise.race([promise.then(() => "answered"), Bun.sleep(1_000).then(() => "waiting")]);

test("a list and a run not held answer while the writer is stuck; a run being finished waits for its rows", async () => {
  const { runs, release } = stuckEngine(new Set(["finishing"]));
  expect(await raced(runs.list("ws", {}))).toBe("answered");
  expect((await runs.list("ws", {})).pagination.total).toBe(2);
  expect(await raced(runs.get("ws", "done"))).toBe("answered");
  expect((await runs.get("ws", "done")).steps).toHaveLength(1);
  const finishing = runs.get("ws", "finishing");
  expect(await raced(finishing)).toBe("waiting");
  release();
  expect((await finishing).id).toBe("finishing");
});

test("a run that ends while its detail waits is answered finished only with its last steps", async () => {
  const store = new RunStore(openDatabase(":memory:"));
  store.insertRun(runRow("ending", { workspace_id: "ws", status: "running", finished_at: null, duration_ms: null }));
  store.insertStep(stepRow("ending", { id: "ending-1", node_id: "first", seq: 1 }));
  // In memory the run is running, and ends 10 ms into the read's wait; its end (and its last step) commit
  // only when the writer is released.
  const live = { ...store.getRow("ending")! };
  let release!: () => void;
  const committed = new Promise<void>((resolve) => {
    release = () => {
      store.insertStep(stepRow("ending", { id: "ending-2", node_id: "last", seq: 2 }));
      store.patchRun("ending", { status: "completed", finished_at: new Date().toISOString(), duration_ms: 12 });
      resolve();
    };
  });
  setTimeout(() => Object.assign(live, { status: "completed" }), 10);
  const engine = {
    ...engineReads,
    store,
    reads: openRunReads(store.db, null, { synchronous: "FULL" }),
    writes: { pending: 1, drain: () => committed },
    waitFor: () => committed.then(() => null),
    holds: () => true,
    row: () => live,
    withWait: (run: unknown) => run,
  };
  const detail = new Runs(engine as unknown as Engine).get("ws", "ending");
  expect(await raced(detail)).toBe("waiting");
  release();
  const run = await detail;
  expect(run.status).toBe("completed");
  expect(run.steps?.map((step) => step.nodeId)).toEqual(["first", "last"]);
});
