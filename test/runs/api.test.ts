/**
 * POST /api/workflows/{id}/run, GET /api/runs/{id}, cancel and retry (docs/api.md "4. Run", docs/engine.md
 * "Runs API decisions").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { stepIdOf } from "../../src/lib/ids";
import type { TestApp } from "../support/app";
import { chain, createWorkflow, definition, engineApp, runAndWait, set, stepOf, stopEngines, template, testPiece, until } from "../engine/support";

let t: TestApp;
let executions: Record<string, number> = {};
let failB = true;
afterAll(stopEngines);

beforeAll(async () => {
  t = await engineApp();
  t.deps.pieces.register(
    testPiece("count", [
      {
        id: "hit",
        run: ({ config, run }) => {
          executions[run.stepName] = (executions[run.stepName] ?? 0) + 1;
          if (config.fail && failB) throw new Error("B is down");
          return { step: run.stepName, value: config.value ?? null };
        },
      },
      {
        id: "sleep",
        sideEffects: "external",
        run: ({ config, signal }) =>
          new Promise((resolve) => {
            const timer = setTimeout(() => resolve({ slept: true }), Number(config.ms ?? 1000));
            signal.addEventListener("abort", () => clearTimeout(timer));
          }),
      },
    ]),
  );
});

const hit = (name: string, config: Record<string, unknown> = {}) => ({ name, type: "PIECE", pieceId: "count", actionId: "hit", config });

describe("POST /api/workflows/{id}/run", () => {
  test("without wait: 202 with the pending run; a run without environment=production is a test run; triggerType api", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    const res = await t.req("POST", `/api/workflows/${id}/run`, { body: { hello: "world" } });
    expect(res.status).toBe(202);
    expect(res.body.data.status).toBe("pending");
    expect(res.body.data.environment).toBe("test");
    expect(res.body.data.triggerType).toBe("api");
    expect(res.body.data.triggerData).toEqual({ body: { hello: "world" }, headers: {}, query: {} });
    expect(res.body.data.workflowId).toBe(id);
    expect(res.body.data.workflowName).toBe("wf");
    expect(res.body.data.workflowTriggerType).toBe("manual");
    const other = await t.req("POST", `/api/workflows/${id}/run?environment=staging`, { body: {} });
    expect(other.body.data.environment).toBe("test");
  });

  test("with wait=N: 200 with the finished run and its steps", async () => {
    const id = await createWorkflow(t, definition(chain(set("a", { v: "{{trigger.body.v}}" }), template("b", "v={{a.output.v}}"))));
    const res = await t.req("POST", `/api/workflows/${id}/run?environment=test&wait=5`, { body: { v: 3 } });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("completed");
    expect(res.body.data.steps.map((s: any) => s.nodeId)).toEqual(["a", "b"]);
    expect(stepOf(res.body.data, "b").outputData).toEqual({ text: "v=3" });
  });

  test("with wait shorter than the run: 202 with the run as it stands", async () => {
    const id = await createWorkflow(t, definition({ name: "slow", type: "PIECE", pieceId: "count", actionId: "sleep", config: { ms: 2500 } }));
    const started = Date.now();
    const res = await t.req("POST", `/api/workflows/${id}/run?environment=test&wait=1`, { body: {} });
    expect(res.status).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(["pending", "running"]).toContain(res.body.data.status);
    await t.req("POST", `/api/runs/${res.body.data.id}/cancel`);
  });

  test("wait must be a whole number from 0 to 30", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    for (const bad of ["31", "-1", "1.5", "soon"]) {
      const res = await t.req("POST", `/api/workflows/${id}/run?environment=test&wait=${bad}`, { body: {} });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_FAILED");
      expect(res.body.error.message).toContain("0 to 30");
    }
    const zero = await t.req("POST", `/api/workflows/${id}/run?environment=test&wait=0`, { body: {} });
    expect([200, 202]).toContain(zero.status);
  });

  test("production executes the published snapshot, test executes the draft", async () => {
    const id = await createWorkflow(t, definition(template("say", "version one")), { publish: true });
    const draft = await t.req("GET", `/api/workflows/${id}`);
    const put = await t.req("PUT", `/api/workflows/${id}`, {
      body: { name: "wf", definition: definition(template("say", "version two")), expectedRev: draft.body.data.definitionRev },
    });
    expect(put.status).toBe(200);
    const prod = await runAndWait(t, id, {}, "production");
    const test_ = await runAndWait(t, id, {}, "test");
    expect(stepOf(prod, "say").outputData.text).toBe("version one");
    expect(stepOf(test_, "say").outputData.text).toBe("version two");
    expect(prod.environment).toBe("production");
    expect(prod.versionId).toBe(draft.body.data.latestVersionId);
    expect(prod.executedVersionId).toBe(draft.body.data.latestVersionId);
    expect(prod.versionNumber).toBe(1);
    expect(prod.executedVersionNumber).toBe(1);
    expect(test_.executedVersionId).toBeNull();
  });

  test("a production run of a never-published workflow is 422 NOT_PUBLISHED and writes nothing", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    const res = await t.req("POST", `/api/workflows/${id}/run?environment=production`, { body: {} });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("NOT_PUBLISHED");
    expect(res.body.error.message).toContain("environment=test");
    const runs = await t.req("GET", `/api/runs?workflowId=${id}&environment=all`);
    expect(runs.body.pagination.total).toBe(0);
  });

  test("unknown workflow and another workspace's workflow: 404", async () => {
    const other = await t.otherWorkspace();
    const theirs = await createWorkflow(t, definition(template("a", "x")), { token: other.token });
    for (const id of [theirs, "0190c2a0-0000-7000-8000-000000000000"]) {
      const res = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: {} });
      expect(res.status).toBe(404);
    }
  });

  test("the body must be a JSON object", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    const res = await t.req("POST", `/api/workflows/${id}/run`, { raw: "[1,2]" });
    expect(res.status).toBe(400);
  });

  test("needs workflow:run", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    const token = await t.token(["workflow:read", "run:read"]);
    const res = await t.req("POST", `/api/workflows/${id}/run`, { body: {}, token });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("workflow:run");
  });

  test("Idempotency-Key: a replay answers the same run and starts no second one", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    const headers = { "idempotency-key": `run-${id}` };
    const first = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: { n: 1 }, headers });
    const second = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: { n: 1 }, headers });
    expect(second.status).toBe(first.status);
    expect(second.body.data.id).toBe(first.body.data.id);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    const runs = await t.req("GET", `/api/runs?workflowId=${id}&environment=test`);
    expect(runs.body.pagination.total).toBe(1);
  });

  test("the workflow record's lastRun follows the newest run", async () => {
    const id = await createWorkflow(t, definition(template("a", "x")));
    expect((await t.req("GET", `/api/workflows/${id}`)).body.data.lastRun).toBeNull();
    const run = await runAndWait(t, id);
    const record = (await t.req("GET", `/api/workflows/${id}`)).body.data;
    expect(record.lastRun).toEqual({ status: "completed", startedAt: run.startedAt });
  });
});

describe("GET /api/runs/{id}", () => {
  test("one run with its steps in execution order; another workspace's run is 404", async () => {
    const id = await createWorkflow(t, definition(chain(template("first", "1"), template("second", "2"), template("third", "3"))));
    const run = await runAndWait(t, id);
    const res = await t.req("GET", `/api/runs/${run.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.steps.map((s: any) => s.nodeId)).toEqual(["first", "second", "third"]);
    // Step ids are the run's: the UUIDv5 of 1, 2, 3 in the run id's namespace (lib/ids.ts; the record stores none).
    expect(res.body.data.steps.map((s: any) => s.id)).toEqual([1, 2, 3].map((k) => stepIdOf(run.id, k)));
    const other = await t.otherWorkspace();
    expect((await t.req("GET", `/api/runs/${run.id}`, { token: other.token })).status).toBe(404);
    expect((await t.req("GET", `/api/runs/not-a-uuid`)).status).toBe(400);
  });
});

describe("POST /api/runs/{id}/retry", () => {
  const failing = () => definition(chain(hit("A", { value: "{{trigger.body.v}}" }), hit("B", { fail: true }), hit("C")));

  test("from failed_step (default): steps before the failure are reused, not re-executed", async () => {
    failB = true;
    executions = {};
    const id = await createWorkflow(t, failing());
    const failed = await runAndWait(t, id, { v: 7 });
    expect(failed.status).toBe("failed");
    expect(executions).toEqual({ A: 1, B: 1 });
    failB = false;
    const res = await t.req("POST", `/api/runs/${failed.id}/retry`, { body: {} });
    expect(res.status).toBe(202);
    const retried = await t.deps.engine.waitFor(res.body.data.id, 5000);
    expect(retried!.status).toBe("completed");
    expect(executions).toEqual({ A: 1, B: 2, C: 1 });
    const full = (await t.req("GET", `/api/runs/${res.body.data.id}`)).body.data;
    expect(full.retryOfRunId).toBe(failed.id);
    expect(full.startedFromStep).toBe("B");
    expect(full.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
      ["A", "completed"],
      ["B", "completed"],
      ["C", "completed"],
    ]);
    expect(stepOf(full, "A").outputData).toEqual({ step: "A", value: 7 });
    expect(full.triggerData).toEqual(failed.triggerData);
    const original = (await t.req("GET", `/api/runs/${failed.id}`)).body.data;
    // The reused step is a step of the new run, with an id of its own; no id is shared between the two runs.
    expect(full.steps.map((s: any) => s.id)).toEqual([1, 2, 3].map((k) => stepIdOf(full.id, k)));
    expect(new Set([...original.steps, ...full.steps].map((s: any) => s.id)).size).toBe(original.steps.length + full.steps.length);
    expect(original.retriedByRunId).toBe(full.id);
  });

  test("from start: every step runs again with the same trigger data", async () => {
    failB = true;
    executions = {};
    const id = await createWorkflow(t, failing());
    const failed = await runAndWait(t, id, { v: 1 });
    failB = false;
    const res = await t.req("POST", `/api/runs/${failed.id}/retry`, { body: { from: "start" } });
    expect(res.status).toBe(202);
    expect((await t.deps.engine.waitFor(res.body.data.id, 5000))!.status).toBe("completed");
    expect(executions).toEqual({ A: 2, B: 2, C: 1 });
    expect(res.body.data.startedFromStep).toBeNull();
    expect(res.body.data.retryOfRunId).toBe(failed.id);
  });

  test("version original executes the definition the run executed; latest executes the current draft", async () => {
    failB = true;
    const id = await createWorkflow(t, definition(chain(template("say", "old"), hit("B", { fail: true }))));
    const failed = await runAndWait(t, id);
    const draft = (await t.req("GET", `/api/workflows/${id}`)).body.data;
    await t.req("PUT", `/api/workflows/${id}`, {
      body: { name: "wf", definition: definition(chain(template("say", "new"), hit("B"))), expectedRev: draft.definitionRev },
    });
    failB = false;
    const original = await t.req("POST", `/api/runs/${failed.id}/retry`, { body: { from: "start", version: "original" } });
    const latest = await t.req("POST", `/api/runs/${failed.id}/retry`, { body: { from: "start", version: "latest" } });
    const a = (await t.req("GET", `/api/runs/${(await t.deps.engine.waitFor(original.body.data.id, 5000))!.id}`)).body.data;
    const b = (await t.req("GET", `/api/runs/${(await t.deps.engine.waitFor(latest.body.data.id, 5000))!.id}`)).body.data;
    expect(stepOf(a, "say").outputData.text).toBe("old");
    expect(stepOf(b, "say").outputData.text).toBe("new");
  });

  test("refusals: a completed run has no failed step; an unfinished run cannot be retried; bad values are named", async () => {
    const done = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const noFailed = await t.req("POST", `/api/runs/${done.id}/retry`, { body: { from: "failed_step" } });
    expect(noFailed.status).toBe(400);
    expect(noFailed.body.error.message).toContain('"from": "start"');
    expect((await t.req("POST", `/api/runs/${done.id}/retry`, { body: { from: "start" } })).status).toBe(202);
    const bad = await t.req("POST", `/api/runs/${done.id}/retry`, { body: { from: "middle" } });
    expect(bad.status).toBe(400);
    const slow = await createWorkflow(t, definition({ name: "slow", type: "PIECE", pieceId: "count", actionId: "sleep", config: { ms: 5000 } }));
    const running = await t.req("POST", `/api/workflows/${slow}/run?environment=test`, { body: {} });
    await until(
      () => t.req("GET", `/api/runs/${running.body.data.id}`),
      (r) => r.body.data.status === "running",
    );
    const refused = await t.req("POST", `/api/runs/${running.body.data.id}/retry`, { body: { from: "start" } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("only a finished run");
    await t.req("POST", `/api/runs/${running.body.data.id}/cancel`);
  });

  test("needs run:write", async () => {
    const done = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const token = await t.token(["run:read"]);
    expect((await t.req("POST", `/api/runs/${done.id}/retry`, { body: {}, token })).status).toBe(403);
    expect((await t.req("POST", `/api/runs/${done.id}/cancel`, { token })).status).toBe(403);
  });
});

describe("cancel", () => {
  test("a pending run is cancelled before it runs", async () => {
    const id = await createWorkflow(t, definition(chain({ name: "slow", type: "PIECE", pieceId: "count", actionId: "sleep", config: { ms: 5000 } })));
    await t.req("PUT", `/api/workflows/${id}`, {
      body: {
        name: "wf",
        definition: definition(
          { name: "slow", type: "PIECE", pieceId: "count", actionId: "sleep", config: { ms: 5000 } },
          { settings: { concurrencyLimit: 1 } },
        ),
      },
    });
    const first = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: {} });
    const second = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: {} });
    await until(
      () => t.req("GET", `/api/runs/${first.body.data.id}`),
      (r) => r.body.data.status === "running",
    );
    expect((await t.req("GET", `/api/runs/${second.body.data.id}`)).body.data.status).toBe("pending");
    const cancelled = await t.req("POST", `/api/runs/${second.body.data.id}/cancel`);
    expect(cancelled.body.data.status).toBe("cancelled");
    await t.req("POST", `/api/runs/${first.body.data.id}/cancel`);
    const after = (await t.req("GET", `/api/runs/${second.body.data.id}`)).body.data;
    expect(after.status).toBe("cancelled");
    expect(after.steps).toEqual([]);
  });
});
