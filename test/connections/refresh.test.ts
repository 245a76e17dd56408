/**
 * Refresh at run time (issue 8 item 4): single-flight per connection — within a process and across
 * processes sharing the database — refresh-token rotation, invalid_grant, client credentials.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { encryptJson } from "../../src/core/connections/context";
import { createLogger } from "../../src/http/logger";
import { FakeClock } from "../../src/lib/clock";
import { nowIso } from "../../src/store/db";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { authorize, createGeneric } from "./support/flow";
import { startProvider, type Provider } from "./support/oauth-provider";

let t: TestApp;
let provider: Provider;

beforeAll(async () => {
  // Tokens live 60 s and the margin is 120 s: every token handed out is "about to expire" until refreshed
  // to a long-lived one, which lets a test decide when a refresh is due by setting provider.settings.expiresIn.
  provider = await startProvider({ expiresIn: 60, tokenDelayMs: 50 });
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
});
afterAll(() => provider.stop());

async function activeConnection() {
  provider.settings.expiresIn = 60;
  const c = await createGeneric(t, provider);
  expect((await authorize(t, c.id)).callback.status).toBe(200);
  return c;
}

const resolve = (c: { id: string; workspaceId: string }) =>
  t.deps.connections.resolveConnectionAuth({ workspaceId: c.workspaceId, connectionId: c.id, pieceId: "oauth2" });
const connection = async (id: string) => (await t.req("GET", `/api/connections/${id}`)).body.data;

describe("refresh at run time", () => {
  test("10 concurrent runs with an expiring token cause ONE refresh and all get the new token", async () => {
    const c = await activeConnection();
    const before = provider.counts.refresh;
    provider.settings.expiresIn = 3600;
    const results = await Promise.all(Array.from({ length: 10 }, () => resolve(c)));
    expect(provider.counts.refresh).toBe(before + 1);
    const tokens = new Set(results.map((r) => (r.kind === "oauth2" ? r.accessToken : "")));
    expect(tokens.size).toBe(1);
    expect(provider.issued).toContain([...tokens][0]!);
    // Fresh now: later runs refresh nothing.
    await resolve(c);
    expect(provider.counts.refresh).toBe(before + 1);
    expect(Date.parse((await connection(c.id)).tokenExpiresAt) - Date.now()).toBeGreaterThan(3500_000);
  });

  test("a rotated refresh token replaces the old one (the provider revoked the old)", async () => {
    const c = await activeConnection();
    await resolve(c); // refresh #1: the provider rotates and revokes the first refresh token
    provider.settings.expiresIn = 60;
    // Force another refresh: the stored token is short-lived again.
    await appSql(t).run("UPDATE connections SET token_expires_at = ? WHERE id = ?", [new Date(Date.now() + 1000).toISOString(), c.id]);
    const before = provider.counts.refresh;
    const auth = await resolve(c); // works only with the NEW refresh token
    expect(provider.counts.refresh).toBe(before + 1);
    expect(auth.kind).toBe("oauth2");
    expect((await connection(c.id)).status).toBe("active");
  });

  test("an answer without a refresh token keeps the old one", async () => {
    provider.settings.rotate = false;
    try {
      const c = await activeConnection();
      await resolve(c);
      await appSql(t).run("UPDATE connections SET token_expires_at = ? WHERE id = ?", [new Date(Date.now() + 1000).toISOString(), c.id]);
      const before = provider.counts.refresh;
      await resolve(c);
      expect(provider.counts.refresh).toBe(before + 1);
      expect((await connection(c.id)).credentials.refreshToken).toBe("********");
    } finally {
      provider.settings.rotate = true;
    }
  });

  test("invalid_grant sets status error and the step fails telling the user to reconnect", async () => {
    const c = await activeConnection();
    provider.revokeRefreshTokens();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => resolve(c)));
    for (const r of results) {
      expect(r.status).toBe("rejected");
      expect(String((r as PromiseRejectedResult).reason.message)).toContain("reconnect");
    }
    const after = await connection(c.id);
    expect(after.status).toBe("error");
    expect(after.statusMessage).toContain("invalid_grant");
    expect(after.statusMessage).toContain("oauth2/start");
    expect(after.credentials.accessToken).toBeUndefined();
    expect(after.credentials.refreshToken).toBeUndefined();
    // Later runs fail at once, without calling the provider again.
    const calls = provider.counts.rejected;
    await expect(resolve(c)).rejects.toThrow("reconnect");
    expect(provider.counts.rejected).toBe(calls);
    // Reconnecting repairs it.
    expect((await authorize(t, c.id)).callback.status).toBe(200);
    expect((await connection(c.id)).status).toBe("active");
  });

  test("a step of the generic piece calls the provider's API with the token it was handed", async () => {
    const c = await activeConnection();
    provider.settings.expiresIn = 3600;
    const auth = await resolve(c);
    const step = t.deps.pieces.action("oauth2", "request")!;
    const output = (await step.run({
      config: { method: "GET", url: `${provider.base}/me` },
      auth,
      fetch: (u: any, i: any) => fetch(u, i),
      signal: AbortSignal.timeout(5000),
    } as any)) as any;
    expect(output.status).toBe(200);
    expect(output.body).toEqual({ id: "me" });
  });

  test("a pending connection is refused with how to authorize it", async () => {
    const c = await createGeneric(t, provider);
    await expect(resolve(c)).rejects.toThrow("not authorized yet");
  });

  test("processes sharing the database refresh once between them (lease in the database)", async () => {
    const c = await activeConnection();
    // A second app on the same database (file, or PostgreSQL database): what another process would be.
    const db2 = t.reopen();
    const second = createApp({ config: t.config, db: db2, log: createLogger("silent") });
    const before = provider.counts.refresh;
    provider.settings.expiresIn = 3600;
    const ref = { workspaceId: c.workspaceId, connectionId: c.id, pieceId: "oauth2" };
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => t.deps.connections.resolveConnectionAuth(ref)),
      ...Array.from({ length: 5 }, () => second.deps.connections.resolveConnectionAuth(ref)),
    ]);
    expect(provider.counts.refresh).toBe(before + 1);
    expect(new Set(results.map((r) => (r as any).accessToken)).size).toBe(1);
    db2.close();
  });

  test("a refresh under way on another instance (its lease on the row) is waited for and its token used, with no call of our own", async () => {
    // An app on a clock of its own (docs/architecture.md, "Time"): the wait for the lease ends when the test moves it.
    const clock = new FakeClock(Date.now());
    const app = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" }, { clock });
    provider.settings.expiresIn = 60;
    const c = await createGeneric(app, provider);
    expect((await authorize(app, c.id)).callback.status).toBe(200);
    const ctx = app.deps.connections.ctx;
    // Another instance took the lease and is calling the provider.
    expect(await ctx.storage.connections.takeLease(c.id, "another-instance", Date.now() + 30_000, Date.now())).toBe(true);
    provider.settings.expiresIn = 3600;
    const before = provider.counts.refresh;
    const armed = clock.pending;
    const pending = app.deps.connections.resolveConnectionAuth({ workspaceId: c.workspaceId, connectionId: c.id, pieceId: "oauth2" });
    // It found the lease taken and sleeps on the clock until its next look, having called nobody.
    while (clock.pending === armed) await Bun.sleep(1);
    expect(provider.counts.refresh).toBe(before);
    // It stores the new token and lets go: the waiter re-reads the row, finds the token fresh and uses it.
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    await ctx.storage.connections.setTokens(c.id, encryptJson(ctx, { accessToken: "at_from_elsewhere", tokenType: "Bearer" })!, expiresAt, nowIso());
    await ctx.storage.connections.releaseLease(c.id, "another-instance");
    clock.advance(1_000);
    const auth = await pending;
    expect(auth.kind === "oauth2" && auth.accessToken).toBe("at_from_elsewhere");
    expect(provider.counts.refresh).toBe(before);
  });
});

describe("client_credentials (generic piece)", () => {
  test("created active with a token at once; refreshed by a new grant; no browser step", async () => {
    provider.settings.expiresIn = 60;
    const before = provider.counts.clientCredentials;
    const c = await createGeneric(t, provider, { config: { tokenUrl: provider.tokenUrl, grantType: "client_credentials", scope: "machine" } });
    const made = await connection(c.id);
    expect(made).toMatchObject({ status: "active", grantType: "client_credentials", credentials: { clientSecret: "********", accessToken: "********" } });
    expect(made.tokenExpiresAt).not.toBeNull();
    expect(provider.counts.clientCredentials).toBe(before + 1);
    expect(provider.lastTokenForm()!.get("scope")).toBe("machine");
    provider.settings.expiresIn = 3600;
    const results = await Promise.all(Array.from({ length: 10 }, () => resolve(c)));
    expect(provider.counts.clientCredentials).toBe(before + 2);
    expect(new Set(results.map((r) => (r as any).accessToken)).size).toBe(1);
  });

  test("wrong client credentials: created with status error and the provider's reason", async () => {
    const c = await createGeneric(t, provider, { clientSecret: "wrong-secret", config: { tokenUrl: provider.tokenUrl, grantType: "client_credentials" } });
    const made = await connection(c.id);
    expect(made.status).toBe("error");
    expect(made.statusMessage).toContain("invalid_client");
    const fixed = await t.req("PATCH", `/api/connections/${c.id}`, { body: { clientSecret: provider.clientSecret } });
    expect(fixed.body.data.status).toBe("active");
  });
});
