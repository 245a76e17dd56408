/**
 * The canonical examples (/work/shared/examples/*.json) work exactly as written: each is POSTed as-is,
 * validates, publishes and — where it can run without the outside world — runs. The files are never
 * adjusted here; when a piece and an example disagree, the piece is what changes (docs/examples.md).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_TEMPLATES } from "../../src/core/templates/catalog";
import { testApp, type TestApp } from "../support/app";

import { EXAMPLES_DIR, SHARED_EXAMPLES_DIR } from "../support/examples";
const read = (file: string) => JSON.parse(readFileSync(join(EXAMPLES_DIR, file), "utf8"));

/**
 * What `POST /api/workflows/validate` says about each example: valid, no errors, and exactly these
 * warnings. A property name a piece does not declare would show up here as UNKNOWN_PROPERTY.
 * schedule-fetch-route names an error workflow (a fixed uuid) that no fresh workspace holds: that is a
 * warning, not an error, so the example publishes (docs/examples.md).
 */
const EXPECTED_WARNINGS: Record<string, Array<[path: string, code: string]>> = {
  "loop-orders.json": [],
  "webhook-greet-respond.json": [],
  "schedule-fetch-route.json": [["settings.errorWorkflowId", "UNKNOWN_WORKFLOW"]],
};

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.deps.triggers.stop();
  await t.deps.engine.stop(500);
  t.db.close();
});

async function createAndPublish(file: string) {
  const created = await t.req("POST", "/api/workflows", { body: read(file) });
  expect(`${file}: ${created.status}`).toBe(`${file}: 201`);
  const published = await t.req("POST", `/api/workflows/${created.body.data.id}/publish`);
  expect(`${file}: ${published.status} ${published.status === 200 ? "" : published.text}`).toBe(`${file}: 200 `);
  return published.body.data;
}

describe("every example, POSTed as-is", () => {
  const files = readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();

  test("the examples directory holds the three files this suite knows", () => {
    expect(files).toEqual(Object.keys(EXPECTED_WARNINGS).sort());
  });

  for (const file of files) {
    test(`${file}: create 201, validate valid with only the expected warnings, publish 200`, async () => {
      const example = read(file);
      const created = await t.req("POST", "/api/workflows", { body: example });
      expect(created.status).toBe(201);
      expect(created.body.data.name).toBe(example.name);
      expect(created.body.data.status).toBe("draft");
      expect(created.body.data.triggerType).toBe(example.definition.trigger.type);

      const validated = await t.req("POST", "/api/workflows/validate", { body: example.definition });
      expect(validated.status).toBe(200);
      expect(validated.body.data.errors).toEqual([]);
      expect(validated.body.data.valid).toBe(true);
      expect(validated.body.data.warnings.map((w: any) => [w.path, w.code])).toEqual(EXPECTED_WARNINGS[file]);

      const published = await t.req("POST", `/api/workflows/${created.body.data.id}/publish`);
      expect(published.status).toBe(200);
      expect(published.body.data.latestVersionId).toEqual(expect.any(String));
      expect(published.body.data.hasUnpublishedChanges).toBe(false);
    });
  }
});

describe("loop-orders.json: manual trigger → loop → skipped delay → sum", () => {
  test("a production run with two lines completes with the loop's outputs, the skipped wait and units 5", async () => {
    const wf = await createAndPublish("loop-orders.json");
    const lines = [
      { sku: "a", qty: 2 },
      { sku: "b", qty: 3 },
    ];
    const res = await t.req("POST", `/api/workflows/${wf.id}/run?environment=production&wait=10`, { body: { lines } });
    expect(res.status).toBe(200);
    const run = res.body.data;
    expect(run.status).toBe("completed");
    expect(run.environment).toBe("production");
    expect(run.triggerType).toBe("api");
    expect(run.errorMessage).toBeNull();
    const byNode = (name: string) => run.steps.filter((s: any) => s.nodeId === name);

    expect(byNode("confirm").map((s: any) => [s.status, s.outputData])).toEqual([
      ["completed", { text: "line 0: a x 2" }],
      ["completed", { text: "line 1: b x 3" }],
    ]);
    const [loop] = byNode("eachLine");
    expect(loop.status).toBe("completed");
    expect(loop.outputData.iterations).toEqual([{ confirm: { text: "line 0: a x 2" } }, { confirm: { text: "line 1: b x 3" } }]);

    const [wait] = byNode("wait");
    expect(wait.status).toBe("skipped");
    expect(wait.outputData).toBeNull();

    const [total] = byNode("total");
    expect(total.status).toBe("completed");
    expect(total.outputData.units).toBe(5);
    expect(run.steps.every((s: any) => s.status !== "failed")).toBe(true);
  });
});

describe("webhook-greet-respond.json: webhook → set_fields → webhook.respond", () => {
  test("its public URL answers synchronously with the greeting built from the call", async () => {
    const wf = await createAndPublish("webhook-greet-respond.json");
    expect(wf.webhookToken).toEqual(expect.any(String));
    const res = await t.req("POST", `/webhook/${wf.webhookToken}`, { body: { name: "Ada", n: 21 }, token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body).toEqual({ name: "Ada", greeting: "hello Ada", doubled: 42 });

    const runId = res.headers.get("x-weft-run-id");
    expect(runId).toEqual(expect.any(String));
    let run: any;
    for (let i = 0; i < 100; i++) {
      run = (await t.req("GET", `/api/runs/${runId}`)).body.data;
      if (run.status === "completed" || run.status === "failed") break;
      await Bun.sleep(20);
    }
    expect(run.status).toBe("completed");
    expect(run.triggerType).toBe("webhook");
    expect(run.steps.find((s: any) => s.nodeId === "reply")).toMatchObject({ status: "completed", outputData: { status: 200 } });
  });
});

describe("schedule-fetch-route.json: cron → http (error branch) → router", () => {
  test("the stored definition keeps the router's branches, OR-of-AND conditions and the error branch; every node is valid", async () => {
    const example = read("schedule-fetch-route.json");
    const wf = await createAndPublish("schedule-fetch-route.json");
    const stored = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data.definition;
    const fetch = stored.trigger.nextAction;
    expect(fetch.onErrorAction).toMatchObject({
      name: "note_failure",
      pieceId: "store",
      actionId: "put",
      config: { key: "last_error", value: "{{fetch.error.message}}" },
    });
    const route = fetch.nextAction;
    expect(route.type).toBe("ROUTER");
    expect(route.branches.map((b: any) => b.name)).toEqual(["low", "otherwise"]);
    expect(route.branches.map((b: any) => b.conditions)).toEqual(example.definition.trigger.nextAction.nextAction.branches.map((b: any) => b.conditions));
    expect(route.branches.map((b: any) => b.firstAction.config)).toEqual([{ tags: ["low-stock"] }, { tags: ["ok"] }]);
    const nodes = [stored.trigger, fetch, fetch.onErrorAction, route, ...route.branches.map((b: any) => b.firstAction)];
    expect(nodes.map((n: any) => [n.name, n.valid])).toEqual(nodes.map((n: any) => [n.name, true]));
    expect(stored.settings).toEqual(example.definition.settings);
    expect(stored.variables).toEqual({ apiBase: "https://inventory.example.com" });

    // Publishing scheduled it: the next instant is the top of an hour, within the hour (no timers run here).
    const trigger = (await t.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data;
    expect(trigger.status).toBe("active");
    expect(trigger.schedule.schedule).toContain("Europe/Berlin");
    const next = new Date(trigger.schedule.nextFireAt);
    expect([next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([0, 0]);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(trigger.schedule.lastRunId).toBeNull();
  });

  // Never calls inventory.example.com: the fetch step's output is pinned, and a pinned step is not executed.
  test("with the fetch output pinned, a test run takes the branch its conditions pick (number_lt OR text_eq, else the fallback)", async () => {
    const created = (await t.req("POST", "/api/workflows", { body: read("schedule-fetch-route.json") })).body.data;
    const cases: Array<[body: Record<string, unknown>, tag: string]> = [
      [{ count: 3, status: "some" }, "low-stock"],
      [{ count: 50, status: "empty" }, "low-stock"],
      [{ count: 50, status: "plenty" }, "ok"],
    ];
    for (const [body, tag] of cases) {
      const pin = await t.req("PUT", `/api/workflows/${created.id}/pinned-data/fetch`, { body: { data: { status: 200, headers: {}, body } } });
      expect(pin.status).toBe(200);
      const res = await t.req("POST", `/api/workflows/${created.id}/run?environment=test&wait=10`, { body: {} });
      expect(res.status).toBe(200);
      const run = res.body.data;
      const fetchStep = run.steps.find((s: any) => s.nodeId === "fetch");
      expect(fetchStep.inputData).toEqual({ pinned: true });
      expect(`${JSON.stringify(body)} → ${run.status} ${run.tags.join(",")}`).toBe(`${JSON.stringify(body)} → completed ${tag}`);
      expect(run.steps.some((s: any) => s.nodeId === (tag === "ok" ? "tag_low" : "tag_ok"))).toBe(false);
    }
  });
});

describe("built-in templates use the same property names as the pieces", () => {
  test("no template step carries a property its piece does not declare or ignores", async () => {
    for (const template of BUILTIN_TEMPLATES) {
      const result = (await t.req("POST", "/api/workflows/validate", { body: template.definition })).body.data;
      const ignored = result.warnings.filter((w: any) => ["UNKNOWN_PROPERTY", "INACTIVE_PROPERTY", "TYPE_MISMATCH"].includes(w.code));
      expect(`${template.slug}: ${JSON.stringify(ignored)}`).toBe(`${template.slug}: []`);
    }
  });
});

describe("the repository's copy of the examples", () => {
  test("matches ../shared/examples file for file when that folder sits beside the checkout", () => {
    if (!existsSync(SHARED_EXAMPLES_DIR)) return; // a fresh clone without shared/: the copy is all there is
    const shared = readdirSync(SHARED_EXAMPLES_DIR)
      .filter((f) => f.endsWith(".json"))
      .sort();
    expect(
      readdirSync(EXAMPLES_DIR)
        .filter((f) => f.endsWith(".json"))
        .sort(),
    ).toEqual(shared);
    for (const file of shared) {
      expect(JSON.parse(readFileSync(join(EXAMPLES_DIR, file), "utf8"))).toEqual(JSON.parse(readFileSync(join(SHARED_EXAMPLES_DIR, file), "utf8")));
    }
  });
});
