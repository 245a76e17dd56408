/**
 * Publish, unpublish, rotate, versions, restore (docs/api.md sections 3, 5 and 6): every draft/active/paused
 * transition.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { PieceDef } from "../../src/pieces-sdk/types";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { chainDefinition, createWorkflow, greetDefinition, stockDefinition } from "./fixtures";

let t: TestApp;
const events: string[] = [];
beforeAll(async () => {
  t = await testApp();
  t.deps.lifecycleHooks.push({
    onPublish: (wf, version) => void events.push(`publish ${wf.id} v${version.number} ${wf.status}`),
    onUnpublish: (wf) => void events.push(`unpublish ${wf.id} ${wf.status}`),
    onWebhookRotated: (wf, previous) => void events.push(`rotate ${wf.id} ${previous}`),
  });
});

const publish = (id: string) => t.req("POST", `/api/workflows/${id}/publish`);
const unpublish = (id: string, headers?: Record<string, string>) => t.req("POST", `/api/workflows/${id}/unpublish`, { headers });

describe("state table: draft, active, paused", () => {
  test("(none) → POST /api/workflows → draft, whatever status the body names", async () => {
    const res = await t.req("POST", "/api/workflows", { body: { name: "x", status: "active" } });
    expect(res.body.data.status).toBe("draft");
  });

  test("draft → publish → active: latestVersionId is the executed snapshot; hooks run", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const res = await publish(wf.id);
    expect(res.status).toBe(200);
    const live = res.body.data;
    expect(live.status).toBe("active");
    expect(live.latestVersionId).toBeString();
    expect(live.hasUnpublishedChanges).toBe(false);
    expect(live.definitionRev).toBe(wf.definitionRev);
    const version = await t.req("GET", `/api/workflows/${wf.id}/versions/${live.latestVersionId}`);
    expect(version.body.data.number).toBe(1);
    expect(version.body.data.live).toBe(true);
    expect(version.body.data.definition.trigger.nextAction.name).toBe("greet");
    const run = await t.deps.workflows.definitionForRun(live.workspaceId, wf.id, "production");
    expect(run.versionId).toBe(live.latestVersionId);
    expect(events).toContain(`publish ${wf.id} v1 active`);
  });

  test("the publish gate refuses with 422 NOT_PUBLISHABLE carrying the diagnostics; nothing changes", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.actionId = "nope";
    const wf = await createWorkflow(t, { definition: d });
    const res = await publish(wf.id);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("NOT_PUBLISHABLE");
    expect(res.body.error.details.valid).toBe(false);
    expect(res.body.error.details.errors[0].code).toBe("UNKNOWN_ACTION");
    const after = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data;
    expect(after.status).toBe("draft");
    expect(after.latestVersionId).toBeNull();
    expect((await t.req("GET", `/api/workflows/${wf.id}/versions`)).body).toEqual({ data: [], total: 0 });
  });

  test("live → unpublish → paused: token, latestVersionId, versions and draft kept; hooks run", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const live = (await publish(wf.id)).body.data;
    const res = await unpublish(wf.id);
    expect(res.status).toBe(200);
    const paused = res.body.data;
    expect(paused.status).toBe("paused");
    expect(paused.webhookToken).toBe(live.webhookToken);
    expect(paused.latestVersionId).toBe(live.latestVersionId);
    expect(paused.definition).toEqual(live.definition);
    expect((await t.req("GET", `/api/workflows/${wf.id}/versions`)).body.total).toBe(1);
    expect(events).toContain(`unpublish ${wf.id} paused`);
  });

  test("paused → unpublish → paused: 200 no-op without hooks", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    await publish(wf.id);
    await unpublish(wf.id);
    const count = events.filter((e) => e === `unpublish ${wf.id} paused`).length;
    const again = await unpublish(wf.id);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe("paused");
    expect(events.filter((e) => e === `unpublish ${wf.id} paused`).length).toBe(count);
  });

  test("paused → publish → active again, at the same webhook URL", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const first = (await publish(wf.id)).body.data;
    await unpublish(wf.id);
    const again = (await publish(wf.id)).body.data;
    expect(again.status).toBe("active");
    expect(again.webhookUrl).toBe(first.webhookUrl);
    expect(again.latestVersionId).toBe(first.latestVersionId);
  });

  test("unpublish does not accept Idempotency-Key (400) and reads no body", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    await publish(wf.id);
    const res = await unpublish(wf.id, { "idempotency-key": "k1" });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("Idempotency-Key");
    expect((await t.req("GET", `/api/workflows/${wf.id}`)).body.data.status).toBe("active");
    const withBody = await t.req("POST", `/api/workflows/${wf.id}/unpublish`, { body: { status: "draft" } });
    expect(withBody.body.data.status).toBe("paused");
  });

  test("unpublish swallows hook errors (logged, not returned)", async () => {
    const app = await testApp();
    app.deps.lifecycleHooks.push({
      onUnpublish: () => {
        throw new Error("provider said 500");
      },
    });
    const wf = await createWorkflow(app, { definition: greetDefinition() });
    await app.req("POST", `/api/workflows/${wf.id}/publish`);
    const res = await app.req("POST", `/api/workflows/${wf.id}/unpublish`);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("paused");
    expect(app.logLines.some((l) => l.includes("provider said 500"))).toBe(true);
  });

  test("unpublish of a draft that was never published is a no-op", async () => {
    const wf = await createWorkflow(t);
    const res = await unpublish(wf.id);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("draft");
  });

  test("republishing an unchanged draft creates no new version; a changed draft creates the next one", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const v1 = (await publish(wf.id)).body.data.latestVersionId;
    const same = (await publish(wf.id)).body.data;
    expect(same.latestVersionId).toBe(v1);
    expect((await t.req("GET", `/api/workflows/${wf.id}/versions`)).body.total).toBe(1);
    const d = greetDefinition();
    d.trigger.nextAction.displayName = "Greet louder";
    const saved = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: d } })).body.data;
    expect(saved.hasUnpublishedChanges).toBe(true);
    expect(saved.latestVersionId).toBe(v1);
    const v2 = (await publish(wf.id)).body.data;
    expect(v2.latestVersionId).not.toBe(v1);
    expect(v2.hasUnpublishedChanges).toBe(false);
    const list = (await t.req("GET", `/api/workflows/${wf.id}/versions`)).body;
    expect(list.data.map((v: any) => [v.number, v.live])).toEqual([
      [2, true],
      [1, false],
    ]);
  });

  test("a save that only reorders keys or changes valid flags is not an unpublished change", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    await publish(wf.id);
    const d = greetDefinition();
    const reordered = {
      pinnedData: {},
      annotations: null,
      variables: d.variables,
      settings: d.settings,
      trigger: { ...d.trigger, valid: false },
      schemaVersion: 2,
    };
    const saved = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: reordered } })).body.data;
    expect(saved.hasUnpublishedChanges).toBe(false);
  });
});

describe("POST /api/workflows/{id}/webhook/rotate", () => {
  test("replaces the token at once and keeps it across unpublish", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const res = await t.req("POST", `/api/workflows/${wf.id}/webhook/rotate`);
    expect(res.status).toBe(200);
    expect(res.body.data.webhookToken).not.toBe(wf.webhookToken);
    expect(await t.deps.workflows.findByWebhookToken(wf.webhookToken)).toBeNull();
    expect((await t.deps.workflows.findByWebhookToken(res.body.data.webhookToken))?.id).toBe(wf.id);
    expect(events).toContain(`rotate ${wf.id} ${wf.webhookToken}`);
    const cron = await createWorkflow(t, { definition: stockDefinition() });
    const refused = await t.req("POST", `/api/workflows/${cron.id}/webhook/rotate`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toContain("cron");
  });
});

describe("restore", () => {
  async function twoVersions() {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const v1 = (await publish(wf.id)).body.data.latestVersionId;
    await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: stockDefinition() } });
    const v2 = (await publish(wf.id)).body.data.latestVersionId;
    return { wf, v1, v2 };
  }

  test("rewrites the draft only: production untouched, hasUnpublishedChanges true, triggerType follows", async () => {
    const { wf, v1, v2 } = await twoVersions();
    const before = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data;
    const res = await t.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`, { body: {} });
    expect(res.status).toBe(200);
    const restored = res.body.data;
    expect(restored.latestVersionId).toBe(v2);
    expect(restored.status).toBe("active");
    expect(restored.triggerType).toBe("webhook");
    expect(restored.cronExpression).toBeNull();
    expect(restored.definition.trigger.nextAction.name).toBe("greet");
    expect(restored.hasUnpublishedChanges).toBe(true);
    expect(restored.definitionRev).toBe(before.definitionRev + 1);
    const prod = await t.deps.workflows.definitionForRun(restored.workspaceId, wf.id, "production");
    expect(prod.definition.trigger.type).toBe("cron");
    expect((await t.deps.workflows.definitionForRun(restored.workspaceId, wf.id, "test")).definition.trigger.type).toBe("webhook");
  });

  test("restoring the live version gives hasUnpublishedChanges false", async () => {
    const { wf, v1, v2 } = await twoVersions();
    await t.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`);
    const res = await t.req("POST", `/api/workflows/${wf.id}/versions/${v2}/restore`);
    expect(res.body.data.hasUnpublishedChanges).toBe(false);
  });

  test("a stale expectedRev answers 409 and writes nothing; 0 or less is unconditional", async () => {
    const { wf, v1 } = await twoVersions();
    const current = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data;
    const stale = await t.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`, { body: { expectedRev: current.definitionRev - 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("REVISION_CONFLICT");
    expect(stale.body.error.message).toContain(String(current.definitionRev));
    const after = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data;
    expect(after.definitionRev).toBe(current.definitionRev);
    expect(after.definition).toEqual(current.definition);
    expect((await t.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`, { body: { expectedRev: -1 } })).status).toBe(200);
    const now = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data.definitionRev;
    expect((await t.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`, { body: { expectedRev: now } })).status).toBe(200);
  });

  test("a versionId of another workflow answers 404", async () => {
    const { v1 } = await twoVersions();
    const other = await createWorkflow(t);
    const res = await t.req("POST", `/api/workflows/${other.id}/versions/${v1}/restore`);
    expect(res.status).toBe(404);
    expect((await t.req("GET", `/api/workflows/${other.id}/versions/${v1}`)).status).toBe(404);
  });

  test("a webhook workflow without a token gets one; test payloads and pinned data are never deleted and are re-judged", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    const v1 = (await publish(wf.id)).body.data.latestVersionId;
    await t.req("PUT", `/api/workflows/${wf.id}/pinned-data/greet`, { body: { data: { greeting: "hi" } } });
    await t.req("PUT", `/api/workflows/${wf.id}/test-payloads`, { body: { default: { name: "Ada" } } });
    // The draft moves to a manual trigger where greet is configured differently: the pin goes stale.
    const d = chainDefinition(0);
    d.trigger.nextAction = { name: "greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { other: 1 } } };
    const moved = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: d } })).body.data;
    expect(moved.pinnedData.greet.stale).toBe(true);
    // Simulate a workflow that lost its token (e.g. created before tokens were minted for its trigger).
    await appSql(t).run("UPDATE workflows SET webhook_token = NULL, webhook_token_hash = NULL WHERE id = ?", [wf.id]);
    const restored = (await t.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`)).body.data;
    expect(restored.webhookToken).toBeString();
    expect(restored.testPayloads).toEqual({ default: { name: "Ada" } });
    expect(restored.pinnedData.greet.data).toEqual({ greeting: "hi" });
    expect(restored.pinnedData.greet.stale).toBe(false);
  });

  test("an ACTIVE workflow's snapshot naming a piece not served here is refused with 422 naming the piece and the served version", async () => {
    const app = await testApp();
    const piece = (version: string): PieceDef => ({
      id: "legacy",
      name: "Legacy",
      version,
      description: "test piece",
      triggers: {},
      actions: { ping: { id: "ping", name: "Ping", description: "", sideEffects: "pure", props: {}, run: () => ({ ok: true }) } },
    });
    app.deps.pieces.register(piece("1.2.0"));
    const d = chainDefinition(0);
    d.trigger.nextAction = { name: "ping", type: "PIECE", pieceId: "legacy", actionId: "ping", config: {} };
    const wf = await createWorkflow(app, { definition: d });
    expect(wf.definition.trigger.nextAction.pieceVersion).toBe("1.2.0");
    const v1 = (await app.req("POST", `/api/workflows/${wf.id}/publish`)).body.data.latestVersionId;
    await app.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: greetDefinition() } });
    app.deps.pieces.register(piece("2.0.0"));
    const before = (await app.req("GET", `/api/workflows/${wf.id}`)).body.data;
    const res = await app.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("PIECE_UNAVAILABLE");
    expect(res.body.error.message).toContain("legacy");
    expect(res.body.error.message).toContain("2.0.0");
    expect((await app.req("GET", `/api/workflows/${wf.id}`)).body.data.definitionRev).toBe(before.definitionRev);
    // A paused workflow's draft is not checked against the pieces served.
    await app.req("POST", `/api/workflows/${wf.id}/unpublish`);
    expect((await app.req("POST", `/api/workflows/${wf.id}/versions/${v1}/restore`)).status).toBe(200);
  });
});

describe("for the engine: definitionForRun", () => {
  test("production of a never-published workflow is 422 NOT_PUBLISHED; test runs the draft", async () => {
    const wf = await createWorkflow(t, { definition: greetDefinition() });
    await expect(t.deps.workflows.definitionForRun(wf.workspaceId, wf.id, "production")).rejects.toThrow(/never been published/);
    const error: any = await t.deps.workflows.definitionForRun(wf.workspaceId, wf.id, "production").catch((e) => e);
    expect(error.code).toBe("NOT_PUBLISHED");
    expect(error.status).toBe(422);
    const test = await t.deps.workflows.definitionForRun(wf.workspaceId, wf.id, "test");
    expect(test.definition.trigger.nextAction!.name).toBe("greet");
    expect(test.versionId).toBeNull();
  });

  test("settings.autoPublishFixes: a valid save of a live workflow goes live at once", async () => {
    const d = greetDefinition();
    d.settings.autoPublishFixes = true;
    const wf = await createWorkflow(t, { definition: d });
    const v1 = (await publish(wf.id)).body.data.latestVersionId;
    d.trigger.nextAction.config.fields.extra = "fixed";
    const saved = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: d } })).body.data;
    expect(saved.latestVersionId).not.toBe(v1);
    expect(saved.hasUnpublishedChanges).toBe(false);
    // A broken save stays a draft change.
    d.trigger.nextAction.actionId = "broken";
    const broken = (await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: d } })).body.data;
    expect(broken.latestVersionId).toBe(saved.latestVersionId);
    expect(broken.hasUnpublishedChanges).toBe(true);
  });
});
