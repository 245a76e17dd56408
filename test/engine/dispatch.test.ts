/**
 * The dispatcher (issue 5 item 1): settings.concurrencyLimit makes excess runs wait as pending, in order;
 * settings.maintenanceMode holds production runs while test runs proceed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createWorkflow, definition, engineApp, runAndWait, stopEngines, template, testPiece, until } from "./support";

let t: TestApp;
afterAll(stopEngines);
beforeAll(async () => {
  t = await engineApp();
  t.deps.pieces.register(testPiece("hold", [{ id: "ms", run: ({ config }) => Bun.sleep(Number(config.ms)).then(() => ({ at: Date.now() })) }]));
});

const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await t.req("GET", `/api/runs/${id}`)).body.data.status as string));

describe("concurrencyLimit", () => {
  test("excess runs wait as pending and run one after another, in order", async () => {
    const id = await createWorkflow(
      t,
      definition({ name: "work", type: "PIECE", pieceId: "hold", actionId: "ms", config: { ms: 300 } }, { settings: { concurrencyLimit: 1 } }),
    );
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: { i } })).body.data.id);
    // A held-back run says what it waits for.
    const held = await until(
      async () => (await t.req("GET", `/api/runs/${ids[2]}`)).body.data,
      (run) => run.status === "pending" && run.waiting !== undefined,
      2000,
    );
    expect(held.waiting.reason).toContain("concurrency slot");
    expect(held.waiting.reason).toContain("concurrencyLimit is 1");
    let maxRunning = 0;
    const seen = await until(
      async () => {
        const now = await statuses(ids);
        maxRunning = Math.max(maxRunning, now.filter((s) => s === "running").length);
        if (now[0] === "running") expect(now.slice(1)).toEqual(["pending", "pending"]);
        return now;
      },
      (now) => now.every((s) => s === "completed"),
      5000,
    );
    expect(seen).toEqual(["completed", "completed", "completed"]);
    // Never two at once while it was watched (a loaded machine may answer the polls too slowly to see any run
    // running at all: that the runs took turns is checked below by their steps' own times).
    expect(maxRunning).toBeLessThanOrEqual(1);
    const runs = await Promise.all(ids.map(async (runId) => (await t.req("GET", `/api/runs/${runId}`)).body.data));
    for (let i = 1; i < runs.length; i++) {
      expect(Date.parse(runs[i].finishedAt)).toBeGreaterThanOrEqual(Date.parse(runs[i - 1].finishedAt));
      // Each run's step started only after the previous run's step had finished: one slot, taken in turn.
      expect(Date.parse(runs[i].steps[0].startedAt)).toBeGreaterThanOrEqual(Date.parse(runs[i - 1].steps[0].finishedAt));
    }
    // One after another: three 300 ms holds span at least 900 ms from the first start to the last end (run
    // 3's own durationMs also counts how late it was created, which under load says nothing about ordering).
    expect(Date.parse(runs[2].finishedAt) - Date.parse(runs[0].startedAt)).toBeGreaterThanOrEqual(895);
  });

  test("without a limit runs of one workflow execute side by side", async () => {
    const id = await createWorkflow(t, definition({ name: "work", type: "PIECE", pieceId: "hold", actionId: "ms", config: { ms: 200 } }));
    const runs = await Promise.all([0, 1, 2].map(() => runAndWait(t, id)));
    expect(runs.every((r) => r.status === "completed")).toBe(true);
    // Side by side: each run's step started before any other run's step finished (no clock budget involved).
    const steps = runs.map((r) => r.steps[0]);
    const firstFinish = Math.min(...steps.map((s: any) => Date.parse(s.finishedAt)));
    for (const s of steps) expect(Date.parse(s.startedAt)).toBeLessThan(firstFinish);
  });
});

describe("maintenanceMode", () => {
  test("production runs wait while the live version is in maintenance; test runs proceed; publishing without it releases them", async () => {
    const id = await createWorkflow(t, definition(template("a", "x"), { settings: { maintenanceMode: true } }), { publish: true });
    const prod = await t.req("POST", `/api/workflows/${id}/run?environment=production&wait=1`, { body: {} });
    expect(prod.status).toBe(202);
    expect(prod.body.data.status).toBe("pending");
    const testRun = await runAndWait(t, id, {}, "test");
    expect(testRun.status).toBe("completed");
    expect((await statuses([prod.body.data.id]))[0]).toBe("pending");
    expect((await t.req("GET", `/api/runs/${prod.body.data.id}`)).body.data.waiting.reason).toContain("maintenance mode");
    const current = (await t.req("GET", `/api/workflows/${id}`)).body.data;
    await t.req("PUT", `/api/workflows/${id}`, {
      body: { name: "wf", definition: definition(template("a", "x"), { settings: { maintenanceMode: false } }), expectedRev: current.definitionRev },
    });
    expect((await t.req("POST", `/api/workflows/${id}/publish`)).status).toBe(200);
    await until(
      () => statuses([prod.body.data.id]),
      (s) => s[0] === "completed",
    );
  });
});
