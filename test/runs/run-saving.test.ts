/**
 * Per-workflow run saving (docs/engine.md, "Run saving"): settings.saveRuns all (default), failed (a successful
 * run keeps its row, status, times and counts, not its steps) or none (nothing of a successful run but its
 * count). Failed runs are kept whole in every mode; GET /api/runs/counts (the run chart) and /metrics count
 * every run in every mode; the list counts what it lists. Each mode is run both ways a run ends: before its
 * insert was taken by the run writer (one batch: the steps are never written) and after (a slow step: its row
 * and steps are written first and taken away at the end).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sampleValue } from "../support/prometheus-text";
import type { TestApp } from "../support/app";
import { chain, createWorkflow, definition, engineApp, runAndWait, stopEngines, testPiece, until } from "../engine/support";

let t: TestApp;
afterAll(stopEngines);

beforeAll(async () => {
  t = await engineApp();
  t.deps.pieces.register(
    testPiece("saving", [
      {
        id: "check",
        run: async ({ config }) => {
          if (Number(config.ms) > 0) await Bun.sleep(Number(config.ms));
          if (config.fail === true || config.fail === "true") throw new Error("asked to fail");
          return { secret: "step-output" };
        },
      },
    ]),
  );
});

const step = (name: string, config: Record<string, unknown>) => ({ name, type: "PIECE", pieceId: "saving", actionId: "check", config });

/** A workflow of two steps whose second fails when the input says so; `ms` makes the first take that long. */
function saving(saveRuns: string | undefined) {
  return definition(chain(step("first", { ms: "{{trigger.body.ms}}" }), step("second", { fail: "{{trigger.body.fail}}" })), {
    settings: saveRuns ? { saveRuns } : {},
  });
}

async function finished(): Promise<number> {
  const metrics = await t.req("GET", "/metrics");
  return sampleValue(metrics.text, "weft_runs_finished_total", {});
}

describe("settings.saveRuns", () => {
  test("is validated: a value other than all, failed or none is refused with 400 naming them", async () => {
    const res = await t.req("POST", "/api/workflows", { body: { name: "bad", definition: saving("some") } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("settings.saveRuns");
    expect(res.body.error.details.expected).toBe('one of "all", "failed", "none"');
  });

  for (const mode of ["all", "failed", "none", undefined] as const) {
    test(`${mode ?? "unset (all)"}: failed runs kept whole; successful ones as the mode says; counts, chart and metrics exact`, async () => {
      const id = await createWorkflow(t, saving(mode), { name: `save-${mode}` });
      const before = await finished();
      const quick = [await runAndWait(t, id, {}), await runAndWait(t, id, {}), await runAndWait(t, id, {})];
      const slow = [await runAndWait(t, id, { ms: 150 }), await runAndWait(t, id, { ms: 150 })];
      const failed = [await runAndWait(t, id, { fail: true }), await runAndWait(t, id, { ms: 150, fail: true })];
      const successful = [...quick, ...slow];
      // The caller that waited for the run gets it whole, whatever is kept of it.
      for (const run of successful) {
        expect(run.status).toBe("completed");
        expect(run.steps.map((s: { nodeId: string }) => s.nodeId)).toEqual(["first", "second"]);
      }
      for (const run of failed) expect(run.status).toBe("failed");
      await t.deps.engine.committed();

      for (const run of failed) {
        const stored = await t.deps.engine.storedRow(run.id);
        expect(stored?.status).toBe("failed");
        const steps = await t.deps.engine.storedSteps(run.id);
        expect(steps.map((s) => [s.node_id, s.status])).toEqual([
          ["first", "completed"],
          ["second", "failed"],
        ]);
        expect(steps[0]!.output_data).toContain("step-output");
      }
      for (const run of successful) {
        const stored = await t.deps.engine.storedRow(run.id);
        const steps = await t.deps.engine.storedSteps(run.id);
        if (mode === "none") {
          expect(stored).toBeNull();
          expect(steps).toEqual([]);
        } else {
          expect(stored?.status).toBe("completed");
          expect(stored?.step_total).toBe(2);
          expect(stored?.finished_at).not.toBeNull();
          expect(stored?.duration_ms).toBeGreaterThanOrEqual(0);
          expect(steps.length).toBe(mode === "failed" ? 0 : 2);
        }
      }

      const listed = await t.req("GET", `/api/runs?workflowId=${id}&environment=all&limit=100`);
      const kept = mode === "none" ? 2 : 7;
      expect(listed.body.pagination.total).toBe(kept);
      expect(listed.body.data.length).toBe(kept);
      const listedFailed = await t.req("GET", `/api/runs?workflowId=${id}&environment=all&status=failed`);
      expect(listedFailed.body.pagination.total).toBe(2);

      const counts = await t.req("GET", `/api/runs/counts?workflowId=${id}&environment=all`);
      expect(counts.status).toBe(200);
      expect(counts.body.data.total).toBe(7);
      expect(counts.body.data.unsaved).toBe(mode === "none" ? 5 : 0);
      const today = counts.body.data.days.at(-1);
      expect(counts.body.data.days.length).toBe(14);
      expect(today.day).toBe(new Date().toISOString().slice(0, 10));
      expect(today.counts).toEqual({ completed: 5, failed: 2 });
      const onlyCompleted = await t.req("GET", `/api/runs/counts?workflowId=${id}&environment=test&status=completed&days=1`);
      expect(onlyCompleted.body.data.days).toEqual([{ day: today.day, counts: { completed: 5 }, unsaved: mode === "none" ? 5 : 0 }]);
      const production = await t.req("GET", `/api/runs/counts?workflowId=${id}`);
      expect(production.body.data.total).toBe(0);

      expect((await finished()) - before).toBe(7);
    });
  }

  test("a synchronous webhook's reply is the same whatever is kept; the run behind it is kept as its mode says", async () => {
    const replies: Array<{ status: number; body: unknown }> = [];
    for (const mode of ["all", "failed", "none"]) {
      const def = definition(
        {
          name: "greet",
          type: "PIECE",
          pieceId: "data",
          actionId: "set_fields",
          config: { fields: { greeting: "hello {{trigger.body.name}}" } },
          nextAction: { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config: { status: 201, body: "{{greet.output}}" } },
        },
        { settings: { saveRuns: mode } },
      );
      def.trigger = { ...def.trigger, type: "webhook", pieceId: "webhook", actionId: "catch_webhook" } as typeof def.trigger;
      const id = await createWorkflow(t, def, { name: `hook-${mode}`, publish: true });
      const token = (await t.req("GET", `/api/workflows/${id}`)).body.data.webhookToken;
      const res = await t.req("POST", `/webhook/${token}`, { body: { name: "Ada" } });
      replies.push({ status: res.status, body: res.body });
      const runId = res.headers.get("x-weft-run-id")!;
      expect(runId).toMatch(/^[0-9a-f-]{36}$/);
      // The reply comes from the run's last step: its end is written right after.
      await t.deps.engine.waitFor(runId, 5000);
      await t.deps.engine.committed();
      const stored = await t.deps.engine.storedRow(runId);
      if (mode === "none") expect(stored).toBeNull();
      else expect(stored?.status).toBe("completed");
      expect((await t.deps.engine.storedSteps(runId)).length).toBe(mode === "all" ? 2 : 0);
      expect((await t.req("GET", `/api/runs/counts?workflowId=${id}`)).body.data.days.at(-1).counts).toEqual({ completed: 1 });
    }
    expect(replies).toEqual([
      { status: 201, body: { greeting: "hello Ada" } },
      { status: 201, body: { greeting: "hello Ada" } },
      { status: 201, body: { greeting: "hello Ada" } },
    ]);
  });

  for (const mode of ["failed", "none"] as const) {
    test(`${mode}: a run that succeeded before its insert was committed is answered without waiting for that commit`, async () => {
      const id = await createWorkflow(t, saving(mode), { name: `held-${mode}` });
      const writes = t.deps.engine.writerForTests;
      const write = writes.write;
      let open!: () => void;
      const held = new Promise<void>((resolve) => {
        open = resolve;
      });
      // Every write waits until `open`: what the run's starter would wait for is not committed meanwhile.
      writes.write = (ops) => held.then(() => write.call(writes, ops));
      let run: { id: string; status: string; steps: unknown[] };
      try {
        run = await runAndWait(t, id, {}, "test", 0);
      } finally {
        writes.write = write;
        open();
      }
      expect(run.status).toBe("completed");
      await t.deps.engine.committed();
      await until(
        async () => (await t.req("GET", `/api/runs/counts?workflowId=${id}&environment=test`)).body.data,
        (data) => data.total === 1 && data.unsaved === (mode === "none" ? 1 : 0),
      );
      const stored = await t.deps.engine.storedRow(run.id);
      if (mode === "none") expect(stored).toBeNull();
      else expect({ status: stored?.status, steps: (await t.deps.engine.storedSteps(run.id)).length }).toEqual({ status: "completed", steps: 0 });
    });
  }

  test("the workspace's counts add every workflow's, kept or not", async () => {
    const before = (await t.req("GET", "/api/runs/counts?environment=test")).body.data;
    const none = await createWorkflow(t, saving("none"), { name: "ws-none" });
    const all = await createWorkflow(t, saving("all"), { name: "ws-all" });
    await runAndWait(t, none, {});
    await runAndWait(t, all, {});
    const after = (await t.req("GET", "/api/runs/counts?environment=test")).body.data;
    expect(after.total - before.total).toBe(2);
    expect(after.unsaved - before.unsaved).toBe(1);
  });
});
