/**
 * Pause and resume (issue 5 item 3): `delay` pauses with resumeMode `time`, `approval` with `webhook`
 * links; the run's slot is freed while it waits; a timer or a link resumes it — also after a restart.
 * Runs left `running` by a crash resume from their recorded steps or fail with a clear message.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { FakeClock } from "../../src/lib/clock";
import { newId, stepIdOf } from "../../src/lib/ids";
import { createLogger } from "../../src/http/logger";
import type { RunWrites } from "../../src/store/run-writes";
import type { TestApp } from "../support/app";
import { ROOT_TOKEN } from "../support/app";
import { chain, createWorkflow, definition, engineApp, runAndWait, stepOf, stopEngines, template, until } from "./support";

let t: TestApp;
/**
 * The app's clock: a delay's timer fires when the test moves it (docs/architecture.md, "Time"), never by waiting.
 * It starts at the real time because the delay piece dates its resumeAt by the real time.
 */
let clock: FakeClock;
afterAll(stopEngines);
beforeAll(async () => {
  clock = new FakeClock(Date.now());
  t = await engineApp({}, { clock });
});
// Each test starts at the real time again (a test before may have moved the clock an hour on).
beforeEach(() => clock.set(Date.now()));

/** Moves `app`'s clock to when the paused run's delay ends (its resumeAt), firing the resume timer. */
const reachResumeAt = (on: FakeClock, paused: { resumeAt: string }) => on.set(Math.max(on.now(), Date.parse(paused.resumeAt)));

const delay = (name: string, seconds: number) => ({ name, type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds } });
const approval = (name: string) => ({ name, type: "PIECE", pieceId: "approval", actionId: "wait_for_approval", config: { message: "ship it?" } });
const getRun = async (app: { req: TestApp["req"] }, id: string) => (await app.req("GET", `/api/runs/${id}`)).body.data;

/**
 * Holds back the engine's run writes (a commit slowed down, as on a loaded disk) until the answer is called; then
 * they go on in their order. The engine's writer is private: the test reaches it as a fault injector only.
 */
function holdRunWrites(app: TestApp): () => void {
  const writes = (app.deps.engine as unknown as { writes: RunWrites }).writes;
  const write = writes.write;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  writes.write = (ops) => released.then(() => write.call(writes, ops));
  return () => {
    writes.write = write;
    release();
  };
}

/** A second app on the same database file: what a restarted server sees. */
function restarted(app: TestApp, clock?: FakeClock) {
  const db = app.reopen();
  const created = createApp({ config: app.config, db, log: createLogger("error", () => {}), clock });
  const req = async (method: string, path: string, options: { body?: unknown } = {}) => {
    const res = await created.app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `Bearer ${ROOT_TOKEN}`, "content-type": "application/json" },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      }),
    );
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers };
  };
  return { ...created, req };
}

describe("delay", () => {
  test("pauses with resumeMode time and resumeAt, frees the slot, and a timer resumes the run", async () => {
    // An hour: only the clock moved past it resumes the run (a real timer of that length would never fire here).
    const id = await createWorkflow(t, definition(chain(template("before", "a"), delay("wait", 3600), template("after", "{{wait.output.resumedAt}}"))));
    const run = await runAndWait(t, id, {}, "test", 0);
    const paused = await until(
      () => getRun(t, run.id),
      (r) => r.status === "paused" && stepOf(r, "wait")?.status === "paused",
    );
    expect(paused.waitStep).toBe("wait");
    expect(paused.resumeMode).toBe("time");
    // The delay counts from when its step started (not from when a loaded machine answered this poll).
    expect(Date.parse(paused.resumeAt) - Date.parse(stepOf(paused, "wait").startedAt)).toBeGreaterThanOrEqual(3_599_995);
    expect(stepOf(paused, "wait").status).toBe("paused");
    expect(stepOf(paused, "after")).toBeUndefined();
    expect(t.deps.engine.load.active).toBe(0);
    // A minute short of the end: still paused.
    clock.set(Date.parse(paused.resumeAt) - 60_000);
    await t.deps.engine.committed();
    expect((await getRun(t, run.id)).status).toBe("paused");
    reachResumeAt(clock, paused);
    const done = await until(
      () => getRun(t, run.id),
      (r) => r.status === "completed",
      5000,
    );
    expect(done.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
      ["before", "completed"],
      ["wait", "completed"],
      ["after", "completed"],
    ]);
    expect(stepOf(done, "after").outputData.text).toBe(stepOf(done, "wait").outputData.resumedAt);
    expect(done.waitStep).toBeNull();
    expect(done.resumeAt).toBeNull();
    expect(done.stepTotal).toBe(3);
    // The paused step kept its id when it resumed; the step after it took the next one (no id given twice).
    expect(done.steps.map((s: any) => s.id)).toEqual([1, 2, 3].map((k) => stepIdOf(run.id, k)));
    // `before` ran once: its row was not written twice.
    expect(done.steps.filter((s: any) => s.nodeId === "before").length).toBe(1);
  });

  test("a paused run can be cancelled; a delay that ends while the cancel is being saved resumes nothing", async () => {
    const id = await createWorkflow(t, definition(chain(delay("wait", 3600), template("after", "x"))));
    const run = await runAndWait(t, id, {}, "test", 0);
    const paused = await until(
      () => getRun(t, run.id),
      (r) => r.status === "paused" && stepOf(r, "wait")?.status === "paused",
    );
    await t.deps.engine.committed();
    // A slow commit: until it is done the stored row says paused. The delay ends meanwhile, and only the cancel's
    // clearing of the resume timer keeps the run from being taken up again (the timer reads the stored row).
    const release = holdRunWrites(t);
    const cancelling = t.req("POST", `/api/runs/${run.id}/cancel`);
    // The engine holds the run as cancelled (a GET would wait for the commit) while the stored row still says paused.
    await until(
      () => t.deps.engine.row(run.workspaceId, run.id),
      (r) => r?.status === "cancelled",
    );
    expect((await t.deps.engine.storedRow(run.id))?.status).toBe("paused");
    reachResumeAt(clock, paused);
    clock.advance(1_000);
    // What a timer that fired would start (a read of the stored row, still paused) gets a few turns to show itself.
    await Bun.sleep(100);
    release();
    expect((await cancelling).body.data.status).toBe("cancelled");
    // ...and, had it resumed the run, the time to run the step after the delay.
    await t.deps.engine.committed();
    await Bun.sleep(100);
    await t.deps.engine.committed();
    const after = await getRun(t, run.id);
    expect(after.status).toBe("cancelled");
    expect(after.steps.map((s: any) => [s.nodeId, s.status])).toEqual([["wait", "paused"]]);
    expect((await t.deps.engine.storedRow(run.id))?.status).toBe("cancelled");
  });
});

describe("approval", () => {
  test("pauses with resume links; opening one resumes the run with the decision; a link works once", async () => {
    const id = await createWorkflow(t, definition(chain(approval("approve"), template("after", "decision={{approve.output.decision}}"))));
    const run = await runAndWait(t, id, {}, "test", 0);
    // The paused step's row too: on PostgreSQL it may be committed just after the run shows paused (as in the delay test).
    const paused = await until(
      () => getRun(t, run.id),
      (r) => r.status === "paused" && stepOf(r, "approve")?.status === "paused",
    );
    expect(paused.resumeMode).toBe("webhook");
    expect(paused.waitStep).toBe("approve");
    const links = stepOf(paused, "approve").outputData;
    expect(links.approveUrl).toContain(`/api/runs/${run.id}/resume/`);
    expect(links.rejectUrl).toContain("decision=reject");
    const path = new URL(links.approveUrl).pathname + new URL(links.approveUrl).search;
    const wrong = await t.req("GET", path.replace(/resume\/[^?]+/, "resume/not-the-real-token-000"), { token: null });
    expect(wrong.status).toBe(404);
    const opened = await t.req("GET", path, { token: null });
    expect(opened.status).toBe(200);
    expect(opened.body.data.runId).toBe(run.id);
    const done = await until(
      () => getRun(t, run.id),
      (r) => r.status === "completed",
    );
    expect(stepOf(done, "approve").outputData.decision).toBe("approve");
    expect(stepOf(done, "after").outputData.text).toBe("decision=approve");
    const again = await t.req("GET", path, { token: null });
    expect(again.status).toBe(404);
    expect(again.body.error.message).toContain("already used");
  });
});

describe("surviving a restart", () => {
  test("a paused run resumes in the restarted server when its time comes", async () => {
    const app = await engineApp({}, { clock: new FakeClock(Date.now()) });
    const id = await createWorkflow(app, definition(chain(template("before", "a"), delay("wait", 3600), template("after", "b"))));
    const run = await runAndWait(app, id, {}, "test", 0);
    const paused = await until(
      () => getRun(app, run.id),
      (r) => r.status === "paused",
    );
    await app.deps.engine.stop(100); // the first server goes away with the run paused
    const later = new FakeClock(Date.now());
    const next = restarted(app, later);
    await next.deps.engine.start(); // re-arms the run's timer from its row
    reachResumeAt(later, paused);
    try {
      const done = await until(
        () => getRun(next, run.id),
        (r) => r.status === "completed",
        5000,
      );
      expect(done.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
        ["before", "completed"],
        ["wait", "completed"],
        ["after", "completed"],
      ]);
    } finally {
      await next.deps.engine.stop(100);
    }
  });

  test("a run left running with only finished steps resumes from them; one cut off in a worker step fails clearly", async () => {
    const app = await engineApp();
    const id = await createWorkflow(app, definition(chain(template("a", "one"), template("b", "two:{{a.output.text}}"))));
    const first = await runAndWait(app, id);
    await app.deps.engine.committed();
    const original = (await app.deps.engine.storedRow(first.id))!;
    const [stepA] = await app.deps.engine.storedSteps(first.id);
    await app.deps.engine.stop(100);
    // The rows a crashed process left, written before the restarted engine starts (by its run writer: the
    // first one's is closed, and the PostgreSQL Db answers no SQL).
    const next = restarted(app);
    // Simulate a crash after step a: the run row says running, only a's row exists.
    const resumable = { ...original, id: newId(), status: "running" as const, finished_at: null, duration_ms: null, step_total: 1, event_seq: 2 };
    // And a crash while a worker step was running.
    const cut = { ...original, id: newId(), status: "running" as const, finished_at: null, duration_ms: null, step_total: 1, event_seq: 1 };
    await next.deps.engine.writerForTests.write([
      { op: "insertRun", row: resumable },
      { op: "insertStep", row: { ...stepA!, id: newId(), run_id: resumable.id, seq: 1 } },
      { op: "insertRun", row: cut },
      {
        op: "insertStep",
        row: {
          ...stepA!,
          id: newId(),
          run_id: cut.id,
          seq: 1,
          node_id: "a",
          piece_id: "http",
          action_id: "send_request",
          status: "running",
          output_data: null,
          finished_at: null,
        },
      },
    ]);
    await next.deps.engine.start();
    try {
      const resumed = await until(
        () => getRun(next, resumable.id),
        (r) => r.status === "completed",
      );
      expect(resumed.steps.map((s: any) => s.nodeId)).toEqual(["a", "b"]);
      // Step b, run after the restart, is the run's second step: its id follows the one stored before.
      expect(stepOf(resumed, "b").id).toBe(stepIdOf(resumable.id, 2));
      expect(stepOf(resumed, "a").id).not.toBe(stepOf(resumed, "b").id);
      expect(stepOf(resumed, "b").outputData.text).toBe("two:one");
      const failed = await until(
        () => getRun(next, cut.id),
        (r) => r.status === "failed",
      );
      expect(failed.errorMessage).toContain('interrupted by a restart while step "a" was running');
      expect(stepOf(failed, "a").status).toBe("failed");
    } finally {
      await next.deps.engine.stop(100);
    }
  });

  test("an approval opened just before a crash continues after the restart with that decision", async () => {
    const app = await engineApp();
    const id = await createWorkflow(app, definition(chain(approval("approve"), template("after", "decision={{approve.output.decision}}"))));
    const run = await runAndWait(app, id, {}, "test", 0);
    // The paused step's row too: on PostgreSQL it may be committed just after the run shows paused.
    const paused = await until(
      () => getRun(app, run.id),
      (r) => r.status === "paused" && stepOf(r, "approve")?.status === "paused",
    );
    const link = new URL(stepOf(paused, "approve").outputData.approveUrl);
    app.deps.engine.dispatcher.pause(); // the process dies after the link was accepted, before the run went on
    expect((await app.req("GET", link.pathname + link.search, { token: null })).status).toBe(200);
    await app.deps.engine.stop(100);
    const next = restarted(app);
    await next.deps.engine.start();
    try {
      const done = await until(
        () => getRun(next, run.id),
        (r) => r.status === "completed",
      );
      expect(stepOf(done, "approve").outputData.decision).toBe("approve");
      expect(stepOf(done, "after").outputData.text).toBe("decision=approve");
    } finally {
      await next.deps.engine.stop(100);
    }
  });

  test("pending runs are queued again in order after a restart", async () => {
    const app = await engineApp();
    const id = await createWorkflow(app, definition(template("a", "x")));
    const template_ = await runAndWait(app, id);
    await app.deps.engine.committed();
    const model = (await app.deps.engine.storedRow(template_.id))!;
    await app.deps.engine.stop(100);
    // Insert pending runs without executing them: after the first engine stopped, before the restarted one starts,
    // by the restarted one's run writer (the PostgreSQL Db answers no SQL).
    const next = restarted(app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const row = {
        ...model,
        id: newId(),
        status: "pending" as const,
        finished_at: null,
        duration_ms: null,
        step_total: 0,
        event_seq: 0,
        started_at: new Date().toISOString(),
      };
      await next.deps.engine.writerForTests.write([{ op: "insertRun", row }]);
      ids.push(row.id);
    }
    await next.deps.engine.start();
    try {
      for (const runId of ids)
        expect(
          (
            await until(
              () => getRun(next, runId),
              (r) => r.status === "completed",
            )
          ).steps.length,
        ).toBe(1);
    } finally {
      await next.deps.engine.stop(100);
    }
  });
});
