/**
 * Self-registering webhooks against a loopback fake provider: onEnable at publish, no second
 * registration on an unchanged republish, onDisable on unpublish with provider errors swallowed.
 * Also the event triggers (runs.on_error) and callable workflows, which nothing here starts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { definePiece, trigger } from "../../src/pieces-sdk";
import { definition, triggerApp, type TriggerApp } from "./harness";

interface Hook {
  id: string;
  url: string;
}
const provider = { hooks: new Map<string, Hook>(), deletes: [] as string[], failDelete: false, failCreate: false, next: 1 };
let server: ReturnType<typeof Bun.serve>;
let providerUrl = "";

const repoPiece = definePiece({
  id: "repohost",
  name: "Repo host",
  version: "1.0.0",
  description: "a provider that calls webhooks it was told about",
  actions: [],
  triggers: [
    trigger({
      id: "on_push",
      name: "On push",
      description: "registers a webhook with the provider",
      type: "webhook",
      props: {},
      onEnable: async (ctx) => {
        const res = await ctx.fetch(`${ctx.config.provider}/hooks`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ url: ctx.webhookUrl }),
        });
        if (!res.ok) throw new Error(`provider answered ${res.status}`);
        ctx.state.set({ hookId: ((await res.json()) as { id: string }).id });
      },
      onDisable: async (ctx) => {
        const res = await ctx.fetch(`${ctx.config.provider}/hooks/${ctx.state.get()?.hookId}`, { method: "DELETE" });
        if (!res.ok) throw new Error(`provider answered ${res.status} to the de-registration`);
      },
    }),
  ],
});

/** A provider that batches events, asks a challenge before sending any, and lets registrations expire. */
const batchPiece = definePiece({
  id: "batcher",
  name: "Batcher",
  version: "1.0.0",
  description: "a provider that sends events in batches",
  actions: [],
  triggers: [
    trigger({
      id: "on_events",
      name: "On events",
      description: "one run per event of a batch",
      type: "webhook",
      props: {},
      onEnable: (ctx) => ctx.state.set({ renewed: 0 }),
      receive: ({ request }) => {
        const body = request.body as { challenge?: string; events?: unknown[] };
        if (typeof request.query.challenge === "string")
          return { items: [], reply: { status: 200, headers: { "content-type": "text/plain" }, body: request.query.challenge } };
        if (!Array.isArray(body.events)) throw new Error("the call holds no events list");
        return { items: body.events };
      },
      renew: {
        cron: "0 0 * * *",
        run: (ctx) => {
          const renewed = Number(ctx.state.get()?.renewed ?? 0) + 1;
          if (ctx.config.failRenewal) throw new Error("provider refused the renewal");
          ctx.state.set({ renewed, url: ctx.webhookUrl });
        },
      },
    }),
  ],
});

let h: TriggerApp;
beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method === "POST" && url.pathname === "/hooks") {
        if (provider.failCreate) return new Response("no", { status: 403 });
        const id = `h${provider.next++}`;
        provider.hooks.set(id, { id, url: ((await request.json()) as { url: string }).url });
        return Response.json({ id }, { status: 201 });
      }
      if (request.method === "DELETE" && url.pathname.startsWith("/hooks/")) {
        const id = url.pathname.slice(7);
        provider.deletes.push(id);
        if (provider.failDelete) return new Response("provider is down", { status: 500 });
        provider.hooks.delete(id);
        return new Response(null, { status: 204 });
      }
      return new Response("not found", { status: 404 });
    },
  });
  providerUrl = `http://127.0.0.1:${server.port}`;
  h = await triggerApp({ pieces: [repoPiece, batchPiece], env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
});
afterAll(async () => {
  await h.close();
  server.stop(true);
});
beforeEach(() => {
  provider.failDelete = false;
  provider.failCreate = false;
});

const pushTrigger = () => ({
  name: "trigger",
  displayName: "On push",
  type: "webhook",
  pieceId: "repohost",
  actionId: "on_push",
  config: { provider: providerUrl },
});
const step = { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { ref: "{{trigger.body.ref}}" } } };

describe("self-registering webhooks", () => {
  test("publish registers the public URL with the provider once; the provider's calls start runs", async () => {
    const before = provider.hooks.size;
    const wf = await h.publishWorkflow(definition(pushTrigger(), step));
    const registered = [...provider.hooks.values()].filter((hook) => hook.url === wf.webhookUrl);
    expect(registered).toHaveLength(1);
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.registration).toMatchObject({ registered: true, lastError: null });
    // Republishing the same trigger config does not register a second time.
    expect((await h.publish(wf.id)).status).toBe(200);
    expect(provider.hooks.size).toBe(before + 1);
    const res = await h.hook("POST", registered[0]!.url, { body: { ref: "main" } });
    expect(res.status).toBe(202);
    expect((await h.run(res.body.data.runId)).status).toBe("completed");
  });

  test("unpublish calls onDisable with the stored state; the provider forgets the hook", async () => {
    const wf = await h.publishWorkflow(definition(pushTrigger(), step));
    const hook = [...provider.hooks.values()].find((x) => x.url === wf.webhookUrl)!;
    const res = await h.req("POST", `/api/workflows/${wf.id}/unpublish`);
    expect(res.status).toBe(200);
    expect(provider.deletes).toContain(hook.id);
    expect(provider.hooks.has(hook.id)).toBe(false);
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.registration).toBeNull();
  });

  test("a provider error during unpublish is logged, never returned: the workflow is paused and its URL 404s", async () => {
    const wf = await h.publishWorkflow(definition(pushTrigger(), step));
    const hook = [...provider.hooks.values()].find((x) => x.url === wf.webhookUrl)!;
    provider.failDelete = true;
    const res = await h.req("POST", `/api/workflows/${wf.id}/unpublish`);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("paused");
    expect(provider.deletes).toContain(hook.id);
    expect(h.logLines.some((line) => line.includes("de-registration failed") && line.includes("provider answered 500"))).toBe(true);
    expect((await h.hook("POST", hook.url, { body: {} })).status).toBe(404);
  });

  test("deleting a live workflow de-registers its webhook", async () => {
    const wf = await h.publishWorkflow(definition(pushTrigger(), step));
    const hook = [...provider.hooks.values()].find((x) => x.url === wf.webhookUrl)!;
    expect((await h.req("DELETE", `/api/workflows/${wf.id}`)).status).toBe(200);
    expect(provider.hooks.has(hook.id)).toBe(false);
  });

  test("a provider refusing the registration is reported to the caller of publish", async () => {
    provider.failCreate = true;
    const wf = await h.createWorkflow("refused", definition(pushTrigger(), step));
    const res = await h.publish(wf.id);
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("provider answered 403");
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.registration).toMatchObject({
      registered: false,
      lastError: "provider answered 403",
    });
  });
});

describe("triggers that read the call themselves", () => {
  const batchTrigger = (config: Record<string, unknown> = {}) => ({ name: "trigger", type: "webhook", pieceId: "batcher", actionId: "on_events", config });
  const keepId = { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { id: "{{trigger.body.id}}" } } };

  test("a batch of three events starts three runs, each with its event as the trigger output", async () => {
    const wf = await h.publishWorkflow(definition(batchTrigger(), keepId));
    const res = await h.hook("POST", wf.webhookUrl, { body: { events: [{ id: "a" }, { id: "b" }, { id: "c" }] } });
    expect(res.status).toBe(202);
    expect(res.body.data.runIds).toHaveLength(3);
    const runs = await Promise.all(res.body.data.runIds.map((id: string) => h.run(id)));
    expect(runs.map((run) => run.steps[0].outputData.id).sort()).toEqual(["a", "b", "c"]);
    expect(runs.every((run) => run.status === "completed" && run.triggerType === "webhook")).toBe(true);
  });

  test("a handshake is answered by the trigger and starts nothing; an empty batch starts nothing", async () => {
    const wf = await h.publishWorkflow(definition(batchTrigger(), keepId));
    const shake = await h.hook("POST", `${wf.webhookUrl}?challenge=abc123`, { body: {} });
    expect(shake.status).toBe(200);
    expect(shake.text).toBe("abc123");
    expect(shake.headers.get("content-type")).toStartWith("text/plain");
    const empty = await h.hook("POST", wf.webhookUrl, { body: { events: [] } });
    expect(empty.status).toBe(200);
    expect(empty.body.data).toMatchObject({ runIds: [], status: "ignored" });
    expect(await h.runsOf(wf.id)).toEqual([]);
  });

  test("a call the trigger cannot read is a 500 naming the trigger's reason, and starts nothing", async () => {
    const wf = await h.publishWorkflow(definition(batchTrigger(), keepId));
    const res = await h.hook("POST", wf.webhookUrl, { body: { nothing: true } });
    expect(res.status).toBe(500);
    expect(res.body.error.message).toContain("the call holds no events list");
    expect(await h.runsOf(wf.id)).toEqual([]);
  });

  test("renewal runs with the registration's state and URL; a failed renewal shows as the registration's lastError", async () => {
    const wf = await h.publishWorkflow(definition(batchTrigger(), keepId));
    await h.triggers.registrations.renew(wf.id);
    await h.triggers.registrations.renew(wf.id);
    const row = (await h.triggers.store.registration(wf.id))!;
    expect(JSON.parse(row.state!)).toEqual({ renewed: 2, url: wf.webhookUrl });

    const failing = await h.publishWorkflow(definition(batchTrigger({ failRenewal: true }), keepId));
    await h.triggers.registrations.renew(failing.id);
    expect((await h.req("GET", `/api/workflows/${failing.id}/trigger`)).body.data.registration).toMatchObject({
      registered: true,
      lastError: "renewal failed: provider refused the renewal",
    });
  });
});

describe("event triggers and callable workflows", () => {
  test("runs.on_error starts with the failed run's summary", async () => {
    const watcher = await h.publishWorkflow(
      definition(
        { name: "trigger", type: "error", pieceId: "runs", actionId: "on_error", config: {} },
        { name: "note", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { failed: "{{trigger.body.run.id}}" } } },
      ),
      "watcher",
    );
    const failing = await h.publishWorkflow(
      definition(
        { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} },
        { name: "bad", type: "PIECE", pieceId: "data", actionId: "parse_json", config: { text: "{not json" } },
      ),
      "failing",
    );
    const res = await h.hook("POST", failing.webhookUrl, { body: {} });
    const failed = await h.run(res.body.data.runId);
    expect(failed.status).toBe("failed");
    let runs: any[] = [];
    for (let i = 0; i < 100 && runs.length === 0; i++) {
      runs = (await h.runsOf(watcher.id)).filter((r) => r.triggerType === "error");
      if (runs.length === 0) await Bun.sleep(10);
    }
    expect(runs).toHaveLength(1);
    const run = await h.run(runs[0].id);
    expect(run.triggerData.body.run).toMatchObject({ id: failed.id, workflowId: failing.id, status: "failed" });
  });

  test("a callable workflow has no URL, schedule or poll: only call_workflow, the API or MCP start it", async () => {
    const wf = await h.publishWorkflow(
      definition({ name: "trigger", type: "callable", pieceId: "subflows", actionId: "callable", config: {} }, step),
      "callable",
    );
    expect(wf.webhookToken).toBeNull();
    const state = (await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data;
    expect(state).toMatchObject({ webhook: null, schedule: null, poll: null, registration: null });
    h.clock.advance(86_400_000);
    expect(await h.triggers.scheduler.tick()).toEqual([]);
    expect(await h.triggers.poller.tick()).toEqual([]);
    expect(await h.runsOf(wf.id)).toEqual([]);
  });
});
