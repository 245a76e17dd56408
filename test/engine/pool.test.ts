/**
 * The worker pool (issue 5 item 1, STYLE.md "Worker threads"): non-pure steps run on a worker thread,
 * pure ones on the main thread; a crashed worker fails its run with the reason and its slot is replaced.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadRegistry } from "../../src/pieces-runtime/registry";
import type { TestApp } from "../support/app";
import { chain, createWorkflow, definition, engineApp, runAndWait, stepOf, stopEngines } from "./support";

let t: TestApp;
afterAll(stopEngines);

const PIECE = `import { isMainThread } from "node:worker_threads";
export default (sdk) => sdk.definePiece({
  id: "threads", name: "Threads", version: "1.0.0", description: "where does a step run?",
  actions: [
    sdk.action({ id: "where_io", name: "where (io)", description: "x", sideEffects: "read", props: {}, run: () => ({ mainThread: isMainThread }) }),
    sdk.action({ id: "where_pure", name: "where (pure)", description: "x", sideEffects: "pure", props: {}, run: () => ({ mainThread: isMainThread }) }),
    sdk.action({ id: "crash", name: "crash", description: "x", sideEffects: "read", props: {}, run: () => { process.exit(3); } }),
  ],
});
`;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-pool-"));
  writeFileSync(join(dir, "threads.ts"), PIECE);
  t = await engineApp({ WEFT_PIECES_DIR: dir, WEFT_WORKERS: "1" });
  // The in-process app holds the same pieces the workers load from WEFT_PIECES_DIR.
  for (const piece of (await loadRegistry({ piecesDir: dir })).list()) t.deps.pieces.register(piece);
});

const step = (name: string, actionId: string) => ({ name, type: "PIECE", pieceId: "threads", actionId, config: {} });

describe("worker pool", () => {
  test("runs of pure steps start no worker thread; the first step that may need one starts the pool", async () => {
    const pure = await runAndWait(t, await createWorkflow(t, definition(chain(step("pure", "where_pure")))));
    expect(pure.status).toBe("completed");
    expect(t.deps.engine.workerPool).toBeUndefined();
    const io = await runAndWait(t, await createWorkflow(t, definition(chain(step("io", "where_io")))));
    expect(stepOf(io, "io").outputData).toEqual({ mainThread: false });
    expect(t.deps.engine.workerPool).toBeDefined();
  });

  test("a non-pure step runs on a worker thread, a pure one on the main thread", async () => {
    const run = await runAndWait(t, await createWorkflow(t, definition(chain(step("io", "where_io"), step("pure", "where_pure")))));
    expect(run.status).toBe("completed");
    expect(stepOf(run, "io").outputData).toEqual({ mainThread: false });
    expect(stepOf(run, "pure").outputData).toEqual({ mainThread: true });
  });

  test("a crashed worker fails its run with the reason, and the replaced slot serves the next run", async () => {
    const before = t.deps.engine.workerPool!.replaced;
    const crashed = await runAndWait(t, await createWorkflow(t, definition(step("boom", "crash"))));
    expect(crashed.status).toBe("failed");
    expect(stepOf(crashed, "boom").errorMessage).toMatch(/worker thread (crashed|exited unexpectedly).*worker replaced/);
    expect(t.deps.engine.workerPool!.replaced).toBe(before + 1);
    const next = await runAndWait(t, await createWorkflow(t, definition(step("io", "where_io"))));
    expect(next.status).toBe("completed");
    expect(stepOf(next, "io").outputData).toEqual({ mainThread: false });
  });
});
