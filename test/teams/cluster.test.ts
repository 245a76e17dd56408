/**
 * Members in a cluster (docs/teams.md, "In a cluster"): two real `weft serve` instances on one PostgreSQL database.
 * B has authenticated a member's token (and keeps its principal in memory); a role change and a deactivation made
 * through A hold on B too, within the cluster's re-check period; a session ended through A is refused by B at
 * once. Skipped without PostgreSQL's binaries.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

const servers: ServerHandle[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
});

async function call(
  server: ServerHandle,
  method: string,
  path: string,
  body?: unknown,
  init: { token?: string | null; headers?: Record<string, string> } = {},
) {
  const res = await server.fetch(path, {
    method,
    token: init.token,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Asks `check` until it is true; false if it never was within the bound (a bound, not a measured time). */
async function eventually(check: () => Promise<boolean>, boundMs = 15_000): Promise<boolean> {
  const until = Date.now() + boundMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await Bun.sleep(50);
  }
  return false;
}

describe.skipIf(!postgresBinaries())("members across two instances", () => {
  let a: ServerHandle;
  let b: ServerHandle;

  beforeAll(async () => {
    const { url } = await freshPostgresDatabase();
    const env = { WEFT_DATABASE_URL: url, WEFT_HEARTBEAT_SECONDS: "1", WEFT_LEASE_SECONDS: "3", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0" };
    a = await startServer({ env });
    servers.push(a);
    const dir = mkdtempSync(join(tmpdir(), "weft-teams-cluster-"));
    copyFileSync(join(a.dataDir, "encryption.key"), join(dir, "encryption.key"));
    b = await startServer({ env, dataDir: dir });
    servers.push(b);
  }, 60_000);

  test("a role lowered and a member deactivated through A hold for the member's token on B", async () => {
    const invitation = await call(a, "POST", "/api/invitations", { email: "kim@example.com", role: "admin" });
    expect(invitation.status).toBe(201);
    const joined = await call(a, "POST", "/api/invitations/accept", { token: invitation.body.data.token, password: "kim's password" }, { token: null });
    expect(joined.status).toBe(201);
    const session = { cookie: joined.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": joined.body.data.csrfToken };
    const minted = await call(a, "POST", "/api/tokens", { name: "kim", scopes: ["workflow:read", "workflow:write"] }, { token: null, headers: session });
    expect(minted.status).toBe(201);
    const token = minted.body.data.token;
    const createOnB = async () => (await call(b, "POST", "/api/workflows", { name: "by kim" }, { token })).status;
    expect(await createOnB()).toBe(201);

    expect((await call(a, "PUT", `/api/members/${joined.body.data.user.id}/role`, { role: "viewer" })).status).toBe(200);
    expect(await eventually(async () => (await createOnB()) === 403)).toBe(true);
    const refused = await call(b, "POST", "/api/workflows", { name: "by kim" }, { token });
    expect(refused.body.error.details).toMatchObject({ scope: "workflow:write", role: "viewer" });
    expect((await call(b, "GET", "/api/workflows", undefined, { token })).status).toBe(200);

    expect((await call(a, "POST", `/api/members/${joined.body.data.user.id}/deactivate`)).status).toBe(200);
    expect(await eventually(async () => (await call(b, "GET", "/api/workflows", undefined, { token })).status === 401)).toBe(true);
  }, 60_000);

  test('a session ended through A is refused by B at its very next call (sessions are not cached: docs/teams.md, "Sessions")', async () => {
    const invitation = await call(a, "POST", "/api/invitations", { email: "lee@example.com", role: "editor" });
    const joined = await call(a, "POST", "/api/invitations/accept", { token: invitation.body.data.token, password: "lee's password" }, { token: null });
    expect(joined.status).toBe(201);
    const onA = { cookie: joined.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": joined.body.data.csrfToken };
    const login = await call(
      b,
      "POST",
      "/api/auth/login",
      { email: "lee@example.com", password: "lee's password" },
      { token: null, headers: { "user-agent": "on-b/1" } },
    );
    expect(login.status).toBe(200);
    const onB = { cookie: login.headers.get("set-cookie")!.split(";")[0]! };
    expect((await call(b, "GET", "/api/auth/me", undefined, { token: null, headers: onB })).status).toBe(200);

    const listed = await call(a, "GET", "/api/auth/sessions", undefined, { token: null, headers: onA });
    const target = listed.body.data.find((s: any) => s.userAgent === "on-b/1");
    expect(target.address).toBe("127.0.0.1");
    expect((await call(a, "DELETE", `/api/auth/sessions/${target.id}`, undefined, { token: null, headers: onA })).status).toBe(200);
    expect((await call(b, "GET", "/api/auth/me", undefined, { token: null, headers: onB })).status).toBe(401);
  }, 60_000);
});
