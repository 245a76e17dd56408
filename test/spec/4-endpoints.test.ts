/**
 * Spec 2.4, 3.1, 4.3, 4.4, 4.7 and 6.2 against a real server process (fresh data dir, bootstrap
 * token), as an outside reviewer runs them: the canonical webhook example over real sockets, run and
 * step field types, the wait bounds, unpublish's row of the state table, and "no body is read".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { startServer, type ServerHandle } from "../support/server";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const greet = JSON.parse(readFileSync(resolve(import.meta.dir, "../fixtures/examples/webhook-greet-respond.json"), "utf8"));

let s: ServerHandle;
let wf: any;
beforeAll(async () => {
  s = await startServer();
  wf = await call("POST", "/api/workflows", greet).then((r) => r.body.data);
});
afterAll(async () => {
  await s?.stop();
});

async function call(method: string, path: string, body?: unknown, init: { raw?: string; headers?: Record<string, string> } = {}) {
  const res = await s.fetch(path, {
    method,
    headers: { "content-type": "application/json", ...init.headers },
    body: init.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text };
}

describe("4.3 POST /api/workflows/{id}/run: the wait bounds (decision: out of range is a 400 naming 0–30; docs/api.md §4)", () => {
  const table: [string, number[]][] = [
    ["", [202]],
    ["?wait=0", [200, 202]],
    ["?wait=5", [200]],
    ["?wait=30", [200]],
    ["?wait=31", [400]],
    ["?wait=-1", [400]],
    ["?wait=abc", [400]],
    ["?wait=2.5", [400]],
    ["?wait=", [400]],
  ];
  for (const [query, statuses] of table) {
    test(`run${query || " (no wait)"} → ${statuses.join(" or ")}`, async () => {
      const res = await call("POST", `/api/workflows/${wf.id}/run${query}`, { name: "Ada", n: 2 });
      expect(statuses).toContain(res.status);
      if (res.status === 400) {
        expect(res.body.error.code).toBe("VALIDATION_FAILED");
        expect(res.body.error.message).toContain("0 to 30");
      } else {
        expect(res.body.data.triggerType).toBe("api");
        expect(res.body.data.environment).toBe("test");
      }
    });
  }
});

describe("2.4 Run and Step: every field with its type (a finished test run of the webhook example)", () => {
  let run: any;
  beforeAll(async () => {
    const res = await call("POST", `/api/workflows/${wf.id}/run?environment=test&wait=10`, { name: "Ada", n: 2 });
    expect(res.status).toBe(200);
    run = res.body.data;
  });
  const nullable = (check: (v: any) => boolean) => (v: any) => v === null || check(v);
  const runTable: [string, (v: any) => boolean][] = [
    ["id", (v) => UUID.test(v)],
    ["workflowId", (v) => v === wf.id],
    ["workspaceId", (v) => v === wf.workspaceId],
    ["orgId", (v) => v === wf.orgId],
    ["status", (v) => v === "completed"],
    ["triggerType", (v) => v === "api"],
    ["triggerData", (v) => v?.body?.name === "Ada"],
    ["startedAt", (v) => ISO.test(v)],
    ["finishedAt", (v) => ISO.test(v)],
    ["durationMs", (v) => Number.isInteger(v) && v >= 0],
    ["errorMessage", (v) => v === null],
    ["tags", (v) => Array.isArray(v)],
    ["environment", (v) => v === "test"],
    ["steps", (v) => Array.isArray(v) && v.length === 2],
    ["versionId", nullable((v) => UUID.test(v))],
    ["executedVersionId", nullable((v) => UUID.test(v))],
    ["versionNumber", nullable(Number.isInteger)],
    ["executedVersionNumber", nullable(Number.isInteger)],
    ["startedFromStep", nullable((v) => typeof v === "string")],
    ["retryOfRunId", nullable((v) => UUID.test(v))],
    ["retriedByRunId", nullable((v) => UUID.test(v))],
    ["workflowName", (v) => v === "Greet callers"],
    ["workflowTriggerType", (v) => v === "webhook"],
    ["stepTotal", (v) => v === 2],
    ["stepFailed", (v) => v === 0],
    ["waitStep", (v) => v === null],
    ["resumeMode", (v) => v === null],
    ["resumeAt", (v) => v === null],
  ];
  for (const [field, check] of runTable) {
    test(`run.${field}`, () => {
      expect(Object.hasOwn(run, field)).toBe(true);
      expect({ field, value: run[field], ok: check(run[field]) }).toEqual({ field, value: run[field], ok: true });
    });
  }

  test("every step field", () => {
    for (const step of run.steps) {
      expect(step.id).toMatch(UUID);
      expect(step.runId).toBe(run.id);
      for (const key of ["nodeId", "pieceId", "actionId", "displayName", "status"]) expect(typeof step[key]).toBe("string");
      expect(step.status).toBe("completed");
      expect(typeof step.inputData).toBe("object");
      expect(typeof step.outputData).toBe("object");
      expect(step.errorMessage).toBeNull();
      expect(Number.isInteger(step.retryCount)).toBe(true);
      expect(step.startedAt).toMatch(ISO);
      expect(step.finishedAt).toMatch(ISO);
      expect(Number.isInteger(step.durationMs)).toBe(true);
    }
    expect(run.steps.map((x: any) => [x.nodeId, x.displayName])).toEqual([
      ["greet", "Build greeting"],
      ["reply", "Reply"],
    ]);
    expect(run.steps[0].outputData).toEqual({ name: "Ada", greeting: "hello Ada", doubled: 4 });
  });

  test("the list carries the same run without steps, pagination all integers", async () => {
    const list = await call("GET", `/api/runs?environment=test&workflowId=${wf.id}&limit=100`);
    expect(list.status).toBe(200);
    const row = list.body.data.find((r: any) => r.id === run.id);
    expect(row).toBeDefined();
    expect(Object.hasOwn(row, "steps")).toBe(false);
    for (const key of ["page", "limit", "total", "totalPages"]) expect(Number.isInteger(list.body.pagination[key])).toBe(true);
  });
});

describe("3.1 live → unpublish → paused, and 6.2 the public webhook URL, over real sockets", () => {
  test("404 in the envelope while paused, the same URL answers after re-publish, token and versions kept", async () => {
    const created = (await call("POST", "/api/workflows", { ...greet, name: "Greet over sockets" })).body.data;
    const hook = `/webhook/${created.webhookToken}`;
    const live = (await call("POST", `/api/workflows/${created.id}/publish`)).body.data;
    expect(live.status).toBe("active");
    const answered = await fetch(`${s.url}${hook}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Ada", n: 1 }),
    });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ name: "Ada", greeting: "hello Ada", doubled: 2 });

    const paused = await call("POST", `/api/workflows/${created.id}/unpublish`);
    expect(paused.status).toBe(200);
    expect(paused.body.data.status).toBe("paused");
    expect(paused.body.data.webhookToken).toBe(created.webhookToken);
    expect(paused.body.data.latestVersionId).toBe(live.latestVersionId);
    expect(paused.body.data.definition).toEqual(live.definition);
    expect(paused.body.data.definitionRev).toBe(live.definitionRev);
    const gone = await fetch(`${s.url}${hook}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe("NOT_FOUND");

    const again = await call("POST", `/api/workflows/${created.id}/unpublish`);
    expect([again.status, again.body.data.status]).toEqual([200, "paused"]);
    expect((await call("GET", `/api/workflows/${created.id}/versions`)).body.total).toBe(1);

    const republished = (await call("POST", `/api/workflows/${created.id}/publish`)).body.data;
    expect(republished.webhookToken).toBe(created.webhookToken);
    const back = await fetch(`${s.url}${hook}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Bo", n: 2 }),
    });
    expect(back.status).toBe(200);
    expect((await back.json()).greeting).toBe("hello Bo");
  });

  test("a production run in flight is not cancelled by unpublish", async () => {
    const slow = {
      name: "slow",
      definition: {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "manual",
          nextAction: {
            name: "slow",
            type: "PIECE",
            pieceId: "code",
            actionId: "run_code",
            config: { code: "const t = Date.now(); while (Date.now() - t < 800) {} return { done: true };" },
          },
        },
      },
    };
    const created = (await call("POST", "/api/workflows", slow)).body.data;
    expect((await call("POST", `/api/workflows/${created.id}/publish`)).status).toBe(200);
    const started = (await call("POST", `/api/workflows/${created.id}/run?environment=production`, {})).body.data;
    expect((await call("POST", `/api/workflows/${created.id}/unpublish`)).status).toBe(200);
    let run: any;
    for (let i = 0; i < 100; i++) {
      run = (await call("GET", `/api/runs/${started.id}`)).body.data;
      if (!["pending", "running"].includes(run.status)) break;
      await Bun.sleep(50);
    }
    expect(run.status).toBe("completed");
    expect(run.steps[0].outputData).toEqual({ done: true });
  });
});

describe("4.4 and 4.7: no body is read", () => {
  test("unpublish ignores a body, even one that is not JSON", async () => {
    for (const raw of ["not json {", "[1,2]", '{"status":"active"}']) {
      const res = await call("POST", `/api/workflows/${wf.id}/unpublish`, undefined, { raw });
      expect({ raw, status: res.status }).toEqual({ raw, status: 200 });
      expect(res.body.data.id).toBe(wf.id);
    }
  });

  test("oauth2/start ignores a body, even one that is not JSON", async () => {
    const connection = (
      await call("POST", "/api/connections", {
        name: "generic",
        pieceId: "oauth2",
        clientId: "cid",
        clientSecret: "secret",
        config: { authUrl: "https://auth.example.com/authorize", tokenUrl: "https://auth.example.com/token", scope: "read" },
      })
    ).body.data;
    expect(connection.id).toMatch(UUID);
    for (const raw of ["not json {", '{"authorizeUrl":"https://evil.example"}']) {
      const res = await call("POST", `/api/connections/${connection.id}/oauth2/start`, undefined, { raw });
      expect({ raw, status: res.status }).toEqual({ raw, status: 200 });
      expect(Object.keys(res.body.data).sort()).toEqual(["authorizeUrl", "redirectUri"]);
      expect(res.body.data.authorizeUrl).toStartWith("https://auth.example.com/authorize?");
      expect(res.body.data.redirectUri).toBe(`${s.url}/api/oauth2/callback`);
    }
  });

  test("neither accepts Idempotency-Key", async () => {
    const res = await call("POST", `/api/workflows/${wf.id}/unpublish`, undefined, { headers: { "idempotency-key": "k-unpublish" } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("Idempotency-Key");
  });
});
