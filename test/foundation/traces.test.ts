/**
 * OpenTelemetry traces (docs/operations.md, "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set, the SDK sends a
 * span per run and per step over OTLP/HTTP (JSON) to a loopback receiver (test/support/otlp-receiver.ts; no
 * collector is packaged in Debian), with the workflow, its version, the piece, the action, the status and the
 * error; a W3C `traceparent` on an API run or a webhook call is kept (same trace id, the caller's span as the
 * run's parent), and the http piece sends the step's own context on its call. Off, no SDK module is loaded,
 * and a caller's context is still passed on unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { testApp, type TestApp } from "../support/app";
import { startOtlpReceiver } from "../support/otlp-receiver";
import { testStepsPiece } from "../support/test-steps";
import { definition, webhookTrigger } from "../triggers/harness";

const INCOMING_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const INCOMING_SPAN = "00f067aa0ba902b7";
const INCOMING = `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`;

/** An HTTP server on loopback that records the `traceparent` of every call the http piece makes. */
function startTarget() {
  const seen: (string | null)[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      seen.push(request.headers.get("traceparent"));
      return Response.json({ ok: true });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, seen, stop: () => server.stop(true) };
}

/** webhook → http.send_request to `url` → (optionally) a step that fails. */
function tracedDefinition(url: string, fail: boolean) {
  const boom = { name: "explode", type: "PIECE", pieceId: "ttest", actionId: "boom", config: {} };
  const call = {
    name: "call",
    type: "PIECE",
    pieceId: "http",
    actionId: "send_request",
    config: { method: "GET", url },
    ...(fail ? { nextAction: boom } : {}),
  };
  return definition(webhookTrigger(), call);
}

async function publish(t: TestApp, name: string, url: string, fail: boolean): Promise<{ id: string; token: string }> {
  const created = await t.req("POST", "/api/workflows", { body: { name, definition: tracedDefinition(url, fail) } });
  expect(created.status).toBe(201);
  const published = await t.req("POST", `/api/workflows/${created.body.data.id}/publish`);
  expect(published.status).toBe(200);
  return { id: created.body.data.id, token: published.body.data.webhookToken };
}

async function runViaApi(t: TestApp, workflowId: string, headers: Record<string, string> = {}) {
  const res = await t.req("POST", `/api/workflows/${workflowId}/run?environment=production&wait=20`, { body: {}, headers });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; status: string };
}

async function eventually<T>(check: () => T | Promise<T>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await Bun.sleep(25);
    }
  }
}

describe("traces on (OTLP/HTTP to a loopback receiver)", () => {
  const receiver = startOtlpReceiver();
  const target = startTarget();
  let t: TestApp;
  let failing: { id: string; token: string };
  let passing: { id: string; token: string };

  beforeAll(async () => {
    t = await testApp({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`, OTEL_SERVICE_NAME: "weft-under-test", WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
    t.deps.pieces.register(testStepsPiece("ttest"));
    failing = await publish(t, "traced failing", target.url, true);
    passing = await publish(t, "traced passing", target.url, false);
  });
  afterAll(async () => {
    await t.deps.tracing?.shutdown();
    await t.deps.engine.stop(500);
    receiver.stop();
    target.stop();
  });

  /** The run's spans once its run span arrived (BatchSpanProcessor sends on flush). */
  async function spansOf(runId: string) {
    await t.deps.tracing!.flush();
    return eventually(() => {
      const spans = receiver.spansOfRun(runId);
      expect(spans.some((s) => s.name.startsWith("run "))).toBe(true);
      return spans;
    });
  }

  test("an API run with a traceparent: run and step spans in the caller's trace, parent and child linked", async () => {
    const seenBefore = target.seen.length;
    const run = await runViaApi(t, failing.id, { traceparent: INCOMING });
    expect(run.status).toBe("failed");
    const spans = await spansOf(run.id);
    const runSpan = spans.find((s) => s.name === "run traced failing")!;
    expect(runSpan).toBeDefined();
    // The caller's trace is kept: same trace id, its span is the run's parent.
    expect(runSpan.traceId).toBe(INCOMING_TRACE);
    expect(runSpan.parentSpanId).toBe(INCOMING_SPAN);
    expect(runSpan.attributes).toMatchObject({
      "weft.run.id": run.id,
      "weft.workflow.id": failing.id,
      "weft.workflow.name": "traced failing",
      "weft.workflow.version": 1,
      "weft.run.status": "failed",
      "weft.run.trigger_type": "api",
    });
    expect(runSpan.statusCode).toBe(2);
    expect(runSpan.statusMessage).toContain("boom: upstream said no");
    expect(runSpan.resource["service.name"]).toBe("weft-under-test");

    const call = spans.find((s) => s.name === "step call")!;
    const explode = spans.find((s) => s.name === "step explode")!;
    for (const step of [call, explode]) {
      expect(step.traceId).toBe(INCOMING_TRACE);
      expect(step.parentSpanId).toBe(runSpan.spanId);
      expect(step.startMs).toBeGreaterThanOrEqual(runSpan.startMs);
      expect(step.endMs).toBeLessThanOrEqual(runSpan.endMs);
    }
    expect(call.attributes).toMatchObject({ "weft.piece": "http", "weft.action": "send_request", "weft.step.status": "completed", "weft.workflow.version": 1 });
    expect(call.statusCode).toBe(1);
    expect(explode.attributes).toMatchObject({ "weft.piece": "ttest", "weft.action": "boom", "weft.step.status": "failed" });
    expect(explode.attributes["weft.error"]).toContain("boom: upstream said no");
    expect(explode.statusCode).toBe(2);

    // The http piece's call carried the step's own context: the caller's trace, the step's span as parent.
    expect(target.seen.slice(seenBefore)).toEqual([`00-${INCOMING_TRACE}-${call.spanId}-01`]);
    expect(receiver.contentTypes.every((type) => type.startsWith("application/json"))).toBe(true);
  });

  test("a webhook call with a traceparent: the run's trace is the caller's", async () => {
    const res = await t.req("POST", `/webhook/${passing.token}`, { body: { n: 1 }, token: null, headers: { traceparent: INCOMING } });
    expect(res.status).toBe(202);
    const runId = res.body.data.runId as string;
    await t.deps.engine.waitFor(runId, 10_000);
    const spans = await spansOf(runId);
    const runSpan = spans.find((s) => s.name === "run traced passing")!;
    expect(runSpan.traceId).toBe(INCOMING_TRACE);
    expect(runSpan.parentSpanId).toBe(INCOMING_SPAN);
    expect(runSpan.attributes["weft.run.trigger_type"]).toBe("webhook");
    expect(runSpan.statusCode).toBe(1);
    const call = spans.find((s) => s.name === "step call")!;
    expect(call.parentSpanId).toBe(runSpan.spanId);
  });

  test("a sub-flow's run is a child of the calling step's span, in the same trace", async () => {
    const childDefinition = definition(
      { name: "trigger", type: "callable", pieceId: "subflows", actionId: "callable", config: {} },
      {
        name: "child_call",
        type: "PIECE",
        pieceId: "http",
        actionId: "send_request",
        config: { method: "GET", url: target.url },
      },
    );
    const child = await t.req("POST", "/api/workflows", { body: { name: "traced child", definition: childDefinition } });
    const publishedChild = await t.req("POST", `/api/workflows/${child.body.data.id}/publish`);
    expect(publishedChild.status).toBe(200);
    const callStep = {
      name: "delegate",
      type: "PIECE",
      pieceId: "subflows",
      actionId: "call_workflow",
      config: { workflow_id: child.body.data.id, wait: true },
    };
    const parent = await t.req("POST", "/api/workflows", { body: { name: "traced parent", definition: definition(webhookTrigger(), callStep) } });
    expect((await t.req("POST", `/api/workflows/${parent.body.data.id}/publish`)).status).toBe(200);
    const seenBefore = target.seen.length;

    const run = await runViaApi(t, parent.body.data.id, { traceparent: INCOMING });
    expect(run.status).toBe("completed");
    const delegate = (await spansOf(run.id)).find((s) => s.name === "step delegate")!;
    expect(delegate.traceId).toBe(INCOMING_TRACE);
    const childRunId = receiver.spans.find((s) => s.name === "run traced child" && s.traceId === INCOMING_TRACE)?.attributes["weft.run.id"] as string;
    const childSpans = await spansOf(childRunId);
    const childRun = childSpans.find((s) => s.name === "run traced child")!;
    expect(childRun.parentSpanId).toBe(delegate.spanId);
    expect(childRun.attributes["weft.run.trigger_type"]).toBe("subflow");
    const childCall = childSpans.find((s) => s.name === "step child_call")!;
    expect(childCall.parentSpanId).toBe(childRun.spanId);
    expect(target.seen.slice(seenBefore)).toEqual([`00-${INCOMING_TRACE}-${childCall.spanId}-01`]);
  });

  test("a cancelled run ends the span of the step it cut short", async () => {
    const slow = { name: "nap", type: "PIECE", pieceId: "ttest", actionId: "sleep", config: { ms: 20_000 } };
    const created = await t.req("POST", "/api/workflows", { body: { name: "traced slow", definition: definition(webhookTrigger(), slow) } });
    const start = await t.req("POST", `/api/workflows/${created.body.data.id}/run`, { body: {} });
    expect(start.status).toBe(202);
    const runId = start.body.data.id as string;
    await eventually(async () => expect((await t.req("GET", `/api/runs/${runId}`)).body.data.status).toBe("running"));
    expect((await t.req("POST", `/api/runs/${runId}/cancel`)).status).toBe(200);
    await t.deps.engine.waitFor(runId, 10_000);
    const spans = await spansOf(runId);
    const runSpan = spans.find((s) => s.name === "run traced slow")!;
    const nap = spans.find((s) => s.name === "step nap")!;
    expect(runSpan.attributes["weft.run.status"]).toBe("cancelled");
    expect(nap.parentSpanId).toBe(runSpan.spanId);
    expect(nap.attributes).toMatchObject({ "weft.piece": "ttest", "weft.action": "sleep", "weft.step.status": "cancelled" });
    expect(nap.endMs).toBeLessThanOrEqual(runSpan.endMs);
  });

  test("without a traceparent (or with a malformed one) a run starts a trace of its own", async () => {
    const runs = [await runViaApi(t, passing.id), await runViaApi(t, passing.id, { traceparent: "00-not-a-trace-01" })];
    const traceIds = new Set<string>();
    for (const run of runs) {
      const runSpan = (await spansOf(run.id)).find((s) => s.name === "run traced passing")!;
      expect(runSpan.parentSpanId).toBe("");
      expect(runSpan.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(runSpan.traceId).not.toBe(INCOMING_TRACE);
      traceIds.add(runSpan.traceId);
    }
    expect(traceIds.size).toBe(2);
  });
});

describe("traces off (no endpoint)", () => {
  const target = startTarget();
  let t: TestApp;
  let passing: { id: string; token: string };

  beforeAll(async () => {
    t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
    passing = await publish(t, "untraced", target.url, false);
  });
  afterAll(async () => {
    await t.deps.engine.stop(500);
    target.stop();
  });

  test("no tracer, and a caller's traceparent is passed on unchanged by the http piece; a malformed one is not", async () => {
    expect(t.deps.tracing).toBeUndefined();
    await runViaApi(t, passing.id, { traceparent: INCOMING });
    await runViaApi(t, passing.id, { traceparent: "01-zz" });
    await runViaApi(t, passing.id);
    expect(target.seen).toEqual([INCOMING, null, null]);
  });

  test("the OpenTelemetry SDK is not loaded when tracing is off", async () => {
    const script = `
      const { createTracing } = await import(${JSON.stringify(join(import.meta.dir, "../../src/core/tracing.ts"))});
      const { loadConfig } = await import(${JSON.stringify(join(import.meta.dir, "../../src/config.ts"))});
      const off = createTracing(loadConfig({}).traces, { version: "0", log: { info() {} } });
      const loaded = Object.keys(require.cache).filter((path) => path.includes("@opentelemetry")).length;
      console.log(JSON.stringify({ off: off === undefined, loaded }));
    `;
    const env = { ...process.env };
    delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    const proc = Bun.spawn([process.execPath, "-e", script], { env, stdout: "pipe", stderr: "pipe" });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(JSON.parse(out.trim())).toEqual({ off: true, loaded: 0 });
  });
});
