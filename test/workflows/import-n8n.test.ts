/**
 * Importing n8n workflows (docs/import.md): each fixture in test/fixtures/import/n8n/ is an n8n workflow JSON
 * written for this test from n8n's public description of its format, with what n8n would give for the
 * stated input. Each is imported through POST /api/workflows/import/foreign; the report must list every node
 * exactly as the fixture says; a runnable one is run (a test run of the draft, or its published webhook) and
 * must give that output (`outputAt`: where in the Weft step's output n8n's item is, e.g. the http step's body).
 * HTTP calls go to a loopback server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp, type TestApp } from "../support/app";

const DIR = join(import.meta.dir, "../fixtures/import/n8n");
const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort();

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base = "";
beforeAll(async () => {
  // The ntfy-style topic and a JSON endpoint, as a real HTTP server on loopback.
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/stock") return Response.json({ item: url.searchParams.get("item"), count: 7 });
      if (url.pathname === "/echo") return Response.json({ got: await req.json(), key: req.headers.get("x-key") });
      return Response.json({ id: "msg-1", topic: url.pathname.slice(1), message: await req.text(), title: req.headers.get("title") });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
});
afterAll(async () => {
  server.stop(true);
  await t.deps.triggers.stop();
  await t.deps.engine.stop(500);
  t.db.close();
});

function load(file: string) {
  return JSON.parse(readFileSync(join(DIR, file), "utf8").replaceAll("BASE", base));
}

async function runToEnd(workflowId: string, input: unknown) {
  const res = await t.req("POST", `/api/workflows/${workflowId}/run?wait=20`, { body: input });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("n8n fixtures: imported, reported node by node, run to n8n's output", () => {
  test("there are the fixtures this suite documents, and at least twenty of them are run to their output", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(20);
    // Run below: neither refused by the gate nor checked only for its trigger or its steps.
    const run = fixtures.map(load).filter((fx) => fx.gate !== "refused" && !fx.expectedSteps && !fx.expectedTrigger);
    expect(run.length).toBeGreaterThanOrEqual(20);
    for (const fx of run) expect(fx.expectedOutput !== undefined || fx.expectedText !== undefined).toBe(true);
  });

  for (const file of fixtures) {
    test(file, async () => {
      let fx = load(file);
      if (fx.sub) {
        // A sub-workflow the fixture's Execute Workflow calls, imported first; the caller names it by its Weft id.
        const sub = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "n8n", source: fx.sub } });
        expect(sub.status).toBe(201);
        expect((await t.req("POST", `/api/workflows/${sub.body.data.workflow.id}/publish`)).status).toBe(200);
        fx = JSON.parse(JSON.stringify(fx).replaceAll("SUB_ID", sub.body.data.workflow.id));
      }
      const res = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "n8n", source: fx.workflow } });
      expect(`${res.status} ${res.status === 201 ? "" : res.text}`).toBe("201 ");
      const { report, workflow } = res.body.data;
      expect(report.entries.map((e: any) => [e.node, e.outcome])).toEqual(fx.expectedReport);
      for (const e of report.entries) if (e.outcome !== "mapped" && e.node !== undefined) expect(e.note).toEqual(expect.any(String));
      expect(workflow.status).toBe("draft");
      expect(workflow.name).toBe(fx.workflow.name);

      const validated = await t.req("POST", "/api/workflows/validate", { body: workflow.definition });
      if (fx.gate === "refused") {
        expect(report.hasPlaceholders).toBe(true);
        expect(validated.body.data.valid).toBe(false);
        return;
      }
      expect(report.hasPlaceholders).toBe(false);
      if (fx.expectedTrigger) expect(workflow.definition.trigger).toMatchObject(fx.expectedTrigger);
      if (fx.expectedSteps) {
        const steps: Array<[string, string, string]> = [];
        for (let n = workflow.definition.trigger; n; n = n.nextAction) steps.push([n.name, n.pieceId, n.actionId]);
        expect(steps).toEqual(fx.expectedSteps);
        return;
      }
      expect(validated.body.data.errors).toEqual([]);
      if (fx.expectedTrigger) return;

      if (fx.call === "webhook") {
        const published = await t.req("POST", `/api/workflows/${workflow.id}/publish`);
        expect(published.status).toBe(200);
        const answer = await t.req("POST", `/webhook/${published.body.data.webhookToken}`, { body: fx.input, token: null });
        expect(answer.status).toBe(fx.expectedStatus ?? 200);
        if (fx.expectedHeader) expect(answer.headers.get(fx.expectedHeader[0])).toBe(fx.expectedHeader[1]);
        if (fx.expectedText !== undefined) expect(answer.text).toBe(fx.expectedText);
        else expect(answer.body).toEqual(fx.expectedOutput);
        return;
      }
      const run = await runToEnd(workflow.id, fx.input);
      expect(`${run.status} ${run.errorMessage ?? ""}`).toBe("completed ");
      const outputs = run.steps.filter((s: any) => s.nodeId === fx.step).map((s: any) => (fx.outputAt ? s.outputData[fx.outputAt] : s.outputData));
      expect(fx.allIterations ? outputs : outputs[0]).toEqual(fx.expectedOutput);
    });
  }
});

describe("the import's answers", () => {
  test("dryRun answers the report and the definition and stores nothing", async () => {
    const fx = load("if-branches.json");
    const before = (await t.req("GET", "/api/workflows")).body.total;
    const res = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "n8n", source: fx.workflow, dryRun: true } });
    expect(res.status).toBe(200);
    expect(res.body.data.dryRun).toBe(true);
    expect(res.body.data.workflow).toBeUndefined();
    expect(res.body.data.definition.trigger.nextAction.type).toBe("ROUTER");
    expect((await t.req("GET", "/api/workflows")).body.total).toBe(before);
  });

  test("a source without nodes is a 400 naming the field; an unknown format is a 400", async () => {
    const bad = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "n8n", source: { name: "x" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("nodes");
    const format = await t.req("POST", "/api/workflows/import/foreign", { body: { format: "zapier", source: {} } });
    expect(format.status).toBe(400);
  });

  test("expressions: $json, $('Node').item.json, $node[...].json, $now and JavaScript operators", async () => {
    const res = await t.req("POST", "/api/workflows/import/foreign", {
      body: {
        format: "n8n",
        dryRun: true,
        source: {
          nodes: [
            { name: "Hook", type: "n8n-nodes-base.webhook", typeVersion: 2, parameters: {} },
            {
              name: "Fields",
              type: "n8n-nodes-base.set",
              typeVersion: 3.4,
              parameters: {
                assignments: {
                  assignments: [
                    { name: "a", value: "={{ $json.body.x === 1 && $node[\"Hook\"].json.query.y !== 'z' }}" },
                    { name: "when", value: "={{ $now }}" },
                    { name: "literal", value: "plain text" },
                    { name: "js", value: "={{ $json.body.name.toUpperCase() }}" },
                  ],
                },
              },
            },
          ],
          connections: { Hook: { main: [[{ node: "Fields", index: 0 }]] } },
        },
      },
    });
    expect(res.status).toBe(200);
    const step = res.body.data.definition.trigger.nextAction;
    expect(step.config.fields).toEqual({
      a: "{{ trigger.body.x = 1 and trigger.query.y != 'z' }}",
      when: "{{ $now() }}",
      literal: "plain text",
      js: "{{ trigger.body.name.toUpperCase() }}",
    });
    const entry = res.body.data.report.entries.find((e: any) => e.node === "Fields");
    expect(entry.outcome).toBe("approximated");
    expect(entry.note).toContain("$json.body.name.toUpperCase()");
  });

  test("weft import FILE --from n8n: prints the report and imports a draft (--dry-run changes nothing)", async () => {
    const target = await testApp();
    const file = join(mkdtempSync(join(tmpdir(), "weft-n8n-")), "workflow.json");
    writeFileSync(file, JSON.stringify(load("unmapped-node.json").workflow));
    const cli = async (args: string[]) => {
      const env = { ...process.env, WEFT_DATA_DIR: target.dataDir, WEFT_LOG_LEVEL: "error", WEFT_PORT: "0" } as Record<string, string>;
      if (target.databaseUrl) env.WEFT_DATABASE_URL = target.databaseUrl;
      const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], { env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    };
    const dry = await cli(["import", file, "--from", "n8n", "--dry-run"]);
    expect(`${dry.code} ${dry.stderr}`).toBe("0 ");
    expect(dry.stdout).toContain("not_mapped   Google Sheets (n8n-nodes-base.googleSheets) → Google_Sheets: no Weft step for n8n-nodes-base.googleSheets");
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect((await target.req("GET", "/api/workflows")).body.total).toBe(0);
    const applied = await cli(["import", file, "--from", "n8n"]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('imported as the draft "Unmapped"');
    expect((await target.req("GET", "/api/workflows")).body.data.map((w: any) => [w.name, w.status])).toEqual([["Unmapped", "draft"]]);
    const wrong = await cli(["import", file, "--from", "zapier"]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("the formats are n8n and activepieces");
    await target.deps.engine.stop(500);
    target.db.close();
  }, 60_000);
});
