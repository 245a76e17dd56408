/**
 * GET /metrics (docs/operations.md, "Metrics"): Prometheus' text format; counters and histograms that move as
 * webhooks, runs, steps, the run writer and schedules do; gauges read from the engine at the scrape; the
 * per-workflow label only when asked for, and bounded; who may scrape: a token with metrics:read, or a caller
 * whose socket address is in WEFT_METRICS_ALLOW_CIDRS.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../../src/app";
import { ConfigError, loadConfig } from "../../src/config";
import { FakeClock } from "../../src/lib/clock";
import { testApp, type TestApp } from "../support/app";
import { familyTypes, parseSamples, sampleValue } from "../support/prometheus-text";
import { testStepsPiece } from "../support/test-steps";
import { definition, triggerApp, webhookTrigger } from "../triggers/harness";

/** Steps that run on the main thread: one that waits, one that fails. */
const stepsPiece = testStepsPiece("mtest");

const setFields = { name: "greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { hello: "{{trigger.body.name}}" } } };
const boom = { name: "explode", type: "PIECE", pieceId: "mtest", actionId: "boom", config: {} };
const sleep = (ms: number) => ({ name: "wait", type: "PIECE", pieceId: "mtest", actionId: "sleep", config: { ms } });

async function appWithSteps(env: Record<string, string> = {}) {
  const t = await testApp(env);
  t.deps.pieces.register(stepsPiece);
  return t;
}

/** Creates and publishes a webhook workflow; its webhook token. */
async function publishWebhook(t: TestApp, step: Record<string, unknown>, settings: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  const created = await t.req("POST", "/api/workflows", { body: { name: `wf ${step.name}`, definition: definition(webhookTrigger(), step, settings) } });
  expect(created.status).toBe(201);
  const published = await t.req("POST", `/api/workflows/${created.body.data.id}/publish`);
  expect(published.status).toBe(200);
  return { id: created.body.data.id, token: published.body.data.webhookToken };
}

async function callWebhook(t: TestApp, token: string): Promise<string> {
  const res = await t.req("POST", `/webhook/${token}`, { body: { name: "Ada" }, token: null });
  expect(res.status).toBe(202);
  return res.body.data.runId;
}

const scrape = async (t: TestApp, token?: string | null) => {
  const res = await t.req("GET", "/metrics", { token });
  expect(res.status).toBe(200);
  return res.text;
};

/** Retries `check` until it passes or `ms` ran out (a webhook's duration is recorded once its answer is sent). */
async function eventually(check: () => Promise<void>, ms = 5_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await Bun.sleep(20);
    }
  }
}

/** An app with `env` listening on 127.0.0.1 (the caller's address is the socket's), for `use`. */
async function onLoopback(env: Record<string, string>, use: (url: string, app: TestApp) => Promise<void>) {
  const app = await testApp(env);
  app.app.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await use(`http://127.0.0.1:${app.app.server!.port}`, app);
  } finally {
    await app.app.stop();
  }
}

let t: TestApp;
beforeAll(async () => {
  t = await appWithSteps();
});
afterAll(async () => {
  await t.deps.engine.stop(500);
});

describe("GET /metrics", () => {
  test("answers Prometheus' text format: every weft_ family typed and described, and the process metrics", async () => {
    const res = await t.req("GET", "/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const types = familyTypes(res.text);
    expect(types).toMatchObject({
      weft_runs_started_total: "counter",
      weft_runs_finished_total: "counter",
      weft_step_duration_seconds: "histogram",
      weft_webhook_request_duration_seconds: "histogram",
      weft_run_writer_batch_writes: "histogram",
      weft_run_writer_commit_duration_seconds: "histogram",
      weft_schedule_lag_seconds: "histogram",
      weft_runs_queued: "gauge",
      weft_runs_running: "gauge",
      weft_sandbox_processes: "gauge",
      weft_sandbox_processes_busy: "gauge",
      weft_sandbox_queued_calls: "gauge",
      weft_piece_host_processes: "gauge",
      weft_build_info: "gauge",
      process_cpu_seconds_total: "counter",
      process_resident_memory_bytes: "gauge",
      nodejs_eventloop_lag_seconds: "gauge",
    });
    for (const family of Object.keys(types)) expect(res.text).toContain(`# HELP ${family} `);
    // Left out: V8's heap spaces, which JavaScriptCore does not have and which cost a heap walk per scrape.
    expect(Object.keys(types).filter((family) => family.startsWith("nodejs_heap_space"))).toEqual([]);
    // Every line parses as a scraper reads it; the process is really measured.
    expect(parseSamples(res.text).length).toBeGreaterThan(50);
    expect(sampleValue(res.text, "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect(sampleValue(res.text, "weft_build_info", { version: VERSION })).toBe(1);
  });

  test("a webhook run moves the run counters, the step and webhook histograms and the writer's", async () => {
    const ok = await publishWebhook(t, setFields);
    const failing = await publishWebhook(t, boom);
    const before = await scrape(t);
    const runs = [await callWebhook(t, ok.token), await callWebhook(t, failing.token)];
    for (const runId of runs) expect(["completed", "failed"]).toContain(String((await t.deps.engine.waitFor(runId, 5_000))?.status));
    await eventually(async () => {
      const after = await scrape(t);
      const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
      expect(delta("weft_runs_started_total", { trigger_type: "webhook" })).toBe(2);
      expect(delta("weft_runs_finished_total", { status: "completed", trigger_type: "webhook" })).toBe(1);
      expect(delta("weft_runs_finished_total", { status: "failed", trigger_type: "webhook" })).toBe(1);
      expect(delta("weft_step_duration_seconds_count", { piece: "data", action: "set_fields" })).toBe(1);
      expect(delta("weft_step_duration_seconds_count", { piece: "mtest", action: "boom" })).toBe(1);
      expect(delta("weft_webhook_request_duration_seconds_count", { code: "202" })).toBe(2);
      expect(delta("weft_webhook_request_duration_seconds_sum", { code: "202" })).toBeGreaterThan(0);
      // Each insert and end was committed in some batch: the histograms count batches and the writes in them.
      const batches = delta("weft_run_writer_batch_writes_count");
      expect(batches).toBeGreaterThanOrEqual(1);
      expect(delta("weft_run_writer_batch_writes_sum")).toBeGreaterThanOrEqual(batches);
      expect(delta("weft_run_writer_commit_duration_seconds_count")).toBe(batches);
    });
    // A refused call is timed under its own status code.
    expect((await t.req("POST", "/webhook/no-such-token", { body: {}, token: null })).status).toBe(404);
    await eventually(async () =>
      expect(sampleValue(await scrape(t), "weft_webhook_request_duration_seconds_count", { code: "404" })).toBeGreaterThanOrEqual(1),
    );
  });

  test("queue depth and running runs are read from the engine at the scrape", async () => {
    const slow = await publishWebhook(t, sleep(400), { concurrencyLimit: 1 });
    const runs = [await callWebhook(t, slow.token), await callWebhook(t, slow.token), await callWebhook(t, slow.token)];
    await eventually(async () => {
      const now = await scrape(t);
      expect(sampleValue(now, "weft_runs_running")).toBe(1);
      expect(sampleValue(now, "weft_runs_queued")).toBe(2);
    });
    for (const runId of runs) expect((await t.deps.engine.waitFor(runId, 5_000))?.status).toBe("completed");
    const idle = await scrape(t);
    expect(sampleValue(idle, "weft_runs_running")).toBe(0);
    expect(sampleValue(idle, "weft_runs_queued")).toBe(0);
  });

  test("the run counters carry no workflow label unless WEFT_METRICS_WORKFLOW_LABELS asks, and then at most that many", async () => {
    const text = await scrape(t);
    expect(parseSamples(text).filter((s) => s.name.startsWith("weft_runs_") && "workflow" in s.labels)).toEqual([]);

    const labelled = await appWithSteps({ WEFT_METRICS_WORKFLOW_LABELS: "1" });
    const first = await publishWebhook(labelled, setFields);
    const second = await publishWebhook(labelled, boom);
    for (const runId of [await callWebhook(labelled, first.token), await callWebhook(labelled, second.token)]) {
      await labelled.deps.engine.waitFor(runId, 5_000);
    }
    await eventually(async () => {
      const after = await scrape(labelled);
      expect(sampleValue(after, "weft_runs_started_total", { workflow: first.id })).toBe(1);
      expect(sampleValue(after, "weft_runs_started_total", { workflow: "other" })).toBe(1);
      expect(sampleValue(after, "weft_runs_finished_total", { workflow: first.id, status: "completed" })).toBe(1);
      expect(sampleValue(after, "weft_runs_finished_total", { workflow: "other", status: "failed" })).toBe(1);
      expect(after).not.toContain(second.id);
    });
    await labelled.deps.engine.stop(500);
  });

  test("a schedule's lag is how late it fired after its planned instant, by the scheduler's clock", async () => {
    const h = await triggerApp({ clock: new FakeClock("2025-01-06T08:59:30.000Z") });
    try {
      const every = { name: "trigger", type: "cron", pieceId: "schedule", actionId: "every", config: { interval: 1, unit: "minutes" } };
      const wf = await h.publishWorkflow(definition(every, setFields));
      const planned = Date.parse((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.schedule.nextFireAt);
      h.clock.set(planned + 2_500);
      expect(await h.triggers.scheduler.tick()).toHaveLength(1);
      const text = (await h.req("GET", "/metrics")).text;
      expect(sampleValue(text, "weft_schedule_lag_seconds_count")).toBe(1);
      expect(sampleValue(text, "weft_schedule_lag_seconds_sum")).toBeCloseTo(2.5, 6);
      expect(sampleValue(text, "weft_schedule_lag_seconds_bucket", { le: "1" })).toBe(0);
      expect(sampleValue(text, "weft_schedule_lag_seconds_bucket", { le: "5" })).toBe(1);
    } finally {
      await h.close();
    }
  });

  test("the contract documents /metrics under the scope metrics:read, and /readyz as public", async () => {
    const doc = (await t.req("GET", "/api/openapi.json", { token: null })).body;
    expect(doc.paths["/metrics"].get["x-permission"]).toBe("metrics:read");
    expect(doc.paths["/metrics"].get.security.length).toBeGreaterThan(0);
    expect(doc.paths["/metrics"].get.description).toContain("WEFT_METRICS_ALLOW_CIDRS");
    expect(doc.paths["/readyz"].get["x-permission"]).toBe("public");
    expect(doc.paths["/readyz"].get.security).toEqual([]);
  });
});

describe("who may scrape", () => {
  test("without a token: 401 in the envelope, naming the scope and the address setting", async () => {
    const res = await t.req("GET", "/metrics", { token: null });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
    expect(res.body.error.message).toContain('"metrics:read"');
    expect(res.body.error.message).toContain("WEFT_METRICS_ALLOW_CIDRS (none set)");
  });

  test("a token without metrics:read: 403 naming it; a token with only metrics:read: the series", async () => {
    const reader = await t.token(["run:read"]);
    const refused = await t.req("GET", "/metrics", { token: reader });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    expect(refused.body.error.message).toContain('requires the scope "metrics:read"');
    expect(refused.body.error.message).toContain("WEFT_METRICS_ALLOW_CIDRS");
    const scraper = await t.token(["metrics:read"]);
    expect(await scrape(t, scraper)).toContain("weft_runs_started_total");
    // The scope opens /metrics only.
    expect((await t.req("GET", "/api/runs", { token: scraper })).status).toBe(403);
  });

  test("a caller in WEFT_METRICS_ALLOW_CIDRS scrapes without a token, over a real socket; nothing else opens to it", async () => {
    await onLoopback({ WEFT_METRICS_ALLOW_CIDRS: "127.0.0.0/8, ::1/128" }, async (url) => {
      const res = await fetch(`${url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("# TYPE weft_runs_finished_total counter");
      expect((await fetch(`${url}/api/runs`)).status).toBe(401);
    });
  });

  test("a caller outside WEFT_METRICS_ALLOW_CIDRS needs the token, and is told its own address", async () => {
    await onLoopback({ WEFT_METRICS_ALLOW_CIDRS: "10.0.0.0/8" }, async (url, app) => {
      const refused = await fetch(`${url}/metrics`);
      expect(refused.status).toBe(401);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("UNAUTHORIZED");
      expect(body.error.message).toContain("WEFT_METRICS_ALLOW_CIDRS (10.0.0.0/8); this call came from 127.0.0.1");
      const scraper = await app.token(["metrics:read"]);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${scraper}` } })).status).toBe(200);
    });
  });

  test("a range that is not a CIDR stops the start, naming the variable and the entry", () => {
    expect(() => loadConfig({ WEFT_METRICS_ALLOW_CIDRS: "127.0.0.1/32,localhost" })).toThrow(ConfigError);
    expect(() => loadConfig({ WEFT_METRICS_ALLOW_CIDRS: "localhost" })).toThrow('WEFT_METRICS_ALLOW_CIDRS: "localhost" is not a CIDR range');
    expect(loadConfig({ WEFT_METRICS_ALLOW_CIDRS: " 10.0.0.0/8 ,::1/128" }).metrics.allowCidrs).toEqual(["10.0.0.0/8", "::1/128"]);
    expect(loadConfig({}).metrics).toEqual({ allowCidrs: [], workflowLabels: 0 });
  });
});

describe("the documents", () => {
  const ROOT = join(import.meta.dir, "../..");
  const exported = async () => Object.keys(familyTypes(await scrape(t)));

  test("operations.md lists every weft_ series /metrics exports", async () => {
    const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const families = (await exported()).filter((family) => family.startsWith("weft_"));
    expect(families.length).toBeGreaterThan(10);
    expect(families.filter((family) => !doc.includes(`\`${family}\``))).toEqual([]);
  });

  test("the Grafana dashboard is JSON whose every query reads series /metrics exports", async () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, "docs/grafana-dashboard.json"), "utf8"));
    const expressions: string[] = dashboard.panels.flatMap((panel: any) => panel.targets.map((target: any) => target.expr));
    expect(expressions.length).toBeGreaterThanOrEqual(5);
    const families = new Set(await exported());
    const read = expressions.flatMap((expr) =>
      [...expr.matchAll(/\b((?:weft|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, "")),
    );
    expect(read.filter((name) => !families.has(name))).toEqual([]);
    for (const wanted of [
      "weft_runs_finished_total",
      "weft_step_duration_seconds",
      "weft_runs_queued",
      "weft_webhook_request_duration_seconds",
      "weft_run_writer_commit_duration_seconds",
    ]) {
      expect(read).toContain(wanted);
    }
  });
});
