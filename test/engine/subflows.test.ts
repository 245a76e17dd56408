/**
 * Sub-flows (issue 5 item 3): `subflows.call_workflow` starts a child run (triggerType `subflow`) and
 * waits for its `return_response` or not; recursion deeper than 10 is a clear failure.
 * Error workflows and on_run_finished triggers start on matching finished production runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { chain, createWorkflow, definition, engineApp, runAndWait, stepOf, stopEngines, template, until } from "./support";

let t: TestApp;
afterAll(stopEngines);
beforeAll(async () => {
  t = await engineApp();
});

const call = (name: string, workflowId: string, payload: unknown, wait = true) => ({
  name,
  type: "PIECE",
  pieceId: "subflows",
  actionId: "call_workflow",
  config: { workflow_id: workflowId, payload, wait },
});
const respond = (name: string, value: unknown) => ({ name, type: "PIECE", pieceId: "subflows", actionId: "return_response", config: { value } });
const callable = (next: unknown) => ({
  schemaVersion: 2,
  trigger: { name: "trigger", type: "callable", pieceId: "subflows", actionId: "callable", config: {}, nextAction: next },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});

describe("call_workflow", () => {
  test("with wait: the child runs as a subflow run and its return_response comes back", async () => {
    const child = await createWorkflow(t, callable(respond("answer", { doubled: "{{trigger.body.n * 2}}", from: "{{run.id}}" })), { name: "child" });
    const parent = await createWorkflow(
      t,
      definition(chain(call("sub", child, { n: "{{trigger.body.n}}" }), template("after", "got {{sub.output.response.doubled}}"))),
    );
    const run = await runAndWait(t, parent, { n: 21 });
    expect(run.status).toBe("completed");
    const sub = stepOf(run, "sub").outputData;
    expect(sub.status).toBe("completed");
    expect(sub.response.doubled).toBe(42);
    expect(stepOf(run, "after").outputData.text).toBe("got 42");
    const childRun = (await t.req("GET", `/api/runs/${sub.runId}`)).body.data;
    expect(childRun.triggerType).toBe("subflow");
    expect(childRun.parentRunId).toBe(run.id);
    expect(childRun.environment).toBe("test");
    expect(childRun.triggerData.body).toEqual({ n: 21 });
    expect(sub.response.from).toBe(childRun.id);
  });

  test("without wait: the parent continues at once with the child's run id", async () => {
    const child = await createWorkflow(t, callable({ name: "slow", type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds: 1 } }), {
      name: "child",
    });
    const parent = await createWorkflow(t, definition(call("sub", child, {}, false)));
    const run = await runAndWait(t, parent);
    expect(run.status).toBe("completed");
    const sub = stepOf(run, "sub").outputData;
    expect(["pending", "running"]).toContain(sub.status);
    expect(sub.response).toBeNull();
    await until(
      () => t.req("GET", `/api/runs/${sub.runId}`),
      (r) => r.body.data.status === "completed",
      5000,
    );
  });

  test("cancelling a run that waits for a sub-flow cancels the sub-flow too; one started without wait runs on", async () => {
    const child = await createWorkflow(t, callable({ name: "slow", type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds: 30 } }), {
      name: "slow child",
    });
    const waits = await createWorkflow(t, definition(call("sub", child, {})));
    const started = await t.req("POST", `/api/workflows/${waits}/run`, { body: {} });
    expect(started.status).toBe(202);
    const parentId = started.body.data.id;
    const childRun = await until(
      async () => (await t.req("GET", `/api/runs?workflowId=${child}&environment=test`)).body.data.find((r: any) => r.parentRunId === parentId),
      (r) => r?.status === "paused",
      5000,
    );
    const cancelled = await t.req("POST", `/api/runs/${parentId}/cancel`);
    expect(cancelled.body.data.status).toBe("cancelled");
    const after = await until(
      async () => (await t.req("GET", `/api/runs/${childRun.id}`)).body.data,
      (r) => r.status === "cancelled",
      5000,
    );
    expect(after.status).toBe("cancelled");

    const fireAndForget = await createWorkflow(
      t,
      definition(chain(call("sub", child, {}, false), { name: "hold", type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds: 30 } })),
    );
    const second = (await t.req("POST", `/api/workflows/${fireAndForget}/run`, { body: {} })).body.data.id;
    const loose = await until(
      async () => (await t.req("GET", `/api/runs?workflowId=${child}&environment=test`)).body.data.find((r: any) => r.parentRunId === second),
      (r) => r?.status === "paused",
      5000,
    );
    await until(
      async () => (await t.req("GET", `/api/runs/${second}`)).body.data,
      (r) => r.status === "paused",
      5000,
    );
    expect((await t.req("POST", `/api/runs/${second}/cancel`)).body.data.status).toBe("cancelled");
    await Bun.sleep(100);
    expect((await t.req("GET", `/api/runs/${loose.id}`)).body.data.status).toBe("paused");
    await t.req("POST", `/api/runs/${loose.id}/cancel`);
  });

  test("a workflow that calls itself fails clearly once sub-flows nest deeper than 10", async () => {
    const id = await createWorkflow(t, definition(undefined), { name: "recursive" });
    const def = definition(call("again", id, { depth: "{{trigger.body.depth + 1}}" }));
    const current = (await t.req("GET", `/api/workflows/${id}`)).body.data;
    expect((await t.req("PUT", `/api/workflows/${id}`, { body: { name: "recursive", definition: def, expectedRev: current.definitionRev } })).status).toBe(200);
    const run = await runAndWait(t, id, { depth: 0 }, "test", 20);
    expect(run.status).toBe("failed");
    expect(run.errorMessage).toContain("sub-flow depth limit");
    const chainRuns = (await t.req("GET", `/api/runs?workflowId=${id}&environment=test&limit=100`)).body;
    expect(chainRuns.pagination.total).toBe(11); // the top-level run and 10 nested sub-flow runs
    const deepest = chainRuns.data.find((r: any) => r.triggerType === "subflow" && r.triggerData.body.depth === 10);
    expect(deepest.status).toBe("failed");
    expect(deepest.errorMessage).toContain("sub-flow depth limit");
    expect(deepest.errorMessage).toContain("10");
  });

  test("a waited-for sub-flow that fails fails the calling step", async () => {
    const child = await createWorkflow(t, callable({ name: "boom", type: "PIECE", pieceId: "data", actionId: "parse_json", config: { text: "{nope" } }), {
      name: "child",
    });
    const parent = await createWorkflow(t, definition(call("sub", child, {})));
    const run = await runAndWait(t, parent);
    expect(run.status).toBe("failed");
    expect(stepOf(run, "sub").errorMessage).toContain('(workflow "child") failed: step "boom" failed');
  });

  test("calling a workflow that does not exist fails the step with the reason", async () => {
    const parent = await createWorkflow(t, definition(call("sub", "0190c2a0-0000-7000-8000-000000000000", {})));
    const run = await runAndWait(t, parent);
    expect(run.status).toBe("failed");
    expect(stepOf(run, "sub").errorMessage).toContain("not found");
  });
});

describe("error workflows and run_finished triggers", () => {
  const failing = (extra: Record<string, unknown> = {}) =>
    definition({ name: "boom", type: "PIECE", pieceId: "data", actionId: "parse_json", config: { text: "{not json" } }, extra);

  test("a failed production run starts settings.errorWorkflowId with triggerType error and the run's summary", async () => {
    const handler = await createWorkflow(t, definition(template("note", "failed: {{trigger.body.run.workflowName}}")), { name: "on-error", publish: true });
    const broken = await createWorkflow(t, failing({ settings: { errorWorkflowId: handler } }), { name: "broken", publish: true });
    const run = await runAndWait(t, broken, {}, "production");
    expect(run.status).toBe("failed");
    const started = await until(
      () => t.req("GET", `/api/runs?workflowId=${handler}&triggerType=error`),
      (r) => r.body.pagination.total === 1,
    );
    const errorRun = await until(
      () => t.req("GET", `/api/runs/${started.body.data[0].id}`),
      (r) => r.body.data.status === "completed",
    );
    expect(errorRun.body.data.triggerData.body.run.id).toBe(run.id);
    expect(errorRun.body.data.triggerData.body.run.errorMessage).toBe(run.errorMessage);
    expect(stepOf(errorRun.body.data, "note").outputData.text).toBe("failed: broken");
    // A failed test run does not start it.
    await runAndWait(t, broken, {}, "test");
    await Bun.sleep(100);
    expect((await t.req("GET", `/api/runs?workflowId=${handler}&triggerType=error`)).body.pagination.total).toBe(1);
  });

  test("a live runs.on_run_finished workflow starts when a matching run finishes", async () => {
    const watched = await createWorkflow(t, definition(template("a", "x")), { name: "watched", publish: true });
    const watcher = await createWorkflow(
      t,
      {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "run_finished",
          pieceId: "runs",
          actionId: "on_run_finished",
          config: { workflow_ids: [watched], statuses: ["completed"] },
          nextAction: template("seen", "{{trigger.body.run.status}}"),
        },
        settings: {},
        variables: {},
        annotations: null,
        pinnedData: {},
      },
      { name: "watcher", publish: true },
    );
    const run = await runAndWait(t, watched, {}, "production");
    const started = await until(
      () => t.req("GET", `/api/runs?workflowId=${watcher}&triggerType=run_finished`),
      (r) => r.body.pagination.total === 1,
    );
    const seen = await until(
      () => t.req("GET", `/api/runs/${started.body.data[0].id}`),
      (r) => r.body.data.status === "completed",
    );
    expect(seen.body.data.triggerData.body.run.id).toBe(run.id);
    expect(stepOf(seen.body.data, "seen").outputData.text).toBe("completed");
    // Its own runs never trigger it again.
    await Bun.sleep(100);
    expect((await t.req("GET", `/api/runs?workflowId=${watcher}`)).body.pagination.total).toBe(1);
  });
});
