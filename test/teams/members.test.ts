/**
 * Members and invitations (docs/teams.md): an invitation works once, not after it expired, and only for its own
 * workspace; deactivating a member cuts their open session and their token at the very next call; a role change
 * shrinks their tokens at the next call; a viewer's MCP client reads and is refused publishing; the owner keeps
 * every scope, and ownership moves only by transfer. On SQLite and on PostgreSQL (WEFT_TEST_STORAGE=postgres).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { ROLES } from "../../src/schema/roles";
import { SCOPES } from "../../src/schema/scopes";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer } from "../../src/mcp/server";
import { tokenPrincipal } from "../../src/mcp/stdio";
import { httpClient } from "../mcp/client";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { accept, invite, join, mint, setRole, setUpOwner, type Person } from "./support";

let t: TestApp;
let owner: Person;

beforeAll(async () => {
  t = await testApp();
  owner = await setUpOwner(t);
});

const bearer = (token: string) => ({ token });
const asSession = (person: Person) => ({ token: null, headers: person.session });

describe("the owner", () => {
  test("the first user owns the workspace and keeps every scope", async () => {
    const me = await t.req("GET", "/api/auth/me", asSession(owner));
    expect(me.status).toBe(200);
    expect(me.body.data.role).toBe("owner");
    expect(me.body.data.scopes.sort()).toEqual([...SCOPES].sort());
    const members = await t.req("GET", "/api/members", asSession(owner));
    expect(members.body.data).toEqual([expect.objectContaining({ userId: owner.userId, role: "owner", status: "active" })]);
  });

  test("roles and their scopes are served as the data in src/schema/roles.ts", async () => {
    const roles = await t.req("GET", "/api/roles", asSession(owner));
    expect(roles.status).toBe(200);
    expect(roles.body.data.map((r: any) => [r.name, r.scopes])).toEqual(Object.entries(ROLES).map(([name, role]) => [name, [...role.scopes]]));
  });
});

describe("invitations", () => {
  test("an invitation link works once; a new account sets its password and joins with the role", async () => {
    const created = await t.req("POST", "/api/invitations", { ...asSession(owner), body: { email: "ed@example.com", role: "editor" } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ email: "ed@example.com", role: "editor", emailed: false });
    expect(created.body.data.link).toBe(`${t.config.publicUrl}/#/invite/${created.body.data.token}`);
    const pending = await t.req("GET", "/api/invitations", asSession(owner));
    expect(pending.body.data.map((i: any) => i.email)).toContain("ed@example.com");
    expect(pending.text).not.toContain(created.body.data.token);

    const preview = await t.req("POST", "/api/invitations/preview", { token: null, body: { token: created.body.data.token } });
    expect(preview.body.data).toMatchObject({ email: "ed@example.com", role: "editor", hasAccount: false });
    const ed = await accept(t, created.body.data.token, "ed@example.com");
    const me = await t.req("GET", "/api/auth/me", asSession(ed));
    expect(me.body.data.role).toBe("editor");
    expect(me.body.data.scopes.sort()).toEqual([...ROLES.editor.scopes].sort());

    const again = await t.req("POST", "/api/invitations/accept", { token: null, body: { token: created.body.data.token, password: "another password" } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain("already used");
    expect((await t.req("GET", "/api/invitations", asSession(owner))).body.data.map((i: any) => i.email)).not.toContain("ed@example.com");
    // The new account logs in with the password it set.
    const login = await t.req("POST", "/api/auth/login", { token: null, body: { email: "ed@example.com", password: "member password" } });
    expect(login.status).toBe(200);
  });

  test("an expired invitation is refused, naming when it expired", async () => {
    const raw = await invite(t, "late@example.com", "viewer");
    await appSql(t).run("UPDATE invitations SET expires_at = ? WHERE email = ?", ["2020-01-01T00:00:00.000Z", "late@example.com"]);
    const res = await t.req("POST", "/api/invitations/accept", { token: null, body: { token: raw, password: "member password" } });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("expired at 2020-01-01");
    expect((await t.req("POST", "/api/auth/login", { token: null, body: { email: "late@example.com", password: "member password" } })).status).toBe(401);
  });

  test("a revoked invitation no longer works; an unknown token answers 404", async () => {
    const created = await t.req("POST", "/api/invitations", { body: { email: "gone@example.com", role: "viewer" } });
    expect((await t.req("DELETE", `/api/invitations/${created.body.data.id}`)).status).toBe(200);
    const res = await t.req("POST", "/api/invitations/accept", { token: null, body: { token: created.body.data.token, password: "member password" } });
    expect(res.status).toBe(404);
    expect((await t.req("POST", "/api/invitations/preview", { token: null, body: { token: "weft_inv_nothing" } })).status).toBe(404);
  });

  test("an invitation belongs to its workspace: another workspace neither sees nor revokes it, and it grants nothing there", async () => {
    const other = await t.otherWorkspace();
    const created = await t.req("POST", "/api/invitations", { body: { email: "wanda@example.com", role: "admin" } });
    expect((await t.req("GET", "/api/invitations", bearer(other.token))).body.data.map((i: any) => i.id)).not.toContain(created.body.data.id);
    expect((await t.req("DELETE", `/api/invitations/${created.body.data.id}`, bearer(other.token))).status).toBe(404);
    const wanda = await accept(t, created.body.data.token, "wanda@example.com");
    const switched = await t.req("POST", "/api/auth/workspace", { ...asSession(wanda), body: { workspaceId: other.workspaceId } });
    expect(switched.status).toBe(403);
    expect(switched.body.error.message).toContain("not an active member");
    const foreign = await t.req("POST", "/api/tokens", { ...asSession(wanda), body: { name: "x", scopes: ["run:read"], workspaceId: other.workspaceId } });
    expect(foreign.status).toBe(403);
    const workspaces = await t.req("GET", "/api/workspaces", asSession(wanda));
    expect(workspaces.body.data.map((w: any) => w.id)).not.toContain(other.workspaceId);
    expect((await t.req("GET", "/api/auth/me", asSession(wanda))).body.data.memberships).toEqual([expect.objectContaining({ role: "admin" })]);
  });

  test("an existing user joins a second workspace with another role by proving their password", async () => {
    const second = await t.req("POST", "/api/workspaces", { ...asSession(owner), body: { name: "second" } });
    expect(second.status).toBe(201);
    // The owner's session moves there (the creator is its owner), and invites an existing member as viewer.
    expect((await t.req("POST", "/api/auth/workspace", { ...asSession(owner), body: { workspaceId: second.body.data.id } })).status).toBe(200);
    const raw = await invite(t, "ed@example.com", "viewer", owner);
    const wrong = await t.req("POST", "/api/invitations/accept", { token: null, body: { token: raw, password: "not the password" } });
    expect(wrong.status).toBe(401);
    const ed = await accept(t, raw, "ed@example.com");
    expect((await t.req("GET", "/api/auth/me", asSession(ed))).body.data).toMatchObject({ role: "viewer", workspace: { id: second.body.data.id } });
    const memberships = (await t.req("GET", "/api/auth/me", asSession(ed))).body.data.memberships;
    expect(memberships.map((m: any) => m.role).sort()).toEqual(["editor", "viewer"]);
    const first = { id: memberships.find((m: any) => m.role === "editor").workspaceId };
    expect((await t.req("POST", "/api/auth/workspace", { ...asSession(ed), body: { workspaceId: first.id } })).status).toBe(200);
    expect((await t.req("GET", "/api/auth/me", asSession(ed))).body.data.role).toBe("editor");
    expect((await t.req("POST", "/api/auth/workspace", { ...asSession(owner), body: { workspaceId: first.id } })).status).toBe(200);
  });
});

describe("deactivation, role changes and removal", () => {
  test("deactivating a member cuts their open session and their API token at once; re-activating restores both", async () => {
    const dee = await join(t, "dee@example.com", "admin");
    const token = (await mint(t, dee, ["workflow:read", "run:read"])).body.data.token;
    expect((await t.req("GET", "/api/workflows", bearer(token))).status).toBe(200);
    expect((await t.req("GET", "/api/workflows", asSession(dee))).status).toBe(200);

    const off = await t.req("POST", `/api/members/${dee.userId}/deactivate`, asSession(owner));
    expect(off.status).toBe(200);
    expect(off.body.data.status).toBe("deactivated");
    expect((await t.req("GET", "/api/workflows", bearer(token))).status).toBe(401);
    expect((await t.req("GET", "/api/workflows", asSession(dee))).status).toBe(401);
    expect((await t.req("POST", "/api/auth/login", { token: null, body: { email: "dee@example.com", password: "member password" } })).status).toBe(401);

    expect((await t.req("POST", `/api/members/${dee.userId}/activate`, asSession(owner))).status).toBe(200);
    expect((await t.req("GET", "/api/workflows", bearer(token))).status).toBe(200);
    expect((await t.req("GET", "/api/workflows", asSession(dee))).status).toBe(200);
  });

  test("a role that shrinks shrinks the member's tokens at the next call; the refusal names scope, role and the roles that allow it", async () => {
    const pat = await join(t, "pat@example.com", "admin");
    const token = (await mint(t, pat, ["workflow:read", "workflow:publish"])).body.data.token;
    const id = (await t.req("POST", "/api/workflows", { body: { name: "shrink" } })).body.data.id;
    expect((await t.req("POST", `/api/workflows/${id}/unpublish`, bearer(token))).status).toBe(200);
    await setRole(t, pat.userId, "editor");
    const refused = await t.req("POST", `/api/workflows/${id}/unpublish`, bearer(token));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    expect(refused.body.error.message).toContain('requires the scope "workflow:publish"; your role editor in workspace');
    expect(refused.body.error.message).toContain("roles that do: owner, admin");
    expect(refused.body.error.details).toMatchObject({ scope: "workflow:publish", role: "editor", rolesAllowing: ["owner", "admin"] });
    expect((await t.req("GET", `/api/workflows/${id}`, bearer(token))).status).toBe(200);
  });

  test("a token a member mints holds only scopes their role has in the token's workspace", async () => {
    const second = (await t.req("POST", "/api/workspaces", { body: { name: "where amy views" } })).body.data.id;
    const amy = await join(t, "amy@example.com", "admin");
    // Invited into the second workspace as viewer (the root token acts there through a token of its own).
    const rootThere = await t.token("all", second);
    const raw = (await t.req("POST", "/api/invitations", { token: rootThere, body: { email: "amy@example.com", role: "viewer" } })).body.data.token;
    await accept(t, raw, "amy@example.com");
    const refused = await t.req("POST", "/api/tokens", {
      ...asSession(amy),
      body: { name: "x", scopes: ["workflow:read", "workflow:write"], workspaceId: second },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("your role viewer");
    expect(refused.body.error.message).toContain("workflow:write");
    const fine = await t.req("POST", "/api/tokens", { ...asSession(amy), body: { name: "x", scopes: ["workflow:read"], workspaceId: second } });
    expect(fine.status).toBe(201);
    expect((await t.req("GET", "/api/workflows", bearer(fine.body.data.token))).status).toBe(200);
  });

  test("removing a member cuts their access; the owner cannot be deactivated or removed, only replaced by a transfer", async () => {
    const rex = await join(t, "rex@example.com", "admin");
    const token = (await mint(t, rex, ["workflow:read"])).body.data.token;
    const ownerOff = await t.req("POST", `/api/members/${owner.userId}/deactivate`, asSession(rex));
    expect(ownerOff.status).toBe(403);
    expect(ownerOff.body.error.message).toContain("transfers ownership");
    expect((await t.req("DELETE", `/api/members/${owner.userId}`, asSession(rex))).status).toBe(403);
    expect((await t.req("POST", `/api/members/${rex.userId}/ownership`, asSession(rex))).status).toBe(403);
    expect((await t.req("PUT", `/api/members/${rex.userId}/role`, { ...asSession(owner), body: { role: "owner" } })).status).toBe(400);

    expect((await t.req("DELETE", `/api/members/${rex.userId}`, asSession(owner))).status).toBe(200);
    expect((await t.req("GET", "/api/workflows", bearer(token))).status).toBe(401);
    expect((await t.req("GET", "/api/workflows", asSession(rex))).status).toBe(401);
  });

  test("ownership transfer: the new owner has it, the old one becomes admin", async () => {
    const ivy = await join(t, "ivy@example.com", "viewer");
    const moved = await t.req("POST", `/api/members/${ivy.userId}/ownership`, asSession(owner));
    expect(moved.status).toBe(200);
    expect(moved.body.data.role).toBe("owner");
    const members = (await t.req("GET", "/api/members", asSession(ivy))).body.data;
    expect(members.find((m: any) => m.userId === owner.userId).role).toBe("admin");
    expect(members.filter((m: any) => m.role === "owner").map((m: any) => m.userId)).toEqual([ivy.userId]);
    expect((await t.req("POST", `/api/members/${owner.userId}/ownership`, asSession(ivy))).status).toBe(200);
  });
});

describe("MCP acts with the same rules", () => {
  test("a viewer's MCP client lists workflows and is refused publish_workflow, naming scope and role", async () => {
    const vic = await join(t, "vic@example.com", "admin");
    const token = (await mint(t, vic, "all")).body.data.token;
    await setRole(t, vic.userId, "viewer");
    const id = (await t.req("POST", "/api/workflows", { body: { name: "for the viewer" } })).body.data.id;
    const mcp = await httpClient("http://localhost/mcp", token, (r) => t.app.handle(r));
    try {
      const listed = await mcp.call("list_workflows", {});
      expect(listed.isError).toBe(false);
      expect(listed.body.data.map((w: any) => w.id)).toContain(id);
      const refused = await mcp.call("publish_workflow", { id });
      expect(refused.isError).toBe(true);
      expect(refused.body.error.code).toBe("FORBIDDEN");
      expect(refused.body.error.message).toContain('"workflow:publish"; your role viewer');
      expect(refused.body.error.details).toMatchObject({ scope: "workflow:publish", role: "viewer" });
    } finally {
      await mcp.close();
    }
  });

  test("a long-lived session (weft mcp) follows the member's role and deactivation at its next request", async () => {
    const lee = await join(t, "lee@example.com", "admin");
    const token = (await mint(t, lee, "all")).body.data.token;
    const server = createMcpServer(t.deps, tokenPrincipal(t.deps, token), { version: "test" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "long-lived", version: "1.0.0" });
    await client.connect(clientSide);
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as any;
    try {
      const created = await call("create_workflow", { name: "by lee" });
      expect(created.isError).not.toBe(true);
      await setRole(t, lee.userId, "viewer");
      const refused = await call("create_workflow", { name: "by lee again" });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent.error.details).toMatchObject({ scope: "workflow:write", role: "viewer" });
      expect((await call("list_workflows", {})).isError).not.toBe(true);
      expect((await t.req("POST", `/api/members/${lee.userId}/deactivate`)).status).toBe(200);
      const cut = await call("list_workflows", {});
      expect(cut.isError).toBe(true);
      expect(cut.structuredContent.error.code).toBe("UNAUTHORIZED");
    } finally {
      await client.close();
    }
  });
});
