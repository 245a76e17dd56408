/**
 * The SSRF guard is on every path piece code reaches the network by (issue 6 item 2): workflow steps on
 * a worker thread and on the main thread, dynamic options, connection token requests. A loopback
 * listener proves nothing arrived; the same calls reach it once WEFT_ALLOW_CIDRS allow-lists loopback.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadRegistry } from "../../src/pieces-runtime/registry";
import { createGuardedFetch } from "../../src/net/guarded-fetch";
import { createGeneric } from "../connections/support/flow";
import { startProvider, type Provider } from "../connections/support/oauth-provider";
import { createWorkflow, definition, engineApp, httpGet, runAndWait, stepOf, stopEngines, testPiece } from "../engine/support";
import { loopback } from "../pieces/fake-context";

let listener: ReturnType<typeof loopback>;
let provider: Provider;
afterAll(async () => {
  listener.stop();
  provider.stop();
  await stopEngines();
});
beforeAll(async () => {
  listener = loopback(() => Response.json({ reached: true }));
  provider = await startProvider();
});
beforeEach(() => {
  listener.requests.length = 0;
});

const port = () => new URL(listener.url).port;
const targets = () =>
  [
    [`http://127.0.0.1:${port()}/secret`, "127.0.0.1"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    [`http://[::ffff:127.0.0.1]:${port()}/secret`, "127.0.0.1"],
  ] as const;

/** A piece registered in this process only: its steps run on the main thread, with the engine's ctx.fetch. */
const mainThreadPiece = testPiece("probe", [{ id: "get", run: async (ctx) => ({ status: (await ctx.fetch(String(ctx.config.url))).status }) }]);

describe("a workflow step calling an internal address fails", () => {
  test("http.send_request on a worker thread, with a message naming the address and the allow-list", async () => {
    const t = await engineApp();
    for (const [url, address] of targets()) {
      const run = await runAndWait(t, await createWorkflow(t, definition(httpGet(url))));
      expect(run.status).toBe("failed");
      const step = stepOf(run, "call");
      expect(step.status).toBe("failed");
      expect(step.errorMessage).toContain("refused to connect to");
      expect(step.errorMessage).toContain(address);
      // Metadata can never be allowed; the other addresses name where to allow their range.
      if (address === "169.254.169.254") expect(step.errorMessage).toContain("cloud metadata address");
      else expect(step.errorMessage).toContain("Settings → Network (or with WEFT_ALLOW_CIDRS");
    }
    expect(t.deps.engine.stats.workerSteps).toBe(3);
    expect(listener.requests).toHaveLength(0);
  });

  test("a piece on a worker thread that calls the global fetch instead of ctx.fetch is guarded too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-ssrf-"));
    writeFileSync(
      join(dir, "careless.ts"),
      `export default (sdk) => sdk.definePiece({
  id: "careless", name: "Careless", version: "1.0.0", description: "uses the global fetch",
  actions: [sdk.action({ id: "get", name: "get", description: "x", sideEffects: "read", props: {},
    run: async (ctx) => ({ status: (await fetch(String(ctx.config.url))).status }) })],
});
`,
    );
    const t = await engineApp({ WEFT_PIECES_DIR: dir });
    for (const piece of (await loadRegistry({ piecesDir: dir })).list()) t.deps.pieces.register(piece);
    const run = await runAndWait(
      t,
      await createWorkflow(t, definition({ name: "call", type: "PIECE", pieceId: "careless", actionId: "get", config: { url: `${listener.url}/x` } })),
    );
    expect(stepOf(run, "call").errorMessage).toContain("refused to connect to 127.0.0.1");
    expect(t.deps.engine.stats.workerSteps).toBe(1);
    expect(listener.requests).toHaveLength(0);
  });

  test("a step on the main thread", async () => {
    const t = await engineApp();
    t.deps.pieces.register(mainThreadPiece);
    for (const [url, address] of targets()) {
      const run = await runAndWait(t, await createWorkflow(t, definition({ name: "call", type: "PIECE", pieceId: "probe", actionId: "get", config: { url } })));
      expect(stepOf(run, "call").errorMessage).toContain("refused to connect to");
      expect(stepOf(run, "call").errorMessage).toContain(address);
    }
    expect(t.deps.engine.stats.workerSteps).toBe(0);
    expect(listener.requests).toHaveLength(0);
  });

  test("allow-listing loopback lets the same step through (metadata stays refused)", async () => {
    const t = await engineApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
    const [loop, metadata, mapped] = targets();
    for (const url of [loop[0], mapped[0]]) {
      const run = await runAndWait(t, await createWorkflow(t, definition(httpGet(url))));
      expect(run.status).toBe("completed");
      expect(stepOf(run, "call").outputData.body).toEqual({ reached: true });
    }
    expect(listener.requests).toHaveLength(2);
    const refused = await runAndWait(t, await createWorkflow(t, definition(httpGet(metadata[0]))));
    expect(stepOf(refused, "call").errorMessage).toContain("refused to connect to 169.254.169.254");
  });
});

describe("piece code run by the API", () => {
  test("dynamic options go through the guard", async () => {
    const t = await engineApp();
    t.deps.resolveConnectionAuth = async () => ({ kind: "oauth2", accessToken: "gho_x", data: { apiBaseUrl: listener.url } });
    const res = await t.req("POST", "/api/pieces/github/actions/list_issues/options/repository", { body: { config: {}, connectionId: crypto.randomUUID() } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("refused to connect to 127.0.0.1");
    expect(listener.requests).toHaveLength(0);
  });

  test("a connection's token request goes through the guard", async () => {
    const t = await engineApp();
    const before = provider.counts.clientCredentials;
    const c = await createGeneric(t, provider, { config: { tokenUrl: provider.tokenUrl, grantType: "client_credentials" } });
    const made = (await t.req("GET", `/api/connections/${c.id}`)).body.data;
    expect(made.status).toBe("error");
    expect(made.statusMessage).toContain("refused to connect to 127.0.0.1");
    expect(provider.counts.clientCredentials).toBe(before);
    // Allow-listed, the same provider is reached.
    const allowed = await engineApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
    const ok = await createGeneric(allowed, provider, { config: { tokenUrl: provider.tokenUrl, grantType: "client_credentials" } });
    expect((await allowed.req("GET", `/api/connections/${ok.id}`)).body.data.status).toBe("active");
    expect(provider.counts.clientCredentials).toBe(before + 1);
  });

  test("the app's fetch is the guard, not the global fetch", async () => {
    const t = await engineApp();
    expect(t.deps.guardedFetch).not.toBe(fetch);
    await expect(t.deps.guardedFetch(`${listener.url}/x`)).rejects.toThrow("refused to connect to 127.0.0.1");
    await expect(createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] })(`${listener.url}/x`)).resolves.toBeInstanceOf(Response);
    expect(listener.requests).toHaveLength(1);
  });
});
