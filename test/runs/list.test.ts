/**
 * GET /api/runs: one test per filter of the query rules (docs/api.md "4. Run"), plus the sorts and pages.
 * Runs are seeded as rows (known start times, statuses and durations) in an app whose engine never
 * starts, so nothing executes them.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { newId } from "../../src/lib/ids";
import { RunList } from "../../src/schema/run";
import type { RunRow } from "../../src/store/run-rows";
import { runRow } from "../support/run-rows";
import { testApp, type TestApp } from "../support/app";

let t: TestApp;
let workspaceId: string;
let orgId: string;
const W1 = newId();
const W2 = newId();
const OTHER_WORKFLOW = newId();
const base = Date.parse("2025-03-01T10:00:00.000Z");
let seeded: RunRow[] = [];

function row(i: number, fields: Partial<RunRow>): RunRow {
  return runRow(newId(), {
    workspace_id: workspaceId,
    org_id: orgId,
    workflow_id: W1,
    workflow_name: "one",
    workflow_trigger_type: "manual",
    trigger_type: "api",
    trigger_data: '{"body":{},"headers":{},"query":{}}',
    version_id: null,
    version_number: null,
    executed_version_id: null,
    executed_version_number: null,
    definition_hash: "seed",
    started_at: new Date(base + i * 1000).toISOString(),
    finished_at: new Date(base + i * 1000 + 50).toISOString(),
    duration_ms: 50,
    event_seq: 3,
    ...fields,
  });
}

const list = async (query = "", token?: string) => {
  const res = await t.req("GET", `/api/runs${query}`, { token });
  expect(res.status).toBe(200);
  return res.body as { data: any[]; pagination: { page: number; limit: number; total: number; totalPages: number } };
};
const ids = (body: { data: any[] }) => body.data.map((r) => r.id);

beforeAll(async () => {
  t = await testApp();
  const me = await t.req("GET", "/api/auth/me");
  workspaceId = me.body.data.workspace.id;
  orgId = me.body.data.workspace.orgId;
  const other = await t.otherWorkspace();
  // 24 production runs of two workflows, 3 test runs, 2 runs of another workspace; start times 1 s apart.
  let i = 0;
  for (; i < 24; i++) {
    const status = (["completed", "failed", "cancelled", "pending", "running", "paused"] as const)[i % 6];
    const trigger = (["api", "webhook", "cron", "manual"] as const)[i % 4];
    const finished = status === "completed" || status === "failed" || status === "cancelled";
    seeded.push(
      row(i, {
        workflow_id: i % 3 === 0 ? W2 : W1,
        status,
        trigger_type: trigger,
        duration_ms: finished ? 1000 + ((i * 37) % 500) : null,
        finished_at: finished ? new Date(base + i * 1000 + 1000).toISOString() : null,
        tags: i === 5 ? '["vip","eu"]' : i === 7 ? '["vip-extra"]' : "[]",
      }),
    );
  }
  for (; i < 27; i++) seeded.push(row(i, { environment: "test" }));
  for (; i < 29; i++) seeded.push(row(i, { workspace_id: other.workspaceId, workflow_id: OTHER_WORKFLOW }));
  // Through the engine's run writer: each database's own layout (the PostgreSQL Db answers no SQL).
  await t.deps.engine.writerForTests.write(seeded.map((row) => ({ op: "insertRun", row })));
});

const production = () => seeded.filter((r) => r.workspace_id === workspaceId && r.environment === "production");
const newestFirst = (rows: RunRow[]) => [...rows].sort((a, b) => b.started_at.localeCompare(a.started_at)).map((r) => r.id);

describe("GET /api/runs envelope and defaults", () => {
  test("returns the workspace's production runs newest first, without steps, in the run-list envelope", async () => {
    const body = await list();
    expect(Object.keys(body).sort()).toEqual(["data", "pagination"]);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 24, totalPages: 2 });
    expect(ids(body)).toEqual(newestFirst(production()).slice(0, 20));
    for (const run of body.data) {
      expect(run.steps).toBeUndefined();
      expect(run.workspaceId).toBe(workspaceId);
      expect(run.environment).toBe("production");
    }
  });

  test("the answer is JSON the contract's RunList schema accepts, with the request's id (a reader thread's text, sent as it is)", async () => {
    const res = await t.req("GET", "/api/runs?environment=all&limit=100", { headers: { "x-request-id": "list-envelope" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(res.headers.get("x-request-id")).toBe("list-envelope");
    // Elysia checks only the answers it serialises: this one is checked here.
    expect([...Value.Errors(RunList, res.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
    expect(res.body.data.length).toBe(27);
    expect(res.body.data[0].triggerData).toEqual({ body: {}, headers: {}, query: {} });
  });

  test("an empty result is [] with total 0", async () => {
    const body = await list(`?workflowId=${newId()}`);
    expect(body.data).toEqual([]);
    expect(body.pagination.total).toBe(0);
  });

  test("another workspace sees only its own runs", async () => {
    const other = await t.otherWorkspace();
    const body = await list("?environment=all", other.token);
    expect(body.pagination.total).toBe(0);
    const bound = await list(`?workflowId=${OTHER_WORKFLOW}`);
    expect(bound.pagination.total).toBe(0);
  });

  test("needs run:read", async () => {
    const token = await t.token(["workflow:read"]);
    const res = await t.req("GET", "/api/runs", { token });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("run:read");
  });
});

describe("query rules, filter by filter", () => {
  test("page: 1-based; below 1 or unparseable becomes 1", async () => {
    const all = newestFirst(production());
    expect(ids(await list("?page=2&limit=5"))).toEqual(all.slice(5, 10));
    expect((await list("?page=2&limit=5")).pagination).toEqual({ page: 2, limit: 5, total: 24, totalPages: 5 });
    for (const bad of ["0", "-3", "abc", "1.5", ""]) {
      const body = await list(`?page=${bad}&limit=5`);
      expect(body.pagination.page).toBe(1);
      expect(ids(body)).toEqual(all.slice(0, 5));
    }
    expect((await list("?page=99&limit=5")).data).toEqual([]);
  });

  test("limit: 1–100, default 20; outside or unparseable becomes 20", async () => {
    expect((await list("?limit=3")).data.length).toBe(3);
    expect((await list("?limit=100")).pagination.limit).toBe(100);
    for (const bad of ["0", "101", "-1", "ten", "2.5"]) {
      const body = await list(`?limit=${bad}`);
      expect(body.pagination.limit).toBe(20);
      expect(body.data.length).toBe(20);
    }
  });

  test("status: one of the six filters; another value is ignored", async () => {
    for (const status of ["pending", "running", "completed", "failed", "cancelled", "paused"]) {
      const body = await list(`?status=${status}&limit=100`);
      expect(body.data.length).toBe(production().filter((r) => r.status === status).length);
      expect(body.data.every((r) => r.status === status)).toBe(true);
    }
    expect((await list("?status=done")).pagination.total).toBe(24);
  });

  test("environment: production by default; test or all show test runs; unrecognised falls back to production", async () => {
    expect((await list()).pagination.total).toBe(24);
    const testRuns = await list("?environment=test");
    expect(testRuns.pagination.total).toBe(3);
    expect(testRuns.data.every((r) => r.environment === "test")).toBe(true);
    expect((await list("?environment=all")).pagination.total).toBe(27);
    expect((await list("?environment=staging")).pagination.total).toBe(24);
    expect((await list("?environment=staging")).data.every((r) => r.environment === "production")).toBe(true);
  });

  test("triggerType: the run vocabulary filters; another value is ignored", async () => {
    const webhook = await list("?triggerType=webhook&limit=100");
    expect(webhook.data.length).toBe(production().filter((r) => r.trigger_type === "webhook").length);
    expect(webhook.data.every((r) => r.triggerType === "webhook")).toBe(true);
    expect((await list("?triggerType=subflow")).pagination.total).toBe(0);
    expect((await list("?triggerType=telepathy")).pagination.total).toBe(24);
  });

  test("workflowId: a uuid filters; a non-UUID is ignored", async () => {
    const body = await list(`?workflowId=${W2}&limit=100`);
    expect(body.data.length).toBe(production().filter((r) => r.workflow_id === W2).length);
    expect(body.data.every((r) => r.workflowId === W2)).toBe(true);
    expect((await list("?workflowId=not-a-uuid")).pagination.total).toBe(24);
  });

  test("sort: oldest = oldest start first; duration = longest first, runs without duration last; other = newest first", async () => {
    const oldest = await list("?sort=oldest&limit=100");
    expect(ids(oldest)).toEqual(newestFirst(production()).reverse());
    const byDuration = await list("?sort=duration&limit=100");
    const durations = byDuration.data.map((r) => r.durationMs);
    const withDuration = durations.filter((d) => d !== null);
    expect(withDuration).toEqual([...withDuration].sort((a, b) => b - a));
    expect(durations.slice(withDuration.length).every((d) => d === null)).toBe(true);
    expect(durations.indexOf(null)).toBe(withDuration.length);
    expect(ids(await list("?sort=fastest"))).toEqual(newestFirst(production()).slice(0, 20));
  });
});

describe("rules under the table", () => {
  test("invalid filter values are dropped silently while valid ones apply", async () => {
    const body = await list(`?status=nope&triggerType=cron&workflowId=123&environment=weird&page=x&limit=y&sort=z`);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: production().filter((r) => r.trigger_type === "cron").length, totalPages: 1 });
  });

  test("a repeated key is never a 400: one of its values applies", async () => {
    const body = await list("?status=failed&status=completed&limit=100");
    expect(new Set(body.data.map((r) => r.status)).size).toBe(1);
  });

  test("tag filters by exact tag", async () => {
    const vip = await list("?tag=vip");
    expect(vip.data.map((r) => r.tags)).toEqual([["vip", "eu"]]);
    expect((await list("?tag=vi")).pagination.total).toBe(0);
    expect((await list("?tag=vip-extra")).pagination.total).toBe(1);
  });

  test("filters combine", async () => {
    const body = await list(`?workflowId=${W1}&status=completed&limit=100`);
    expect(body.data.length).toBe(production().filter((r) => r.workflow_id === W1 && r.status === "completed").length);
  });
});
