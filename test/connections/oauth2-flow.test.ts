/**
 * The OAuth2 flow (docs/connections.md) end to end, in-process Weft against a real OAuth2 server on loopback:
 * the authorize URL's contents, PKCE, the signed single-use 10-minute state, the callback's HTML answers, managed apps.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StateSigner } from "../../src/core/connections/oauth2-state";
import { stateKeyFrom } from "../../src/core/connections/state-key";
import { FakeClock } from "../../src/lib/clock";
import { action, Auth, definePiece } from "../../src/pieces-sdk";
import { testApp, type TestApp } from "../support/app";
import { storedText } from "../support/stored-text";
import { authorize, createGeneric, registerTestPieces } from "./support/flow";
import { startProvider, type Provider } from "./support/oauth-provider";

const PUBLIC_URL = "https://weft.example.com";
let t: TestApp;
let provider: Provider;

beforeAll(async () => {
  provider = await startProvider();
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_PUBLIC_URL: PUBLIC_URL });
  registerTestPieces(t);
  t.deps.pieces.register(
    definePiece({
      id: "test-extras",
      name: "extras",
      version: "1.0.0",
      description: "test",
      auth: Auth.oauth2({
        authorizeUrl: "https://idp.example.com/authorize?tenant=acme",
        tokenUrl: "https://idp.example.com/token",
        scopes: ["a.read", "a.write"],
        extraAuthorizeParams: { prompt: "consent", state: "forged", client_id: "forged" },
      }),
      actions: [action({ id: "noop", name: "noop", description: "noop", run: () => ({}) })],
    }),
  );
});
afterAll(() => provider.stop());

const connection = async (id: string) => (await t.req("GET", `/api/connections/${id}`)).body.data;

describe("POST /api/connections/{id}/oauth2/start", () => {
  test("a declared piece: its authorize URL, default scopes and extra parameters, PKCE S256, signed state", async () => {
    const made = await t.req("POST", "/api/connections", { body: { pieceId: "github", name: "gh", clientId: "gh-client", clientSecret: "gh-secret" } });
    const res = await t.req("POST", `/api/connections/${made.body.data.id}/oauth2/start`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body.data.redirectUri).toBe(`${PUBLIC_URL}/api/oauth2/callback`);
    const url = new URL(res.body.data.authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe("https://github.com/login/oauth/authorize");
    const q = url.searchParams;
    expect(q.get("response_type")).toBe("code");
    expect(q.get("client_id")).toBe("gh-client");
    expect(q.get("redirect_uri")).toBe(`${PUBLIC_URL}/api/oauth2/callback`);
    expect(q.get("scope")).toBe("repo");
    expect(q.get("access_type")).toBe("offline");
    expect(q.get("allow_signup")).toBe("false");
    expect(q.get("prompt")).toBe("select_account");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")!.length).toBeGreaterThan(40);
    expect(res.text).not.toContain("gh-secret");
  });

  test("extra parameters cannot replace the flow's own; the URL's own query is kept", async () => {
    const made = await t.req("POST", "/api/connections", { body: { pieceId: "test-extras", name: "extras", clientId: "real-client" } });
    const q = new URL((await t.req("POST", `/api/connections/${made.body.data.id}/oauth2/start`)).body.data.authorizeUrl).searchParams;
    expect(q.get("tenant")).toBe("acme");
    expect(q.get("prompt")).toBe("consent");
    expect(q.get("client_id")).toBe("real-client");
    expect(q.get("state")).not.toBe("forged");
    expect(q.getAll("state").length).toBe(1);
    expect(q.get("scope")).toBe("a.read a.write");
  });

  test("the generic piece uses the connection's authUrl and scope", async () => {
    const c = await createGeneric(t, provider, { config: { authUrl: `${provider.authUrl}?audience=api`, tokenUrl: provider.tokenUrl, scope: "custom:scope" } });
    const url = new URL((await t.req("POST", `/api/connections/${c.id}/oauth2/start`)).body.data.authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe(provider.authUrl);
    expect(url.searchParams.get("audience")).toBe("api");
    expect(url.searchParams.get("scope")).toBe("custom:scope");
  });

  test("a fresh URL per call: new state and new PKCE challenge each time", async () => {
    const c = await createGeneric(t, provider);
    const a = new URL((await t.req("POST", `/api/connections/${c.id}/oauth2/start`)).body.data.authorizeUrl).searchParams;
    const b = new URL((await t.req("POST", `/api/connections/${c.id}/oauth2/start`)).body.data.authorizeUrl).searchParams;
    expect(a.get("state")).not.toBe(b.get("state"));
    expect(a.get("code_challenge")).not.toBe(b.get("code_challenge"));
  });

  test("Idempotency-Key is refused with 400", async () => {
    const c = await createGeneric(t, provider);
    const res = await t.req("POST", `/api/connections/${c.id}/oauth2/start`, { headers: { "idempotency-key": "k1" } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("Idempotency-Key");
  });

  test("refused for connections that need no browser authorization", async () => {
    const key = await t.req("POST", "/api/connections", { body: { pieceId: "test-apikey", name: "no oauth", apiKey: "k" } });
    const res = await t.req("POST", `/api/connections/${key.body.data.id}/oauth2/start`);
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("not OAuth2");
    const cc = await createGeneric(t, provider, { config: { tokenUrl: provider.tokenUrl, grantType: "client_credentials" } });
    const ccStart = await t.req("POST", `/api/connections/${cc.id}/oauth2/start`);
    expect(ccStart.status).toBe(422);
    expect(ccStart.body.error.message).toContain("client_credentials");
  });
});

describe("GET /api/oauth2/callback", () => {
  test("completes the flow: code exchanged with the PKCE verifier, tokens stored, status active, an HTML page for the person", async () => {
    const c = await createGeneric(t, provider);
    const before = provider.counts.code;
    const { callback, location } = await authorize(t, c.id);
    expect(location.origin + location.pathname).toBe(`${PUBLIC_URL}/api/oauth2/callback`);
    expect(callback.status).toBe(200);
    expect(callback.headers.get("content-type")).toContain("text/html");
    expect(callback.headers.get("cache-control")).toBe("no-store");
    expect(callback.headers.get("referrer-policy")).toBe("no-referrer");
    expect(callback.text).toContain("You may close this window");
    expect(callback.text).toContain('"type":"weft:oauth2"');
    expect(callback.text).toContain(`"connectionId":"${c.id}"`);
    expect(callback.text).toContain(`"${PUBLIC_URL}"`); // postMessage target origin, never "*"
    expect(provider.counts.code).toBe(before + 1); // the provider checked S256(verifier) == challenge
    expect(provider.lastTokenForm()!.get("redirect_uri")).toBe(`${PUBLIC_URL}/api/oauth2/callback`);
    const after = await connection(c.id);
    expect(after.status).toBe("active");
    expect(Date.parse(after.tokenExpiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect(after.credentials).toEqual({ clientSecret: "********", accessToken: "********", refreshToken: "********" });
  });

  test("a replayed callback is refused: the state is single-use", async () => {
    const c = await createGeneric(t, provider);
    const { location } = await authorize(t, c.id);
    const exchanges = provider.counts.code;
    const replay = await t.req("GET", location.pathname + location.search, { token: null });
    expect(replay.status).toBe(400);
    expect(replay.headers.get("content-type")).toContain("text/html");
    expect(replay.text).toContain("already used or is unknown");
    expect(provider.counts.code).toBe(exchanges);
  });

  test("a tampered state is refused and nothing is stored", async () => {
    const c = await createGeneric(t, provider);
    const start = await t.req("POST", `/api/connections/${c.id}/oauth2/start`);
    const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
    const location = new URL(hop.headers.get("location")!);
    const state = location.searchParams.get("state")!;
    const [body, signature] = state.split(".");
    // Re-bind the state to another connection, keeping the signature: the HMAC no longer matches.
    const other = await createGeneric(t, provider);
    const forgedBody = Buffer.from(Buffer.from(body!, "base64url").toString().replace(c.id, other.id)).toString("base64url");
    for (const forged of [`${forgedBody}.${signature}`, `${body}.${signature!.slice(0, -2)}AA`, "garbage", body!]) {
      location.searchParams.set("state", forged);
      const res = await t.req("GET", location.pathname + location.search, { token: null });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.text).toContain("not one Weft issued");
      expect(res.text).toContain("Nothing was stored");
    }
    expect((await connection(c.id)).status).toBe("pending");
    expect((await connection(other.id)).status).toBe("pending");
    expect((await connection(c.id)).credentials.accessToken).toBeUndefined();
  });

  test("an expired state (older than 10 minutes) is refused and nothing is stored", async () => {
    const c = await createGeneric(t, provider);
    const start = await t.req("POST", `/api/connections/${c.id}/oauth2/start`);
    const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
    const location = new URL(hop.headers.get("location")!);
    const ctx = t.deps.connections.ctx;
    const realNow = ctx.now;
    ctx.now = () => Date.now() + 10 * 60_000 + 1000;
    try {
      const res = await t.req("GET", location.pathname + location.search, { token: null });
      expect(res.status).toBe(400);
      expect(res.text).toContain("older than 10 minutes");
    } finally {
      ctx.now = realNow;
    }
    expect((await connection(c.id)).status).toBe("pending");
    // Expired also means used up: the same link is refused now that the clock is back.
    expect((await t.req("GET", location.pathname + location.search, { token: null })).status).toBe(400);
    expect((await connection(c.id)).status).toBe("pending");
  });

  test("WEFT_OAUTH_STATE_TTL_SECONDS shortens the link's life: a callback after it is refused, naming the lifetime", async () => {
    // The app's clock is moved past the link's life instead of waiting it out (docs/architecture.md, "Time").
    const clock = new FakeClock(Date.now());
    const short = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_PUBLIC_URL: PUBLIC_URL, WEFT_OAUTH_STATE_TTL_SECONDS: "1" }, { clock });
    registerTestPieces(short);
    const late = await createGeneric(short, provider);
    const start = await short.req("POST", `/api/connections/${late.id}/oauth2/start`);
    const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
    const location = new URL(hop.headers.get("location")!);
    clock.advance(1_100);
    const res = await short.req("GET", location.pathname + location.search, { token: null });
    expect(res.status).toBe(400);
    expect(res.text).toContain("older than 1 second");
    expect((await short.req("GET", `/api/connections/${late.id}`)).body.data.status).toBe("pending");
  });

  test("a correctly signed state Weft never stored (unknown) is refused", async () => {
    const c = await createGeneric(t, provider);
    const signer = new StateSigner(stateKeyFrom(t.config));
    const { state } = signer.mint(c.id);
    const res = await t.req("GET", `/api/oauth2/callback?code=abc&state=${encodeURIComponent(state)}`, { token: null });
    expect(res.status).toBe(400);
    expect(res.text).toContain("already used or is unknown");
    expect((await connection(c.id)).status).toBe("pending");
  });

  test("no state, a provider refusal, and hostile text all answer HTML error pages", async () => {
    const missing = await t.req("GET", "/api/oauth2/callback?code=abc", { token: null });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("content-type")).toContain("text/html");
    expect(missing.text).toContain("no state");
    const c = await createGeneric(t, provider);
    const start = await t.req("POST", `/api/connections/${c.id}/oauth2/start`);
    const state = new URL(start.body.data.authorizeUrl).searchParams.get("state")!;
    const denied = await t.req(
      "GET",
      `/api/oauth2/callback?error=access_denied&error_description=${encodeURIComponent("<script>alert(1)</script>")}&state=${encodeURIComponent(state)}`,
      { token: null },
    );
    expect(denied.status).toBe(400);
    expect(denied.text).toContain("access_denied");
    expect(denied.text).not.toContain("<script>alert(1)</script>");
    expect(denied.text).toContain("&lt;script&gt;");
    expect((await connection(c.id)).status).toBe("pending");
    const doubled = await t.req("GET", "/api/oauth2/callback?state=a&state=b", { token: null });
    expect(doubled.headers.get("content-type")).toContain("text/html");
  });

  test("a code the provider refuses leaves the connection as it was", async () => {
    const c = await createGeneric(t, provider);
    const start = await t.req("POST", `/api/connections/${c.id}/oauth2/start`);
    const state = new URL(start.body.data.authorizeUrl).searchParams.get("state")!;
    const res = await t.req("GET", `/api/oauth2/callback?code=not-a-code&state=${encodeURIComponent(state)}`, { token: null });
    expect(res.status).toBe(502);
    expect(res.text).toContain("invalid_grant");
    expect((await connection(c.id)).status).toBe("pending");
  });
});

describe("managed OAuth apps (WEFT_OAUTH_APPS)", () => {
  let m: TestApp;
  let file: string;
  const managedSecret = "managed-secret-do-not-store";

  beforeAll(async () => {
    const managedProvider = provider;
    const dir = mkdtempSync(join(tmpdir(), "weft-apps-"));
    file = join(dir, "oauth-apps.json");
    writeFileSync(
      file,
      JSON.stringify({
        github: { clientId: "instance-gh-client", clientSecret: "instance-gh-secret" },
        "test-provider": { clientId: managedProvider.clientId, clientSecret: managedProvider.clientSecret },
        oauth2: { clientId: "never-used", clientSecret: managedSecret },
      }),
    );
    m = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_OAUTH_APPS: file });
    m.deps.pieces.register(
      definePiece({
        id: "test-provider",
        name: "declared",
        version: "1.0.0",
        description: "a piece declaring the loopback provider",
        auth: Auth.oauth2({ authorizeUrl: managedProvider.authUrl, tokenUrl: managedProvider.tokenUrl, scopes: ["read"] }),
        actions: [action({ id: "noop", name: "noop", description: "noop", run: () => ({}) })],
      }),
    );
  });

  test("no per-connection clientId is needed; the instance's client id is used with the piece's own authorize URL", async () => {
    const made = await m.req("POST", "/api/connections", { body: { pieceId: "github", name: "managed gh" } });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ managedApp: true, clientId: null, status: "pending", credentials: {} });
    const url = new URL((await m.req("POST", `/api/connections/${made.body.data.id}/oauth2/start`)).body.data.authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe("https://github.com/login/oauth/authorize");
    expect(url.searchParams.get("client_id")).toBe("instance-gh-client");
  });

  test("the whole flow works with a managed app, and its secret is never stored", async () => {
    const made = await m.req("POST", "/api/connections", { body: { pieceId: "test-provider", name: "managed flow" } });
    const { callback } = await authorize(m, made.body.data.id);
    expect(callback.status).toBe(200);
    expect(provider.lastTokenForm()!.get("client_id")).toBe(provider.clientId);
    expect((await m.req("GET", `/api/connections/${made.body.data.id}`)).body.data.status).toBe("active");
    expect((await storedText(m)).includes(provider.clientSecret)).toBe(false);
  });

  test("never for a piece whose URLs come from the connection: the generic piece still needs a clientId", async () => {
    const res = await m.req("POST", "/api/connections", {
      body: { pieceId: "oauth2", name: "generic managed", config: { authUrl: "https://attacker.example/a", tokenUrl: "https://attacker.example/t" } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("clientId is required");
  });

  test("a malformed apps file stops start-up with a message naming the file", async () => {
    writeFileSync(file + ".bad", JSON.stringify({ github: { clientSecret: "x" } }));
    await expect(testApp({ WEFT_OAUTH_APPS: file + ".bad" })).rejects.toThrow(/WEFT_OAUTH_APPS=.*"github" needs a non-empty "clientId"/);
  });
});
