/**
 * Importing Activepieces flows (docs/import.md): each fixture in test/fixtures/import/activepieces/ is a flow
 * export, template file or flow version written for this test from Activepieces' documented flow format, with
 * the output the flow gives for the stated input. Each is imported through POST /api/workflows/import/foreign;
 * the report must be exactly the fixture's; every one the gate accepts is run to that output (a scheduled flow by a
 * manual run: what its schedule would run). The installed-piece fixture
 * installs the test's fixture Activepieces package from a throwaway npm registry on loopback
 * (test/support/npm-registry.ts); HTTP calls go to a loopback server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURE, FIXTURE_ID, fixturePackage } from "../support/activepieces-fixture";
import { type NpmRegistry, startNpmRegistry } from "../support/npm-registry";
import { testApp, type TestApp } from "../support/app";

const DIR = join(import.meta.dir, "../fixtures/import/activepieces");
const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort();

let t: TestApp;
let registry: NpmRegistry;
let server: ReturnType<typeof Bun.serve>;
let base = "";
beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => Response.json({ item: new URL(req.url).searchParams.get("item"), count: 7 }),
  });
  base = `http://127.0.0.1:${server.port}`;
  registry = await startNpmRegistry();
  await registry.publish(await fixturePackage("1.0.0"));
  t = await testApp({ WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
}, 60_000);
afterAll(async () => {
  t.deps.piecePackages.stop();
  registry.stop();
  server.stop(true);
  await t.deps.triggers.stop();
  await t.deps.engine.stop(500);
  t.db.close();
});

const load = (file: string) => JSON.parse(readFileSync(join(DIR, file), "utf8").replaceAll("BASE", base));

describe("Activepieces fixtures: imported, reported step by step, run to the flow's output", () => {
  test("there are at least ten fixtures, and at least ten of them are run to their output", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
    // A fixture runs unless the gate refuses it (a piece that is not installed): every other one states its output.
    const runnable = fixtures.filter((f) => load(f).gate !== "refused");
    expect(runnable.filter((f) => load(f).expectedOutput !== undefined)).toEqual(runnable);
    expect(runnable.length).toBeGreaterThanOrEqual(10);
  });

  for (const file of fixtures) {
    test(file, async () => {
      const fx = load(file);
      if (fx.installed) expect((await t.req("POST", "/api/pieces/packages", { body: { package: `${FIXTURE}@1.0.0` } })).status).toBe(201);
      const res = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "activepieces", source: fx.flow } });
      expect(`${res.status} ${res.status === 201 ? "" : res.text}`).toBe("201 ");
      const { report, workflow } = res.body.data;
      expect(report.entries.map((e: any) => [e.node, e.outcome])).toEqual(fx.expectedReport);
      expect(report.missingPieces).toEqual(fx.expectedMissing ?? []);
      const validated = await t.req("POST", "/api/workflows/validate", { body: workflow.definition });
      if (fx.gate === "refused") {
        expect(report.hasPlaceholders).toBe(true);
        expect(validated.body.data.valid).toBe(false);
        return;
      }
      if (fx.expectedTrigger) {
        expect(workflow.definition.trigger).toMatchObject(fx.expectedTrigger);
        expect(validated.body.data.errors).toEqual([]);
      }
      let definition = workflow.definition;
      if (fx.installed) {
        // The user's part after an import: choose the connection the report asks for.
        expect(workflow.definition.trigger.nextAction.pieceId).toBe(FIXTURE_ID);
        const conn = await t.req("POST", "/api/connections", { body: { pieceId: FIXTURE_ID, name: "fixture", values: { token: "t", region: "eu" } } });
        expect(conn.status).toBe(201);
        definition.trigger.nextAction.connectionId = conn.body.data.id;
        const saved = await t.req("PUT", `/api/workflows/${workflow.id}`, { body: { definition } });
        expect(saved.status).toBe(200);
        definition = saved.body.data.definition;
      }
      expect((await t.req("POST", "/api/workflows/validate", { body: definition })).body.data.errors).toEqual([]);

      if (fx.call === "webhook") {
        const published = await t.req("POST", `/api/workflows/${workflow.id}/publish`);
        expect(published.status).toBe(200);
        const answer = await t.req("POST", `/webhook/${published.body.data.webhookToken}`, { body: fx.input, token: null });
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual(fx.expectedOutput);
        return;
      }
      const ran = await t.req("POST", `/api/workflows/${workflow.id}/run?wait=20`, { body: fx.input });
      expect(ran.status).toBe(200);
      const run = ran.body.data;
      expect(`${run.status} ${run.errorMessage ?? ""}`).toBe("completed ");
      const outputs = run.steps.filter((s: any) => s.nodeId === fx.step).map((s: any) => s.outputData);
      expect(fx.allIterations ? outputs : outputs[0]).toEqual(fx.expectedOutput);
    }, 60_000);
  }
});

describe("what the import writes", () => {
  test("expressions: step_1['body']['x'] → step_1.output.body.x; a non-identifier key is quoted; loop item and trigger stay", async () => {
    const fx = load("bracket-expressions.json");
    const res = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "activepieces", source: fx.flow, dryRun: true } });
    expect(res.status).toBe(200);
    expect(res.body.data.definition.trigger.nextAction.nextAction.config.input).toEqual({
      id: "{{step_1.output.body.id}}",
      due: "{{step_1.output.body.`total due`}}",
    });
    expect(res.body.data.definition.trigger.nextAction.config.input).toEqual({ o: "{{trigger.body.order}}" });
  });

  test("a legacy BRANCH is a ROUTER with branches true and otherwise; the report says so", async () => {
    const fx = load("legacy-branch.json");
    const res = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "activepieces", source: fx.flow, dryRun: true } });
    const router = res.body.data.definition.trigger.nextAction;
    expect(router.type).toBe("ROUTER");
    expect(router.branches.map((b: any) => [b.name, b.conditions.length, b.firstAction.name])).toEqual([
      ["true", 1, "step_2"],
      ["otherwise", 0, "step_3"],
    ]);
    expect(res.body.data.report.entries.find((e: any) => e.node === "step_1").note).toContain("legacy BRANCH");
  });
});
