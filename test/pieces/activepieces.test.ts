/**
 * Activepieces community pieces run as Weft pieces (docs/activepieces.md), for real: packages are installed
 * through Bun's package manager from a throwaway npm registry on 127.0.0.1 (test/support/npm-registry.ts),
 * loaded in piece host processes and run by published workflows. The fixture piece is written with the
 * published @activepieces/pieces-framework; @activepieces/piece-mysql runs against a real MariaDB
 * (Debian `mariadb-server`, skipped with one line when absent).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { testApp, type TestApp } from "../support/app";
import { FakeClock } from "../../src/lib/clock";
import { announceMissingMariadb, hasMariadb, startMariadb, type MariadbHandle } from "../support/mariadb";
import { authorize } from "../connections/support/flow";
import { startProvider } from "../connections/support/oauth-provider";
import { FIXTURE, FIXTURE_ID, fixturePackage, OAUTH_FIXTURE, OAUTH_FIXTURE_ID, oauthFixturePackage } from "../support/activepieces-fixture";
import { type NpmRegistry, startNpmRegistry } from "../support/npm-registry";
import { definition, triggerApp, type TriggerApp } from "../triggers/harness";

const ROOT = join(import.meta.dir, "../..");

let registry: NpmRegistry;
let t: TestApp;
let made = 0;

beforeAll(async () => {
  registry = await startNpmRegistry();
  // 1.2.0's advertised integrity is wrong; "latest" is the last published, 1.1.0.
  await registry.publish(await fixturePackage("1.0.0"));
  await registry.publish(await fixturePackage("1.2.0"));
  registry.corrupt(FIXTURE, "1.2.0");
  await registry.publish(await fixturePackage("1.1.0"));
  await registry.publish(join(ROOT, "node_modules/@activepieces/piece-mysql"));
  await registry.publish(join(ROOT, "node_modules/@activepieces/piece-slack"));
  t = await testApp({ WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
}, 60_000);

afterAll(() => {
  t?.deps.piecePackages.stop();
  registry?.stop();
});

async function install(app: TestApp, spec: string) {
  return app.req("POST", "/api/pieces/packages", { body: { package: spec } });
}

async function connection(app: TestApp, pieceId: string, values: Record<string, unknown>): Promise<string> {
  const res = await app.req("POST", "/api/connections", { body: { pieceId, name: `conn ${++made}`, values } });
  if (res.status !== 201) throw new Error(`connection: ${res.text}`);
  return res.body.data.id;
}

/** Creates and publishes a workflow whose manual trigger runs `steps` in order; returns its id. */
async function publish(app: TestApp, pieceId: string, connectionId: string, steps: Array<Record<string, unknown>>): Promise<string> {
  let next: Record<string, unknown> | undefined;
  for (const step of [...steps].reverse()) next = { type: "PIECE", pieceId, connectionId, ...step, ...(next ? { nextAction: next } : {}) };
  const definition = { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {}, nextAction: next } };
  const wf = await app.req("POST", "/api/workflows", { body: { name: `ap ${++made}`, definition } });
  if (wf.status !== 201) throw new Error(`create: ${wf.text}`);
  const published = await app.req("POST", `/api/workflows/${wf.body.data.id}/publish`);
  if (published.status !== 200) throw new Error(`publish: ${published.text}`);
  return wf.body.data.id;
}

async function run(app: TestApp, workflowId: string, body: Record<string, unknown> = {}) {
  const res = await app.req("POST", `/api/workflows/${workflowId}/run?environment=production&wait=30`, { body });
  return res.body.data;
}

/** The run once it reaches `status` (or whatever it is after ~10 s). */
async function settled(runId: string, status: string) {
  let detail = await t.req("GET", `/api/runs/${runId}`);
  for (let i = 0; i < 200 && detail.body.data.status !== status; i++) {
    await Bun.sleep(50);
    detail = await t.req("GET", `/api/runs/${runId}`);
  }
  expect(detail.body.data.status).toBe(status);
  return detail.body.data;
}

describe("installing packages", () => {
  test("a package from the registry is installed with its integrity checked and joins the catalog as ap-<name>", async () => {
    const res = await install(t, `${FIXTURE}@1.0.0`);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ pieceId: FIXTURE_ID, name: FIXTURE, version: "1.0.0", source: "registry", authKind: "CUSTOM_AUTH", actions: 8 });
    expect(res.body.data.integrity).toMatch(/^sha512-/);

    const list = await t.req("GET", "/api/pieces");
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(FIXTURE_ID);
    const detail = await t.req("GET", `/api/pieces/${FIXTURE_ID}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data.actions.map((a: { id: string }) => a.id).sort()).toEqual([
      "counter",
      "echo",
      "environment",
      "fail",
      "hog",
      "reach",
      "spin",
      "wait_for_approval",
    ]);
    const projection = await t.req("GET", `/api/pieces/${FIXTURE_ID}/actions/echo`);
    expect(projection.status).toBe(200);
    const props = projection.body.data.inputSchema.properties;
    expect(props.text).toMatchObject({ type: "string", required: true });
    expect(props.count).toMatchObject({ type: "number", default: 3 });
    expect(props.colour).toMatchObject({ enum: ["red", "blue"], enumLabels: { red: "Red", blue: "Blue" } });
    expect(projection.body.data.dynamicFields).toContain("item");
  });

  test("installing the same version again answers it as it is, without downloading", async () => {
    const before = registry.downloads();
    const again = await install(t, `${FIXTURE}@1.0.0`);
    expect(again.status).toBe(201);
    expect(again.body.data.version).toBe("1.0.0");
    expect(registry.downloads()).toBe(before);
  });

  test("a tarball that does not match the registry's integrity is refused and nothing is left", async () => {
    const res = await install(t, `${FIXTURE}@1.2.0`);
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("does not match the integrity the registry gives");
    const listed = await t.req("GET", "/api/pieces/packages");
    expect(listed.body.data.map((p: { version: string }) => p.version)).not.toContain("1.2.0");
    const packagesDir = join(t.config.dataDir, "pieces/packages");
    expect(readdirSync(packagesDir).filter((name) => name.startsWith(".staging"))).toEqual([]);
  });

  test("an unknown package and a name that is not one are refused with what to give", async () => {
    const unknown = await install(t, "@weft-test/piece-nothing-here");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.message).toContain("@weft-test/piece-nothing-here");
    const bad = await install(t, "Not A Name!");
    expect(bad.status).toBe(422);
    expect(bad.body.error.message).toContain("is not an npm package name");
  });

  test("changing packages takes workspace:admin", async () => {
    const token = (await t.req("POST", "/api/tokens", { body: { name: "reader", scopes: ["piece:read", "workflow:read"] } })).body.data.token;
    const res = await t.req("POST", "/api/pieces/packages", { body: { package: FIXTURE }, token });
    expect(res.status).toBe(403);
  });
});

describe("@activepieces/piece-slack, a recent and large package", () => {
  test("installs as it is published: 72 actions, 14 triggers, its bot-token auth as a connection, a live channel dropdown", async () => {
    const res = await install(t, "@activepieces/piece-slack@0.17.9");
    expect(res.status).toBe(201);
    // The piece offers several auths; the first Weft can hold as a connection is its bot token (CUSTOM_AUTH).
    expect(res.body.data).toMatchObject({ pieceId: "ap-slack", actions: 72, triggers: 14, authKind: "CUSTOM_AUTH", unsupported: [] });
    const detail = (await t.req("GET", "/api/pieces/ap-slack")).body.data;
    expect(detail.auth).toMatchObject({ kind: "custom", props: { botToken: { format: "password", required: true } } });
    const channel = (await t.req("GET", "/api/pieces/ap-slack/actions/send_channel_message")).body.data;
    expect(channel.dynamicFields).toContain("channel");
    expect(channel.inputSchema.required).toEqual(expect.arrayContaining(["channel", "sendAsBot"]));
  });

  test("its APP_WEBHOOK triggers are listed as not supported, and the publish gate refuses one with the reason: the workflow stays a draft", async () => {
    const triggers = (await t.req("GET", "/api/pieces/ap-slack")).body.data.triggers as Array<{ id: string; name: string }>;
    const newMessage = triggers.find((trigger) => trigger.id === "new_message")!;
    expect(newMessage.name).toEndWith("(not supported)");
    const definition = { schemaVersion: 2, trigger: { name: "trigger", type: "webhook", pieceId: "ap-slack", actionId: "new_message", config: {} } };
    const wf = (await t.req("POST", "/api/workflows", { body: { name: `slack ${++made}`, definition } })).body.data;
    const published = await t.req("POST", `/api/workflows/${wf.id}/publish`);
    expect(published.status).toBe(422);
    const codes = published.body.error.details.errors.map((e: { code: string }) => e.code);
    expect(codes).toContain("TRIGGER_UNSUPPORTED");
    expect(published.body.error.message).toContain("APP_WEBHOOK trigger (events routed through Activepieces' own cloud app)");
    expect((await t.req("GET", `/api/workflows/${wf.id}`)).body.data.status).toBe("draft");
  });
});

describe("running a piece", () => {
  let conn: string;
  beforeAll(async () => {
    await install(t, `${FIXTURE}@1.0.0`);
    conn = await connection(t, FIXTURE_ID, { token: "good-token", region: "eu" });
  });

  test("the piece's validate refuses bad credentials before anything is stored", async () => {
    const res = await t.req("POST", "/api/connections", { body: { pieceId: FIXTURE_ID, name: "refused", values: { token: "bad-token" } } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("the fixture service refused this token");
    const list = await t.req("GET", `/api/connections?pieceId=${FIXTURE_ID}`);
    expect(list.body.data.map((c: { name: string }) => c.name)).not.toContain("refused");
    // Changing a stored connection's values is checked the same way, and a refusal changes nothing.
    const changed = await t.req("PATCH", `/api/connections/${conn}`, { body: { values: { token: "bad-token", region: "us" } } });
    expect(changed.status).toBe(400);
    expect(changed.body.error.message).toContain("the fixture service refused this token");
    // The same check backs the connection's Test button.
    expect((await t.req("POST", `/api/connections/${conn}/test`)).body.data).toMatchObject({ ok: true });
  });

  test("an action gets its props (defaults filled in), its connection and its step name", async () => {
    const wf = await publish(t, FIXTURE_ID, conn, [{ name: "say", actionId: "echo", config: { text: "{{trigger.body.word}}", colour: "red" } }]);
    const result = await run(t, wf, { word: "hello" });
    expect(result.status).toBe("completed");
    expect(result.steps[0].outputData).toEqual({ text: "hello", count: 3, colour: "red", region: "eu", version: "1.0.0", step: "say" });
  });

  test("a dynamic dropdown lists its options through the options endpoint with the connection's auth", async () => {
    const res = await t.req("POST", `/api/pieces/${FIXTURE_ID}/actions/echo/options/item`, { body: { connectionId: conn, config: { colour: "blue" } } });
    expect(res.status).toBe(200);
    expect(res.body.data.options).toEqual([
      { label: "blue item 1 (eu)", value: 1 },
      { label: "blue item 2 (eu)", value: 2 },
    ]);
  });

  test("a DYNAMIC property answers the fields the current config calls for, and its object reaches the action", async () => {
    const ask = (colour: string) =>
      t.req("POST", `/api/pieces/${FIXTURE_ID}/actions/echo/options/details`, { body: { connectionId: conn, config: { colour } } });
    const blue = await ask("blue");
    expect(blue.status).toBe(200);
    expect(Object.keys(blue.body.data.properties)).toEqual(["shade", "depth"]);
    expect(blue.body.data.properties.shade).toMatchObject({ type: "string", propertyType: "short_text", required: true, description: "Shade" });
    expect(blue.body.data.properties.depth).toMatchObject({ type: "number", required: false });
    expect(Object.keys((await ask("red")).body.data.properties)).toEqual(["note"]);
    const projection = await t.req("GET", `/api/pieces/${FIXTURE_ID}/actions/echo`);
    expect(projection.body.data.dynamicFields).toContain("details");

    const wf = await publish(t, FIXTURE_ID, conn, [
      { name: "say", actionId: "echo", config: { text: "hi", colour: "blue", details: { shade: "navy", depth: 3 } } },
    ]);
    expect((await run(t, wf)).steps[0].outputData.details).toEqual({ shade: "navy", depth: 3 });
  });

  test("the store keeps values across runs and tags reach the run", async () => {
    const wf = await publish(t, FIXTURE_ID, conn, [{ name: "count", actionId: "counter", config: {} }]);
    expect((await run(t, wf)).steps[0].outputData).toEqual({ seen: 1 });
    const second = await run(t, wf);
    expect(second.steps[0].outputData).toEqual({ seen: 2 });
    expect(second.tags).toContain("count-2");
  });

  test("a thrown error fails the step with the piece's message", async () => {
    const wf = await publish(t, FIXTURE_ID, conn, [{ name: "boom", actionId: "fail", config: {} }]);
    const result = await run(t, wf);
    expect(result.status).toBe("failed");
    expect(result.errorMessage).toContain("the fixture failed on purpose");
  });

  test("a step pauses on a waitpoint and resumes through its resume URL with the payload", async () => {
    const wf = await publish(t, FIXTURE_ID, conn, [{ name: "ask", actionId: "wait_for_approval", config: {} }]);
    const started = await t.req("POST", `/api/workflows/${wf}/run?environment=production`, { body: {} });
    const paused = await settled(started.body.data.id, "paused");
    const link = paused.steps[0].outputData.output.link as string;
    expect(link).toContain(`/api/runs/${paused.id}/resume/`);
    expect(new URL(link).searchParams.get("answer")).toBe("yes");
    const url = new URL(link);
    const resumed = await t.req("POST", `${url.pathname}${url.search}`, { body: { comment: "fine" }, token: null });
    expect(resumed.status).toBeLessThan(300);
    const done = await settled(paused.id, "completed");
    expect(done.steps.at(-1).outputData).toMatchObject({ resumed: true, body: { answer: "yes", comment: "fine" }, query: { answer: "yes" } });
  });
});

describe("a WEBHOOK trigger", () => {
  /** A loopback provider that keeps the webhook registrations it is given. */
  const hooks = new Map<string, { url: string; topic: string; token: string; renewals: number }>();
  let provider: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    provider = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const path = new URL(request.url).pathname;
        if (request.method === "POST" && path === "/hooks") {
          const id = `hook-${hooks.size + 1}`;
          hooks.set(id, { ...((await request.json()) as { url: string; topic: string; token: string }), renewals: 0 });
          return Response.json({ id }, { status: 201 });
        }
        const hook = hooks.get(path.split("/")[2] ?? "");
        if (!hook) return new Response("no such hook", { status: 404 });
        if (request.method === "POST" && path.endsWith("/renew")) hook.renewals++;
        else if (request.method === "DELETE") hooks.delete(path.split("/")[2]!);
        return new Response(null, { status: 204 });
      },
    });
  });
  afterAll(() => provider?.stop(true));

  test("registers the flow's URL with its provider, answers the handshake, starts one run per event, renews and unregisters", async () => {
    const conn = await connection(t, FIXTURE_ID, { token: "good-token" });
    const trigger = {
      name: "trigger",
      type: "webhook",
      pieceId: FIXTURE_ID,
      actionId: "new_event",
      connectionId: conn,
      config: { provider: `http://127.0.0.1:${provider.port}`, topic: "orders" },
      nextAction: { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { n: "{{trigger.body.n}}" } } },
    };
    const wf = (await t.req("POST", "/api/workflows", { body: { name: `ap hook ${++made}`, definition: { schemaVersion: 2, trigger } } })).body.data;
    expect((await t.req("POST", `/api/workflows/${wf.id}/publish`)).status).toBe(200);
    const url = (await t.req("GET", `/api/workflows/${wf.id}`)).body.data.webhookUrl as string;
    const [id, hook] = [...hooks].find(([, h]) => h.url === url)!;
    expect(hook).toMatchObject({ topic: "orders", token: "good-token" });
    const path = new URL(url).pathname;

    const shake = await t.req("POST", `${path}?challenge=c-42`, { body: {}, token: null });
    expect(shake.status).toBe(200);
    expect(shake.body).toEqual({ challenge: "c-42" });
    expect(shake.headers.get("x-fixture")).toBe("handshake");

    const events = [
      { topic: "orders", n: 1 },
      { topic: "refunds", n: 2 },
      { topic: "orders", n: 3 },
    ];
    const call = await t.req("POST", path, { body: { events }, token: null });
    expect(call.status).toBe(202);
    expect(call.body.data.runIds).toHaveLength(2);
    const runs = await Promise.all(call.body.data.runIds.map((runId: string) => settled(runId, "completed")));
    expect(runs.map((r) => r.steps[0].outputData.n).sort()).toEqual([1, 3]);
    expect((await t.req("GET", `/api/runs?workflowId=${wf.id}`)).body.pagination.total).toBe(2);

    await t.deps.triggers.registrations.renew(wf.id);
    expect(hooks.get(id)!.renewals).toBe(1);
    expect((await t.req("POST", `/api/workflows/${wf.id}/unpublish`)).status).toBe(200);
    expect(hooks.has(id)).toBe(false);
  });
});

describe("versions side by side", () => {
  test("a pinned step runs the version it pins, a blank pin the newest, and a version a published workflow runs cannot be removed", async () => {
    // A server of its own: no other published workflow runs the fixture.
    const t = await testApp({ WEFT_NPM_REGISTRY: registry.url });
    await install(t, `${FIXTURE}@1.0.0`);
    const conn = await connection(t, FIXTURE_ID, { token: "good-token" });
    const older = await publish(t, FIXTURE_ID, conn, [{ name: "say", actionId: "echo", pieceVersion: "1.0.0", config: { text: "a" } }]);
    const upgraded = await t.req("POST", `/api/pieces/packages/${FIXTURE_ID}/upgrade`);
    expect(upgraded.status).toBe(201);
    expect(upgraded.body.data.version).toBe("1.1.0");
    const newer = await publish(t, FIXTURE_ID, conn, [{ name: "say", actionId: "echo", config: { text: "b" } }]);

    expect((await run(t, older)).steps[0].outputData.version).toBe("1.0.0");
    expect((await run(t, newer)).steps[0].outputData.version).toBe("1.1.0");
    expect((await t.req("GET", `/api/pieces/${FIXTURE_ID}`)).body.data.pieceVersion).toBe("1.1.0");

    const refused = await t.req("DELETE", `/api/pieces/packages/${FIXTURE_ID}?version=1.0.0`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain(older);
    await t.req("POST", `/api/workflows/${older}/unpublish`);
    const removed = await t.req("DELETE", `/api/pieces/packages/${FIXTURE_ID}?version=1.0.0`);
    expect(removed.status).toBe(200);
    expect(removed.body.data.map((p: { version: string }) => p.version)).toEqual(["1.0.0"]);
    expect((await run(t, newer)).steps[0].outputData.version).toBe("1.1.0");
    expect(existsSync(join(t.config.dataDir, "pieces/packages", `${FIXTURE.replace("/", "+")}@1.0.0`))).toBe(false);
    t.deps.piecePackages.stop();
  });
});

describe("limits of a piece host", () => {
  test("a host over WEFT_PIECE_MEMORY_MB is stopped, the step fails naming the limit, and the next step gets a fresh host", async () => {
    const app = await testApp({ WEFT_NPM_REGISTRY: registry.url, WEFT_PIECE_MEMORY_MB: "100" });
    try {
      await install(app, `${FIXTURE}@1.0.0`);
      const conn = await connection(app, FIXTURE_ID, { token: "good-token" });
      const hungry = await publish(app, FIXTURE_ID, conn, [{ name: "hog", actionId: "hog", config: {} }]);
      const failed = await run(app, hungry);
      expect(failed.status).toBe("failed");
      expect(failed.errorMessage).toContain("over the limit of 100 MiB (WEFT_PIECE_MEMORY_MB)");
      const fine = await publish(app, FIXTURE_ID, conn, [{ name: "say", actionId: "echo", config: { text: "still here" } }]);
      expect((await run(app, fine)).steps[0].outputData.text).toBe("still here");
    } finally {
      app.deps.piecePackages.stop();
    }
  }, 60_000);

  test("a piece stuck in a loop fails at the run's time limit and does not hold the package: the next step runs", async () => {
    const conn = await connection(t, FIXTURE_ID, { token: "good-token" });
    const definition = {
      schemaVersion: 2,
      settings: { timeoutSeconds: 2 },
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: { name: "stuck", type: "PIECE", pieceId: FIXTURE_ID, connectionId: conn, actionId: "spin", config: {} },
      },
    };
    const wf = (await t.req("POST", "/api/workflows", { body: { name: `ap spin ${++made}`, definition } })).body.data;
    expect((await t.req("POST", `/api/workflows/${wf.id}/publish`)).status).toBe(200);
    const stuck = await run(t, wf.id);
    expect(stuck.status).toBe("failed");
    const started = Date.now();
    const next = await publish(t, FIXTURE_ID, conn, [{ name: "say", actionId: "echo", config: { text: "after" } }]);
    expect((await run(t, next)).steps[0].outputData.text).toBe("after");
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 60_000);
});

describe("a piece's reach", () => {
  test("it sees none of the server's environment: no WEFT_ secret", async () => {
    const previous = process.env.WEFT_BOOTSTRAP_TOKEN;
    process.env.WEFT_BOOTSTRAP_TOKEN = "weft_secret_the_piece_must_not_see";
    try {
      const strict = await testApp({ WEFT_NPM_REGISTRY: registry.url, WEFT_ENCRYPTION_KEY: "k".repeat(44) });
      await install(strict, `${FIXTURE}@1.1.0`);
      const conn = await connection(strict, FIXTURE_ID, { token: "good-token" });
      const wf = await publish(strict, FIXTURE_ID, conn, [{ name: "env", actionId: "environment", config: {} }]);
      const result = await run(strict, wf);
      expect(result.status).toBe("completed");
      expect(result.steps[0].outputData.weft).toEqual([]);
      expect(result.steps[0].outputData.keys).not.toContain("WEFT_BOOTSTRAP_TOKEN");
      expect(JSON.stringify(result.steps[0].outputData)).not.toContain("weft_secret_the_piece_must_not_see");
      strict.deps.piecePackages.stop();
    } finally {
      if (previous === undefined) delete process.env.WEFT_BOOTSTRAP_TOKEN;
      else process.env.WEFT_BOOTSTRAP_TOKEN = previous;
    }
  });

  test("fetch, node:http and node:net obey the address policy; an allow-listed range is reached", async () => {
    const target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("hello") });
    try {
      const strict = await testApp({ WEFT_NPM_REGISTRY: registry.url });
      await install(strict, `${FIXTURE}@1.1.0`);
      const conn = await connection(strict, FIXTURE_ID, { token: "good-token" });
      const blocked = await run(
        strict,
        await publish(strict, FIXTURE_ID, conn, [{ name: "reach", actionId: "reach", config: { host: "127.0.0.1", port: target.port } }]),
      );
      expect(blocked.status).toBe("completed");
      for (const via of ["fetch", "http", "net"]) expect(blocked.steps[0].outputData[via]).toContain("refused to connect to 127.0.0.1");
      const byName = await run(
        strict,
        await publish(strict, FIXTURE_ID, conn, [{ name: "reach", actionId: "reach", config: { host: "localhost", port: target.port } }]),
      );
      for (const via of ["fetch", "http", "net"]) expect(byName.steps[0].outputData[via]).toContain("refused");
      strict.deps.piecePackages.stop();

      // The same piece on the server that allows 127.0.0.0/8 connects: the refusals above came from the policy.
      await install(t, `${FIXTURE}@1.1.0`);
      const allowedConn = await connection(t, FIXTURE_ID, { token: "good-token" });
      const allowed = await run(
        t,
        await publish(t, FIXTURE_ID, allowedConn, [{ name: "reach", actionId: "reach", config: { host: "127.0.0.1", port: target.port } }]),
      );
      expect(allowed.steps[0].outputData).toEqual({ fetch: "connected", http: "connected", net: "connected" });
    } finally {
      target.stop(true);
    }
  });

  test("a range allowed in Settings → Network reaches the running piece host at once; removing it refuses again", async () => {
    const target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("hello") });
    const app = await testApp({ WEFT_NPM_REGISTRY: registry.url });
    try {
      await install(app, `${FIXTURE}@1.1.0`);
      const conn = await connection(app, FIXTURE_ID, { token: "good-token" });
      const wf = await publish(app, FIXTURE_ID, conn, [{ name: "reach", actionId: "reach", config: { host: "127.0.0.1", port: target.port } }]);
      const outcome = async () => (await run(app, wf)).steps[0].outputData;
      for (const via of ["fetch", "http", "net"]) expect((await outcome())[via]).toContain("refused to connect to 127.0.0.1");

      expect((await app.req("PUT", "/api/settings/network", { body: { allowedCidrs: ["127.0.0.0/8"] } })).status).toBe(200);
      expect(await outcome()).toEqual({ fetch: "connected", http: "connected", net: "connected" });
      // "localhost" is loopback by name, so the allowed range opens it too.
      const byName = await publish(app, FIXTURE_ID, conn, [{ name: "reach", actionId: "reach", config: { host: "localhost", port: target.port } }]);
      expect((await run(app, byName)).steps[0].outputData).toEqual({ fetch: "connected", http: "connected", net: "connected" });
      expect((await app.req("PUT", "/api/settings/network", { body: { allowedCidrs: [] } })).status).toBe(200);
      const last = await outcome();
      for (const via of ["fetch", "http", "net"]) expect({ via, said: last[via] }).toEqual({ via, said: expect.stringContaining("Settings → Network") });
    } finally {
      app.deps.piecePackages.stop();
      target.stop(true);
    }
  });
});

announceMissingMariadb();
describe.skipIf(!hasMariadb())("@activepieces/piece-mysql against MariaDB", () => {
  let maria: MariadbHandle;
  let conn: string;
  beforeAll(async () => {
    maria = await startMariadb();
    const proc = Bun.spawnSync([
      "mariadb",
      `--host=127.0.0.1`,
      `--port=${maria.port}`,
      `-u${maria.user}`,
      `-p${maria.password}`,
      maria.database,
      "-e",
      "CREATE TABLE readings (id INT PRIMARY KEY, sensor VARCHAR(50), value DOUBLE); CREATE TABLE other_table (x INT);",
    ]);
    if (proc.exitCode !== 0) throw new Error(proc.stderr.toString());
    const installed = await install(t, "@activepieces/piece-mysql@0.2.7");
    if (installed.status !== 201) throw new Error(installed.text);
    conn = await connection(t, "ap-mysql", { host: "127.0.0.1", port: maria.port, user: maria.user, password: maria.password, database: maria.database });
  }, 60_000);
  afterAll(async () => {
    await maria?.stop();
  });

  test("the table dropdown lists the real tables", async () => {
    const res = await t.req("POST", "/api/pieces/ap-mysql/actions/insert_row/options/table", { body: { connectionId: conn, config: {} } });
    expect(res.status).toBe(200);
    expect(res.body.data.options.map((o: { value: unknown }) => o.value).sort()).toEqual(["other_table", "readings"]);
  });

  test("a published workflow inserts a row and finds it", async () => {
    const wf = await publish(t, "ap-mysql", conn, [
      { name: "put", actionId: "insert_row", config: { table: "readings", values: { id: 1, sensor: "{{trigger.body.sensor}}", value: 21.5 } } },
      { name: "get", actionId: "find_rows", config: { table: "readings", condition: "sensor = ?", args: ["{{trigger.body.sensor}}"] } },
    ]);
    const result = await run(t, wf, { sensor: "kitchen" });
    expect(result.status).toBe("completed");
    expect(result.steps[1].outputData.results).toEqual([{ id: 1, sensor: "kitchen", value: 21.5 }]);
  });
});

describe("@activepieces/piece-wordpress against a local site", () => {
  /** Posts of the fake site, newest last; dates as WordPress writes them (UTC, seconds, no zone). */
  const posts: Array<{ id: number; date: string; title: { rendered: string }; content: { rendered: string }; status: string }> = [];
  const wpDate = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  const calls: string[] = [];
  let site: ReturnType<typeof Bun.serve>;
  let h: TriggerApp | undefined;
  beforeAll(async () => {
    await registry.publish(join(ROOT, "node_modules/@activepieces/piece-wordpress"));
    site = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        calls.push(`${request.method} ${url.pathname}`);
        if (url.pathname.startsWith("/wp-json/wp/v2/") && request.headers.get("authorization") !== `Basic ${btoa("ada:app-password")}`) {
          return Response.json({ code: "rest_forbidden" }, { status: 401 });
        }
        if (url.pathname === "/wp-json/wp/v2/posts" && request.method === "POST") {
          const body = (await request.json()) as { title: string; content: string; status?: string };
          // A second later than now and than the last post: the piece's time baseline has milliseconds,
          // WordPress dates do not, and the piece (by its design) skips a post dated in its last post's second.
          const last = posts.length ? Date.parse(`${posts[posts.length - 1]?.date}Z`) : 0;
          const post = {
            id: posts.length + 1,
            date: wpDate(Math.max(Date.now() + 1000, last + 1000)),
            title: { rendered: body.title },
            content: { rendered: body.content },
            status: body.status ?? "draft",
          };
          posts.push(post);
          return Response.json(post, { status: 201 });
        }
        if (url.pathname === "/wp-json/wp/v2/posts") {
          const after = Date.parse(`${url.searchParams.get("after")}`);
          const found = posts.filter((post) => Number.isNaN(after) || Date.parse(`${post.date}Z`) > after).reverse();
          return Response.json(found, { headers: { "x-wp-totalpages": "1" } });
        }
        if (url.pathname === "/wp-json/wp/v2/categories") return Response.json([]);
        return Response.json({ name: "Fake WordPress" });
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    site?.stop(true);
  });

  test("create_post creates a post; the new_post trigger starts one run per new post, none for old ones, across a restart", async () => {
    posts.push({ id: 100, date: wpDate(Date.parse("2026-01-01T00:00:00Z")), title: { rendered: "Old post" }, content: { rendered: "" }, status: "publish" });
    h = await triggerApp({ clock: new FakeClock(), env: { WEFT_NPM_REGISTRY: registry.url, WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
    expect((await h.req("POST", "/api/pieces/packages", { body: { package: "@activepieces/piece-wordpress@0.7.0" } })).status).toBe(201);
    const values = { website_url: `http://127.0.0.1:${site.port}`, username: "ada", password: "app-password" };
    const made = await h.req("POST", "/api/connections", { body: { pieceId: "ap-wordpress", name: "blog", values } });
    expect(made.status).toBe(201);
    const conn = made.body.data.id;
    const refused = await h.req("POST", "/api/connections", { body: { pieceId: "ap-wordpress", name: "wrong", values: { ...values, password: "nope" } } });
    expect(refused.status).toBe(400);

    const keep = { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { title: "{{trigger.body.title.rendered}}" } } };
    const poll = { name: "trigger", type: "poll", pieceId: "ap-wordpress", actionId: "new_post", connectionId: conn, config: { poll_interval_seconds: 300 } };
    const watcher = await h.publishWorkflow(definition(poll, keep), "new posts");
    const fired = async (app: TriggerApp) => {
      const titles: string[] = [];
      for (const outcome of await app.triggers.poller.tick()) {
        expect(outcome.error).toBeUndefined();
        for (const id of outcome.runIds ?? []) titles.push((await app.run(id)).triggerData.body.title.rendered);
      }
      return titles;
    };
    expect(await fired(h)).toEqual([]); // the old post is the baseline

    const writer = await h.publishWorkflow(
      definition(
        { name: "trigger", type: "manual", config: {} },
        {
          name: "post",
          type: "PIECE",
          pieceId: "ap-wordpress",
          actionId: "create_post",
          connectionId: conn,
          config: { title: "{{trigger.body.title}}", content: "Hi", status: "publish" },
        },
      ),
      "writer",
    );
    const written = await h.req("POST", `/api/workflows/${writer.id}/run?environment=production&wait=20`, { body: { title: "Hello from Weft" } });
    expect(written.body.data.status).toBe("completed");
    expect(written.body.data.steps[0].outputData.body.title.rendered).toBe("Hello from Weft");

    h.clock.advance(300_000);
    expect(await fired(h)).toEqual(["Hello from Weft"]);
    h.clock.advance(300_000);
    expect(await fired(h)).toEqual([]);

    h = await h.restart();
    await h.triggers.reconcile();
    await h.req("POST", `/api/workflows/${writer.id}/run?environment=production&wait=20`, { body: { title: "After the restart" } });
    h.clock.advance(300_000);
    expect(await fired(h)).toEqual(["After the restart"]);
    const runs = (await h.runsOf(watcher.id)).filter((r: { triggerType: string }) => r.triggerType === "poll");
    expect(runs).toHaveLength(2);
  }, 60_000);
});

describe("an OAUTH2 piece", () => {
  test("is authorized through Weft's OAuth2 flow; the access token reaches ctx.auth and an expiring one is refreshed once", async () => {
    // Tokens live 60 s and Weft refreshes those expiring within 120 s: the first run refreshes, the second does not.
    const provider = await startProvider({ expiresIn: 60 });
    try {
      await registry.publish(await oauthFixturePackage(provider.authUrl, provider.tokenUrl));
      expect((await install(t, `${OAUTH_FIXTURE}@1.0.0`)).status).toBe(201);
      const made = await t.req("POST", "/api/connections", {
        body: { pieceId: OAUTH_FIXTURE_ID, name: "oauth fixture", clientId: provider.clientId, clientSecret: provider.clientSecret },
      });
      expect(made.status).toBe(201);
      expect(made.body.data.status).toBe("pending");
      expect((await authorize(t, made.body.data.id)).callback.status).toBe(200);
      const issued = [...provider.issued];
      provider.settings.expiresIn = 3600;

      const wf = await publish(t, OAUTH_FIXTURE_ID, made.body.data.id, [{ name: "who", actionId: "whoami", config: {} }]);
      const before = provider.counts.refresh;
      const first = await run(t, wf);
      expect(first.status).toBe("completed");
      expect(first.steps[0].outputData.type).toBe("OAUTH2");
      const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
      const token = first.steps[0].outputData.tokenSha256 as string;
      expect(provider.issued.map(sha)).toContain(token);
      expect(issued.map(sha)).not.toContain(token); // the refreshed token, not the first one
      const second = await run(t, wf);
      expect(second.steps[0].outputData.tokenSha256).toBe(token);
      expect(provider.counts.refresh).toBe(before + 1);
    } finally {
      provider.stop();
    }
  });
});
