/**
 * Executor rules (docs/engine.md "Errors, retries, sub-flows", "Expressions and conditions"),
 * each checked through the public API as a user would: run a workflow, read its run and steps.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../src/lib/clock";
import type { TestApp } from "../support/app";
import { chain, createWorkflow, definition, engineApp, runAndWait, set, stepOf, stopEngines, template, testPiece, until } from "./support";

let t: TestApp;
let attempts = 0;
afterAll(stopEngines);

beforeAll(async () => {
  t = await engineApp({ WEFT_STEP_OUTPUT_LIMIT: "2048" });
  t.deps.pieces.register(
    testPiece("probe", [
      {
        id: "fail",
        run: ({ config }) => {
          throw new Error(String(config.message ?? "it broke"));
        },
      },
      { id: "echo", run: ({ config }) => ({ ...config }) },
      { id: "big", run: ({ config }) => ({ blob: "x".repeat(Number(config.size ?? 10_000)) }) },
      {
        id: "flaky",
        retry: { maxAttempts: 3, backoffMs: 10 },
        sideEffects: "external",
        run: ({ config }) => {
          attempts++;
          if (attempts < Number(config.succeedOn ?? 3)) throw new Error(`attempt ${attempts} failed`);
          return { attempts };
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

const probe = (name: string, actionId: string, config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name,
  type: "PIECE",
  pieceId: "probe",
  actionId,
  config,
  ...extra,
});

describe("PIECE steps and expressions", () => {
  test("steps run in order; each reads the trigger and earlier steps; step rows record input, output and timings", async () => {
    const id = await createWorkflow(
      t,
      definition(
        chain(
          set("greet", { name: "{{trigger.body.name}}", doubled: "{{trigger.body.n * 2}}" }),
          template("say", "hello {{greet.output.name}} ({{greet.output.doubled}})"),
        ),
      ),
    );
    const run = await runAndWait(t, id, { name: "Ada", n: 21 });
    expect(run.status).toBe("completed");
    expect(run.triggerType).toBe("api");
    expect(run.triggerData).toEqual({ body: { name: "Ada", n: 21 }, headers: {}, query: {} });
    expect(run.steps.map((s: any) => s.nodeId)).toEqual(["greet", "say"]);
    expect(stepOf(run, "greet").outputData).toEqual({ name: "Ada", doubled: 42 });
    expect(stepOf(run, "say").inputData).toEqual({ template: "hello Ada (42)" });
    expect(stepOf(run, "say").outputData).toEqual({ text: "hello Ada (42)" });
    for (const step of run.steps) {
      expect(step.status).toBe("completed");
      expect(step.runId).toBe(run.id);
      expect(step.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(step.finishedAt)).toBeGreaterThanOrEqual(Date.parse(step.startedAt));
    }
    expect(run.stepTotal).toBe(2);
    expect(run.stepFailed).toBe(0);
    expect(run.durationMs).toBeGreaterThanOrEqual(0);
  });

  test("variables and run are roots of the context", async () => {
    const id = await createWorkflow(
      t,
      definition(probe("info", "echo", { base: "{{variables.apiBase}}/x", run: "{{run.id}}", env: "{{run.environment}}" }), {
        variables: { apiBase: "https://api.test" },
      }),
    );
    const run = await runAndWait(t, id);
    expect(stepOf(run, "info").outputData).toEqual({ base: "https://api.test/x", run: run.id, env: "test" });
  });

  test("a runtime expression error fails the step with the expression and the message", async () => {
    const id = await createWorkflow(t, definition(probe("calc", "echo", { v: "{{ $number('abc') + 1 }}" })));
    const run = await runAndWait(t, id);
    expect(run.status).toBe("failed");
    expect(stepOf(run, "calc").status).toBe("failed");
    expect(stepOf(run, "calc").errorMessage).toContain("{{$number('abc') + 1}}");
    expect(run.errorMessage).toContain('step "calc" failed');
  });

  test("an unknown piece or action fails the step naming what exists", async () => {
    const id = await createWorkflow(t, definition(chain({ name: "x", type: "PIECE", pieceId: "probe", actionId: "nope", config: {} })));
    const run = await runAndWait(t, id);
    expect(run.status).toBe("failed");
    expect(stepOf(run, "x").errorMessage).toContain('has no action "nope"; its actions: fail, echo');
  });
});

describe("ROUTER", () => {
  const router = (branches: unknown[]) => ({ name: "route", type: "ROUTER", branches });
  const branch = (name: string, conditions: unknown[][], text = name) => ({ name, conditions, firstAction: template(`in_${name}`, text) });
  const gt = (n: number) => ({ field: "{{trigger.body.n}}", operator: "number_gt", value: n });

  test("the first branch whose conditions hold runs, then nextAction", async () => {
    const def = definition(
      chain(
        {
          ...router([
            branch("big", [[gt(100)]]),
            branch("medium", [[gt(10)], [{ field: "{{trigger.body.force}}", operator: "boolean_true" }]]),
            branch("also", [[gt(5)]]),
          ]),
        },
        template("after", "done"),
      ),
    );
    const id = await createWorkflow(t, def);
    const run = await runAndWait(t, id, { n: 50 });
    expect(run.steps.map((s: any) => s.nodeId)).toEqual(["route", "in_medium", "after"]);
    expect(stepOf(run, "route").outputData).toEqual({ branch: "medium" });
  });

  test("OR over groups: the second group alone selects the branch", async () => {
    const def = definition(router([branch("medium", [[gt(10)], [{ field: "{{trigger.body.force}}", operator: "boolean_true" }]])]));
    const run = await runAndWait(t, await createWorkflow(t, def), { n: 1, force: true });
    expect(stepOf(run, "route").outputData).toEqual({ branch: "medium" });
  });

  test("the fallback branch (conditions: []) runs when no other holds, wherever it is listed", async () => {
    const def = definition(router([branch("otherwise", []), branch("big", [[gt(100)]])]));
    const run = await runAndWait(t, await createWorkflow(t, def), { n: 1 });
    expect(run.steps.map((s: any) => s.nodeId)).toEqual(["route", "in_otherwise"]);
  });

  test("no branch and no fallback: the run continues with nextAction", async () => {
    const def = definition(chain(router([branch("big", [[gt(100)]])]), template("after", "done")));
    const run = await runAndWait(t, await createWorkflow(t, def), { n: 1 });
    expect(run.status).toBe("completed");
    expect(stepOf(run, "route").outputData).toEqual({ branch: null });
    expect(run.steps.map((s: any) => s.nodeId)).toEqual(["route", "after"]);
  });
});

describe("LOOP_ON_ITEMS", () => {
  test("the body runs once per item with item and index; iteration outputs are collected", async () => {
    const loop = {
      name: "each",
      type: "LOOP_ON_ITEMS",
      config: { items: "{{trigger.body.lines}}" },
      firstLoopAction: template("line", "{{each.index}}:{{each.item.sku}}"),
    };
    const def = definition(chain(loop, template("after", "{{ $count(each.output.iterations) }} lines")));
    const run = await runAndWait(t, await createWorkflow(t, def), { lines: [{ sku: "a" }, { sku: "b" }, { sku: "c" }] });
    expect(run.status).toBe("completed");
    expect(run.steps.filter((s: any) => s.nodeId === "line").map((s: any) => s.outputData.text)).toEqual(["0:a", "1:b", "2:c"]);
    expect(stepOf(run, "each").outputData).toEqual({ iterations: [{ line: { text: "0:a" } }, { line: { text: "1:b" } }, { line: { text: "2:c" } }] });
    expect(stepOf(run, "after").outputData.text).toBe("3 lines");
    expect(run.steps.map((s: any) => s.nodeId)).toEqual(["line", "line", "line", "each", "after"]);
  });

  test("items that do not resolve to an array fail the step with what they gave", async () => {
    const loop = { name: "each", type: "LOOP_ON_ITEMS", config: { items: "{{trigger.body.name}}" }, firstLoopAction: template("line", "x") };
    const run = await runAndWait(t, await createWorkflow(t, definition(loop)), { name: "Ada" });
    expect(run.status).toBe("failed");
    expect(stepOf(run, "each").errorMessage).toContain("config.items must resolve to an array");
    expect(stepOf(run, "each").errorMessage).toContain('a string ("Ada")');
  });

  test("an empty list runs the body zero times", async () => {
    const loop = { name: "each", type: "LOOP_ON_ITEMS", config: { items: "{{trigger.body.lines}}" }, firstLoopAction: template("line", "x") };
    const run = await runAndWait(t, await createWorkflow(t, definition(loop)), { lines: [] });
    expect(run.status).toBe("completed");
    expect(stepOf(run, "each").outputData).toEqual({ iterations: [] });
  });
});

describe("skip and onErrorAction", () => {
  test("skip: true records the step as skipped and moves on", async () => {
    const def = definition(chain(probe("broken", "fail", {}, { skip: true }), template("after", "ran")));
    const run = await runAndWait(t, await createWorkflow(t, def));
    expect(run.status).toBe("completed");
    expect(stepOf(run, "broken").status).toBe("skipped");
    expect(stepOf(run, "after").status).toBe("completed");
  });

  test("a failing step with onErrorAction runs the error chain, then continues with its nextAction", async () => {
    const failing = probe(
      "fetch",
      "fail",
      { message: "503 from upstream" },
      { onErrorAction: template("note", "failed: {{fetch.error.message}} ({{fetch.status}})") },
    );
    const def = definition(chain(failing, template("after", "continued")));
    const run = await runAndWait(t, await createWorkflow(t, def));
    expect(run.status).toBe("completed");
    expect(run.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
      ["fetch", "failed"],
      ["note", "completed"],
      ["after", "completed"],
    ]);
    expect(stepOf(run, "note").outputData.text).toBe("failed: 503 from upstream (failed)");
    expect(run.stepFailed).toBe(1);
    expect(run.stepTotal).toBe(3);
  });

  test("a failing step without onErrorAction fails the run; later steps do not run", async () => {
    const def = definition(chain(probe("fetch", "fail", { message: "nope" }), template("after", "x")));
    const run = await runAndWait(t, await createWorkflow(t, def));
    expect(run.status).toBe("failed");
    expect(run.errorMessage).toBe('step "fetch" failed: nope');
    expect(run.steps.map((s: any) => s.nodeId)).toEqual(["fetch"]);
  });
});

describe("retries", () => {
  test("the piece's retry policy retries with backoff and records retryCount", async () => {
    attempts = 0;
    const run = await runAndWait(t, await createWorkflow(t, definition(probe("call", "flaky", { succeedOn: 3 }))));
    expect(run.status).toBe("completed");
    expect(stepOf(run, "call").retryCount).toBe(2);
    expect(stepOf(run, "call").outputData).toEqual({ attempts: 3 });
    expect(stepOf(run, "call").durationMs).toBeGreaterThanOrEqual(25); // 10 ms + 20 ms of backoff
  });

  test("when every attempt fails the step fails with the last error", async () => {
    attempts = 0;
    const run = await runAndWait(t, await createWorkflow(t, definition(probe("call", "flaky", { succeedOn: 99 }))));
    expect(run.status).toBe("failed");
    expect(stepOf(run, "call").retryCount).toBe(2);
    expect(stepOf(run, "call").errorMessage).toBe("attempt 3 failed");
  });
});

describe("time limit and cancellation", () => {
  test("settings.timeoutSeconds fails the run with a clear message", async () => {
    // An app whose clock the test moves past the limit instead of waiting it out (docs/architecture.md, "Time").
    const clock = new FakeClock(Date.now());
    const timed = await engineApp({}, { clock });
    timed.deps.pieces.register(t.deps.pieces.get("probe")!);
    // A minute's limit: only the moved clock can end the run before the test's own bound.
    const def = definition(probe("slow", "sleep", { ms: 600_000 }), { settings: { timeoutSeconds: 60 } });
    const started = Date.now();
    const runId = (await runAndWait(timed, await createWorkflow(timed, def), {}, "test", 0)).id;
    await until(
      async () => (await timed.req("GET", `/api/runs/${runId}`)).body.data,
      (r) => r.status === "running",
    );
    clock.advance(60_001);
    const run = await until(
      async () => (await timed.req("GET", `/api/runs/${runId}`)).body.data,
      (r) => r.status !== "running",
    );
    expect(Date.now() - started).toBeLessThan(4000);
    expect(run.status).toBe("failed");
    expect(run.errorMessage).toContain("run exceeded its time limit of 60 s");
    expect(run.errorMessage).toContain('"slow"');
    expect(stepOf(run, "slow").status).toBe("failed");
  });

  test("cancel stops a running run; its running step is recorded as cancelled", async () => {
    const id = await createWorkflow(t, definition(chain(probe("slow", "sleep", { ms: 10_000 }), template("after", "x"))));
    const started = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: {} });
    expect(started.status).toBe(202);
    const runId = started.body.data.id;
    await until(
      () => t.req("GET", `/api/runs/${runId}`),
      (r) => r.body.data.status === "running",
    );
    const cancelled = await t.req("POST", `/api/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe("cancelled");
    const run = (await t.req("GET", `/api/runs/${runId}`)).body.data;
    expect(run.status).toBe("cancelled");
    expect(stepOf(run, "slow").status).toBe("cancelled");
    expect(stepOf(run, "after")).toBeUndefined();
    // Cancelling again is a no-op; a finished run cannot be cancelled.
    expect((await t.req("POST", `/api/runs/${runId}/cancel`)).status).toBe(200);
    const done = await runAndWait(t, await createWorkflow(t, definition(template("a", "x"))));
    const refused = await t.req("POST", `/api/runs/${done.id}/cancel`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("only pending, running or paused runs can be cancelled");
  });
});

describe("step rows: secrets and size", () => {
  test("secret-looking config values and secret variables are masked in step input and output", async () => {
    const id = await createWorkflow(
      t,
      definition(
        probe("call", "echo", { url: "https://x.test", password: "hunter2!", headers: { Authorization: "Bearer abc.def" }, note: "key {{variables.apiKey}}" }),
      ),
    );
    const put = await t.req("PUT", `/api/workflows/${id}/variables`, { body: { variables: [{ name: "apiKey", value: "sk-live-0123456789", secret: true }] } });
    expect(put.status).toBe(200);
    const run = await runAndWait(t, id);
    const step = stepOf(run, "call");
    expect(step.inputData.url).toBe("https://x.test");
    expect(step.inputData.password).toBe("********");
    expect(step.inputData.headers.Authorization).toBe("********");
    expect(step.inputData.note).toBe("key ********");
    expect(JSON.stringify(step.outputData)).not.toContain("sk-live-0123456789");
  });

  test("an output over WEFT_STEP_OUTPUT_LIMIT is stored with a truncation marker; the run still uses the full value", async () => {
    const def = definition(chain(probe("blob", "big", { size: 10_000 }), template("len", "{{ $length(blob.output.blob) }}")));
    const run = await runAndWait(t, await createWorkflow(t, def));
    expect(run.status).toBe("completed");
    const stored = stepOf(run, "blob").outputData;
    expect(stored.truncated).toBe(true);
    expect(stored.limitBytes).toBe(2048);
    expect(stored.sizeBytes).toBeGreaterThan(10_000);
    expect(stored.preview.length).toBeLessThanOrEqual(1024);
    expect(stepOf(run, "len").outputData.text).toBe("10000");
  });
});

describe("per-run memory budget", () => {
  test("a run whose outputs exceed WEFT_RUN_MEMORY_MB fails with a clear message while another run completes", async () => {
    const small = await engineApp({ WEFT_RUN_MEMORY_MB: "1" });
    small.deps.pieces.register(testPiece("probe2", [{ id: "big", run: () => ({ blob: "y".repeat(200_000) }) }]));
    const loop = {
      name: "each",
      type: "LOOP_ON_ITEMS",
      config: { items: "{{trigger.body.items}}" },
      firstLoopAction: { name: "chunk", type: "PIECE", pieceId: "probe2", actionId: "big", config: {} },
    };
    const hog = await createWorkflow(small, definition(loop));
    const fine = await createWorkflow(small, definition(template("ok", "fine")));
    const [failed, completed] = await Promise.all([runAndWait(small, hog, { items: Array.from({ length: 20 }, (_, i) => i) }), runAndWait(small, fine)]);
    expect(failed.status).toBe("failed");
    expect(failed.errorMessage).toContain("memory budget of 1 MB");
    expect(failed.errorMessage).toContain("WEFT_RUN_MEMORY_MB");
    expect(failed.steps.length).toBeLessThan(20);
    expect(completed.status).toBe("completed");
  });
});
