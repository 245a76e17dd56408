/**
 * The audit log (docs/teams.md, "Audit log"): every action of each group is recorded once with who did it,
 * in which workspace, on what, from which address and client — logins and failures, members, roles and
 * invitations, API tokens, workflows, connections (never their secrets), settings, piece packages — read back
 * filtered and paged through GET /api/audit, exported as JSON lines, pruned past WEFT_AUDIT_RETENTION_DAYS.
 * On SQLite and on PostgreSQL (WEFT_TEST_STORAGE=postgres). Packages come from a throwaway npm registry on
 * loopback (test/support/npm-registry.ts), as in test/pieces/activepieces.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { startNpmRegistry, type NpmRegistry } from "../support/npm-registry";
import { FIXTURE, FIXTURE_ID, fixturePackage } from "../support/activepieces-fixture";
import { registerTestPieces } from "../connections/support/flow";
import { definition, webhookTrigger } from "../triggers/harness";
import { httpClient } from "../mcp/client";
import { invite, join, mint, setUpOwner, type Person } from "./support";

let t: TestApp;
let owner: Person;
let registry: NpmRegistry;
/** The owner's browser session (with a client name). */
const asOwner = { token: null, headers: {} as Record<string, string> };

beforeAll(async () => {
  registry = await startNpmRegistry();
  await registry.publish(await fixturePackage("1.0.0"));
  t = await testApp({ WEFT_NPM_REGISTRY: registry.url });
  registerTestPieces(t);
  owner = await setUpOwner(t);
  Object.assign(asOwner.headers, owner.session, { "user-agent": "audit-test/1.0" });
});

afterAll(() => registry?.stop());

/** The workspace's events of `action`, newest first, through the API. */
async function events(query: string) {
  const res = await t.req("GET", `/api/audit?limit=100&${query}`);
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

describe("logins", () => {
  test("a login and a failed one are recorded with the e-mail, the client, and no password", async () => {
    const ok = await t.req("POST", "/api/auth/login", {
      token: null,
      headers: { "user-agent": "browser/1" },
      body: { email: owner.email, password: "owner password" },
    });
    expect(ok.status).toBe(200);
    const bad = await t.req("POST", "/api/auth/login", { token: null, body: { email: owner.email, password: "not it at all" } });
    expect(bad.status).toBe(401);
    const unknown = await t.req("POST", "/api/auth/login", { token: null, body: { email: "nobody@example.com", password: "guess guess" } });
    expect(unknown.status).toBe(401);

    const [succeeded] = await events("action=login.succeeded");
    expect(succeeded).toMatchObject({
      actor: { type: "user", id: owner.userId, name: owner.email },
      target: { type: "user", id: owner.userId, name: owner.email },
      userAgent: "browser/1",
    });
    const failed = await events("action=login.failed");
    expect(failed.map((e) => e.actor)).toEqual([
      { type: "anonymous", id: null, name: "nobody@example.com" },
      { type: "anonymous", id: null, name: owner.email },
    ]);
    expect(failed[1].target).toEqual({ type: "user", id: owner.userId, name: owner.email });
    const all = await t.req("GET", "/api/audit/export?action=login.failed");
    expect(all.text).not.toContain("not it at all");
    expect(all.text).not.toContain("guess guess");
  });

  test("the address is the caller's socket address; X-Forwarded-For is not believed", async () => {
    const server = t.app.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const res = await fetch(`http://127.0.0.1:${server.server!.port}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9" },
        body: JSON.stringify({ email: owner.email, password: "wrong password here" }),
      });
      expect(res.status).toBe(401);
    } finally {
      await t.app.stop(true);
    }
    const [failed] = await events("action=login.failed");
    expect(failed.ip).toBe("127.0.0.1");
  });
});

describe("members, roles and invitations", () => {
  let ed: Person;

  test("an invitation made, accepted and revoked, a role changed, a member deactivated, activated and removed", async () => {
    ed = await join(t, "ed@example.com", "editor");
    const raw = await invite(t, "vi@example.com", "viewer");
    const pending = await t.req("GET", "/api/invitations", asOwner);
    const vi = pending.body.data.find((i: any) => i.email === "vi@example.com");
    expect((await t.req("DELETE", `/api/invitations/${vi.id}`, asOwner)).status).toBe(200);
    expect((await t.req("PUT", `/api/members/${ed.userId}/role`, { ...asOwner, body: { role: "operator" } })).status).toBe(200);
    expect((await t.req("POST", `/api/members/${ed.userId}/deactivate`, asOwner)).status).toBe(200);
    expect((await t.req("POST", `/api/members/${ed.userId}/activate`, asOwner)).status).toBe(200);
    expect((await t.req("DELETE", `/api/members/${ed.userId}`, asOwner)).status).toBe(200);

    const trail = (await events("targetType=member")).concat(await events("targetType=invitation")).map((e) => [e.action, e.target.name]);
    for (const expected of [
      ["invitation.created", "ed@example.com"],
      ["invitation.accepted", "ed@example.com"],
      ["invitation.created", "vi@example.com"],
      ["invitation.revoked", "vi@example.com"],
      ["member.role_changed", "ed@example.com"],
      ["member.deactivated", "ed@example.com"],
      ["member.activated", "ed@example.com"],
      ["member.removed", "ed@example.com"],
    ])
      expect(trail).toContainEqual(expected);
    const [roleChange] = await events("action=member.role_changed");
    expect(roleChange).toMatchObject({
      actor: { type: "user", id: owner.userId, name: owner.email },
      details: { role: "operator" },
      userAgent: "audit-test/1.0",
    });
    const [accepted] = await events("action=invitation.accepted");
    expect(accepted.actor).toEqual({ type: "user", id: ed.userId, name: "ed@example.com" });
    // The invitation's raw token is a secret: nowhere in the log.
    expect((await t.req("GET", "/api/audit/export")).text).not.toContain(raw);
  });
});

describe("API tokens", () => {
  test("a token minted and revoked is recorded with its name and scopes, never its value; a token's own calls name it", async () => {
    const minted = await t.req("POST", "/api/tokens", { ...asOwner, body: { name: "ci bot", scopes: ["workflow:read", "workspace:admin"] } });
    expect(minted.status).toBe(201);
    const id = minted.body.data.id;
    const read = await t.req("GET", "/api/audit?action=token.created", { token: minted.body.data.token });
    expect(read.status).toBe(200);
    expect(read.body.data[0]).toMatchObject({ target: { type: "token", id, name: "ci bot" }, details: { scopes: ["workflow:read", "workspace:admin"] } });
    expect((await t.req("DELETE", `/api/tokens/${id}`, { token: minted.body.data.token })).status).toBe(200);
    const [revoked] = await events("action=token.revoked");
    expect(revoked).toMatchObject({ actor: { type: "token", id, name: "ci bot" }, target: { type: "token", id, name: "ci bot" } });
    expect((await t.req("GET", "/api/audit/export?targetType=token")).text).not.toContain(minted.body.data.token);
  });
});

describe("workflows", () => {
  test("created, published, unpublished, restored and deleted", async () => {
    const created = await t.req("POST", "/api/workflows", { ...asOwner, body: { name: "audited", definition: definition(webhookTrigger()) } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const published = await t.req("POST", `/api/workflows/${id}/publish`, asOwner);
    expect(published.status).toBe(200);
    expect((await t.req("POST", `/api/workflows/${id}/unpublish`, asOwner)).status).toBe(200);
    const versionId = published.body.data.latestVersionId;
    expect((await t.req("POST", `/api/workflows/${id}/versions/${versionId}/restore`, { ...asOwner, body: {} })).status).toBe(200);
    expect((await t.req("DELETE", `/api/workflows/${id}`, asOwner)).status).toBe(200);

    const trail = (await events("targetType=workflow")).filter((e) => e.target.id === id);
    expect(trail.map((e) => e.action)).toEqual(["workflow.deleted", "workflow.restored", "workflow.unpublished", "workflow.published", "workflow.created"]);
    for (const event of trail) expect(event).toMatchObject({ actor: { type: "user", id: owner.userId }, target: { name: "audited" } });
    expect(trail[3].details).toEqual({ version: 1 });
    expect(trail[1].details).toEqual({ versionId });
  });
  test("done by an agent over MCP, the same actions are recorded with its token as the actor", async () => {
    const minted = await mint(t, owner, "all");
    const mcp = await httpClient("http://localhost/mcp", minted.body.data.token, (r) => t.app.handle(r));
    try {
      const created = await mcp.call("create_workflow", { name: "by agent", definition: definition(webhookTrigger()) });
      expect(created.isError).toBe(false);
      const id = created.body.data.id;
      expect((await mcp.call("publish_workflow", { id })).isError).toBe(false);
      expect((await mcp.call("unpublish_workflow", { id })).isError).toBe(false);
      expect((await mcp.call("delete_workflow", { id })).isError).toBe(false);
      const trail = (await events("targetType=workflow")).filter((e) => e.target.id === id);
      expect(trail.map((e) => e.action)).toEqual(["workflow.deleted", "workflow.unpublished", "workflow.published", "workflow.created"]);
      for (const event of trail) {
        expect(event).toMatchObject({ actor: { type: "token", id: minted.body.data.id, name: minted.body.data.name }, userAgent: "mcp" });
        expect(event.target.name).toBe("by agent");
      }
    } finally {
      await mcp.close();
    }
  });
});

describe("connections", () => {
  test("created, changed and deleted, with no secret anywhere in the stored events", async () => {
    const made = await t.req("POST", "/api/connections", { ...asOwner, body: { pieceId: "test-apikey", name: "billing key", apiKey: "sk-live-first-secret" } });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    const patched = await t.req("PATCH", `/api/connections/${id}`, { ...asOwner, body: { apiKey: "sk-live-second-secret", name: "billing" } });
    expect(patched.status).toBe(200);
    expect((await t.req("DELETE", `/api/connections/${id}`, asOwner)).status).toBe(200);

    const trail = (await events("targetType=connection")).filter((e) => e.target.id === id);
    expect(trail.map((e) => [e.action, e.target.name])).toEqual([
      ["connection.deleted", "billing"],
      ["connection.updated", "billing"],
      ["connection.created", "billing key"],
    ]);
    expect(trail[1].details).toEqual({ pieceId: "test-apikey", changed: ["apiKey", "name"] });
    expect(trail[2].details).toEqual({ pieceId: "test-apikey", authKind: "api_key" });
    const rows = await t.deps.storage.audit.list({ workspaceId: trail[0].workspaceId, targetType: "connection" }, 100, 0);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain("sk-live-first-secret");
    expect(stored).not.toContain("sk-live-second-secret");
  });
});

describe("settings and pieces", () => {
  test("the network ranges changed are recorded with what was added and removed", async () => {
    expect((await t.req("PUT", "/api/settings/network", { ...asOwner, body: { allowedCidrs: ["10.1.0.0/16"] } })).status).toBe(200);
    expect((await t.req("PUT", "/api/settings/network", { ...asOwner, body: { allowedCidrs: ["10.2.0.0/16"] } })).status).toBe(200);
    const changes = await events("action=settings.changed");
    expect(changes.map((e) => e.details)).toEqual([
      { added: ["10.2.0.0/16"], removed: ["10.1.0.0/16"] },
      { added: ["10.1.0.0/16"], removed: [] },
    ]);
    expect(changes[0].target).toEqual({ type: "settings", id: "network", name: "Network" });
  });

  test("a piece package installed from the registry is recorded with its version", async () => {
    const res = await t.req("POST", "/api/pieces/packages", { ...asOwner, body: { package: FIXTURE } });
    expect(res.status).toBe(201);
    const [installed] = await events("action=piece.installed");
    expect(installed).toMatchObject({
      actor: { type: "user", id: owner.userId },
      target: { type: "piece", id: FIXTURE_ID, name: FIXTURE },
      details: { version: "1.0.0", source: "registry" },
    });
  });
});

describe("reading the log", () => {
  test("filters by actor, action and time, pages with the list envelope, and is for admins only", async () => {
    const byActor = await events(`actor=${encodeURIComponent(owner.email)}`);
    expect(byActor.length).toBeGreaterThan(5);
    for (const e of byActor) expect(e.actor.name).toBe(owner.email);
    const times = byActor.map((e) => e.time);
    expect([...times].sort().reverse()).toEqual(times);

    const total = (await t.req("GET", "/api/audit")).body.pagination.total;
    const page2 = await t.req("GET", "/api/audit?page=2&limit=3");
    expect(page2.body.pagination).toEqual({ page: 2, limit: 3, total, totalPages: Math.ceil(total / 3) });
    const first6 = (await t.req("GET", "/api/audit?limit=6")).body.data;
    expect(page2.body.data.map((e: any) => e.id)).toEqual(first6.slice(3).map((e: any) => e.id));

    const future = await t.req("GET", "/api/audit?from=2999-01-01");
    expect(future.body).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } });
    const past = await t.req("GET", "/api/audit?to=2000-01-01T00:00:00Z&limit=5");
    expect(past.body.pagination.total).toBe(0);
    // Unparseable filters are ignored, as on the other list endpoints.
    expect((await t.req("GET", "/api/audit?from=yesterday&page=zero")).body.pagination).toMatchObject({ page: 1, total });

    const reader = await t.token(["workflow:read"]);
    expect((await t.req("GET", "/api/audit", { token: reader })).status).toBe(403);
    expect((await t.req("GET", "/api/audit/export", { token: reader })).status).toBe(403);
  });

  test("another workspace sees only its own events", async () => {
    const other = await t.otherWorkspace();
    const mine = await t.req("GET", "/api/audit", { token: other.token });
    expect(mine.status).toBe(200);
    for (const e of mine.body.data) expect(e.workspaceId).toBe(other.workspaceId);
    expect(mine.body.data.some((e: any) => e.action === "login.succeeded")).toBe(false);
  });

  test("the export is JSON lines of the same events and filters", async () => {
    const res = await t.req("GET", "/api/audit/export?targetType=workflow");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = res.text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    const listed = await events("targetType=workflow");
    expect(lines).toEqual(listed);
  });
});

describe("retention", () => {
  test("events older than WEFT_AUDIT_RETENTION_DAYS are pruned, newer ones kept", async () => {
    const app = await testApp({ WEFT_AUDIT_RETENTION_DAYS: "30" });
    const old = { actor: { type: "token" as const, id: null, name: "old" }, workspaceId: "w1", ip: null, userAgent: null };
    const stamp = (time: string) =>
      app.deps.storage.audit.insert({
        id: crypto.randomUUID(),
        created_at: time,
        workspace_id: old.workspaceId,
        actor_type: "token",
        actor_id: null,
        actor_name: "old",
        action: "workflow.created",
        target_type: null,
        target_id: null,
        target_name: null,
        details: "{}",
        ip: null,
        user_agent: null,
      });
    await stamp("2026-01-01T00:00:00.000Z");
    await stamp("2026-11-20T00:00:00.000Z");
    await app.deps.audit.record(old, "workflow.created", null);
    expect(await app.deps.audit.prune("2026-11-29T00:00:00.000Z")).toBe(1);
    const left = await app.deps.storage.audit.list({ workspaceId: "w1" }, 10, 0);
    expect(left.map((r) => r.created_at)).not.toContain("2026-01-01T00:00:00.000Z");
    expect(left).toHaveLength(2);
  });
});
