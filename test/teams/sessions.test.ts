/**
 * Sessions and login protection (docs/teams.md, "Sessions" and "Login protection"): a member lists their sessions,
 * revokes one or all others (the revoked cookie gets 401 at once), changes their password (the other sessions
 * end); WEFT_TRUSTED_PROXIES decides whether X-Forwarded-For and X-Forwarded-Proto are believed (the address in
 * the sessions list and the audit log, the `Secure` cookie); failed logins are limited per account across
 * addresses, and an unknown e-mail is answered exactly as a known one. On SQLite and on PostgreSQL
 * (WEFT_TEST_STORAGE=postgres). The proxied calls go over a real socket on loopback (the app listening).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { invite, join, setUpOwner, type Person } from "./support";

const PASSWORD = "owner password";

/** Logs the owner in again (a second browser) and answers that session's headers. */
async function logIn(t: TestApp, email: string, password = PASSWORD, userAgent = "second-browser/2") {
  const res = await t.req("POST", "/api/auth/login", { token: null, headers: { "user-agent": userAgent }, body: { email, password } });
  expect(res.status).toBe(200);
  return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": res.body.data.csrfToken as string };
}

const as = (session: Record<string, string>) => ({ token: null, headers: session });

/** Listens on loopback for the duration of `work`, which gets the base URL. */
async function overSocket<T>(t: TestApp, work: (base: string) => Promise<T>): Promise<T> {
  const listening = t.app.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    return await work(`http://127.0.0.1:${listening.server!.port}`);
  } finally {
    await t.app.stop(true);
  }
}

async function postLogin(base: string, body: { email: string; password: string }, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe("a member's sessions", () => {
  let t: TestApp;
  let owner: Person;

  beforeAll(async () => {
    t = await testApp();
    owner = await setUpOwner(t);
  });

  test("listed with this one marked; revoking another cuts it at once; revoke-others keeps only this one", async () => {
    const second = await logIn(t, owner.email);
    const third = await logIn(t, owner.email, PASSWORD, "third-browser/3");
    const listed = await t.req("GET", "/api/auth/sessions", as(owner.session));
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(3);
    const mine = listed.body.data.filter((s: any) => s.current);
    expect(mine).toHaveLength(1);
    const other = listed.body.data.find((s: any) => s.userAgent === "second-browser/2");
    expect(other).toMatchObject({ current: false, workspaceId: expect.any(String), createdAt: expect.any(String), expiresAt: expect.any(String) });
    // The list names sessions by an id, never by the cookie or its hash.
    expect(listed.text).not.toContain(second.cookie.split("=")[1]!);

    expect((await t.req("GET", "/api/auth/me", as(second))).status).toBe(200);
    const revoked = await t.req("DELETE", `/api/auth/sessions/${other.id}`, as(owner.session));
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.id).toBe(other.id);
    const refused = await t.req("GET", "/api/auth/me", as(second));
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("UNAUTHORIZED");
    const again = await t.req("DELETE", `/api/auth/sessions/${other.id}`, as(owner.session));
    expect(again.status).toBe(404);
    expect(again.body.error.message).toContain("GET /api/auth/sessions");

    const others = await t.req("POST", "/api/auth/sessions/revoke-others", as(owner.session));
    expect(others.status).toBe(200);
    expect(others.body.data.revoked).toBe(1);
    expect((await t.req("GET", "/api/auth/me", as(third))).status).toBe(401);
    expect((await t.req("GET", "/api/auth/me", as(owner.session))).status).toBe(200);
    const left = await t.req("GET", "/api/auth/sessions", as(owner.session));
    expect(left.body.data.map((s: any) => s.current)).toEqual([true]);

    const audited = await t.req("GET", "/api/audit?limit=50");
    const actions = audited.body.data.map((e: any) => e.action);
    expect(actions).toContain("session.revoked");
    expect(actions).toContain("session.revoked_others");
  });

  test("one member cannot see or revoke another's sessions, and an API token cannot manage sessions", async () => {
    const fresh = await testApp();
    const first = await setUpOwner(fresh);
    const invited = await fresh.req("POST", "/api/invitations", { body: { email: "vera@example.com", role: "editor" } });
    const joined = await fresh.req("POST", "/api/invitations/accept", { token: null, body: { token: invited.body.data.token, password: "vera password" } });
    const vera = { cookie: joined.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": joined.body.data.csrfToken };
    const ownerSessions = (await fresh.req("GET", "/api/auth/sessions", as(first.session))).body.data;
    expect((await fresh.req("GET", "/api/auth/sessions", as(vera))).body.total).toBe(1);
    const foreign = await fresh.req("DELETE", `/api/auth/sessions/${ownerSessions[0].id}`, as(vera));
    expect(foreign.status).toBe(404);
    expect((await fresh.req("GET", "/api/auth/me", as(first.session))).status).toBe(200);

    const byToken = await fresh.req("GET", "/api/auth/sessions");
    expect(byToken.status).toBe(403);
    expect(byToken.body.error.message).toContain("only a browser session");
  });

  test("a session's last use is not written on every call", async () => {
    const before = (await t.req("GET", "/api/auth/sessions", as(owner.session))).body.data.find((s: any) => s.current);
    for (let i = 0; i < 3; i++) expect((await t.req("GET", "/api/auth/me", as(owner.session))).status).toBe(200);
    const after = (await t.req("GET", "/api/auth/sessions", as(owner.session))).body.data.find((s: any) => s.current);
    expect(after.lastSeenAt).toBe(before.lastSeenAt);
  });

  test("a cookie write with a wrong CSRF token of the right length is refused", async () => {
    const wrong = owner.session["x-csrf-token"]!.replace(/^./, (c) => (c === "A" ? "B" : "A"));
    const res = await t.req("POST", "/api/auth/sessions/revoke-others", { token: null, headers: { ...owner.session, "x-csrf-token": wrong } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("X-CSRF-Token");
  });
});

describe("changing the password", () => {
  test("needs the current one; the other sessions end, this one stays; the old password no longer logs in", async () => {
    const t = await testApp();
    const owner = await setUpOwner(t);
    const elsewhere = await logIn(t, owner.email);

    const wrong = await t.req("POST", "/api/auth/password", {
      ...as(owner.session),
      body: { currentPassword: "not the password", newPassword: "a new password" },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.message).toContain("current password is wrong");
    expect((await t.req("GET", "/api/auth/me", as(elsewhere))).status).toBe(200);

    const short = await t.req("POST", "/api/auth/password", { ...as(owner.session), body: { currentPassword: PASSWORD, newPassword: "short" } });
    expect(short.status).toBe(400);
    expect(short.body.error.code).toBe("VALIDATION_FAILED");

    const changed = await t.req("POST", "/api/auth/password", { ...as(owner.session), body: { currentPassword: PASSWORD, newPassword: "a new password" } });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({ changed: true, sessionsRevoked: 1 });
    expect((await t.req("GET", "/api/auth/me", as(elsewhere))).status).toBe(401);
    expect((await t.req("GET", "/api/auth/me", as(owner.session))).status).toBe(200);

    const old = await t.req("POST", "/api/auth/login", { token: null, body: { email: owner.email, password: PASSWORD } });
    expect(old.status).toBe(401);
    await logIn(t, owner.email, "a new password");

    const [event] = (await t.req("GET", "/api/audit?action=password.changed")).body.data;
    expect(event).toMatchObject({ actor: { type: "user", id: owner.userId }, target: { type: "user", id: owner.userId }, details: { sessionsRevoked: 1 } });
    expect(JSON.stringify(event)).not.toContain("a new password");
  }, 60_000);
});

describe("trusted proxies", () => {
  test("off (the default): X-Forwarded-For and X-Forwarded-Proto are ignored", async () => {
    const t = await testApp();
    const owner = await setUpOwner(t);
    const login = await overSocket(t, (base) =>
      postLogin(base, { email: owner.email, password: PASSWORD }, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" }),
    );
    expect(login.status).toBe(200);
    expect(login.headers.get("set-cookie")).not.toContain("Secure");
    const session = { cookie: login.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": login.body.data.csrfToken };
    const listed = (await t.req("GET", "/api/auth/sessions", as(session))).body.data.find((s: any) => s.current);
    expect(listed.address).toBe("127.0.0.1");
    const [event] = (await t.req("GET", "/api/audit?action=login.succeeded&limit=1")).body.data;
    expect(event.ip).toBe("127.0.0.1");
  });

  test("on: from a listed proxy the forwarded client and scheme are believed; Secure only when it says https", async () => {
    const t = await testApp({ WEFT_TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8" });
    const owner = await setUpOwner(t);
    const [https, plain] = await overSocket(t, async (base) => [
      // The client wrote 198.51.100.1 itself; the proxy at 10.1.2.3 appended the client it saw, then handed on.
      await postLogin(
        base,
        { email: owner.email, password: PASSWORD },
        { "x-forwarded-for": "198.51.100.1, 203.0.113.9, 10.1.2.3", "x-forwarded-proto": "https", "user-agent": "proxied/1" },
      ),
      await postLogin(base, { email: owner.email, password: PASSWORD }, { "x-forwarded-for": "203.0.113.10" }),
    ]);
    expect(https.status).toBe(200);
    expect(https.headers.get("set-cookie")).toContain("; Secure");
    expect(plain.status).toBe(200);
    expect(plain.headers.get("set-cookie")).not.toContain("Secure");
    const session = { cookie: https.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": https.body.data.csrfToken };
    const listed = (await t.req("GET", "/api/auth/sessions", as(session))).body.data;
    expect(listed.find((s: any) => s.current).address).toBe("203.0.113.9");
    expect(listed.map((s: any) => s.address)).toContain("203.0.113.10");
    const [event] = (await t.req("GET", "/api/audit?action=login.succeeded&limit=2")).body.data.filter((e: any) => e.userAgent === "proxied/1");
    expect(event.ip).toBe("203.0.113.9");
  });

  test("a setting that is not an address or a range stops the start, naming it", async () => {
    await expect(testApp({ WEFT_TRUSTED_PROXIES: "10.0.0.1, proxy.local" })).rejects.toThrow(/WEFT_TRUSTED_PROXIES: "proxy\.local\/32" is not a CIDR range/);
  });
});

describe("login protection", () => {
  test("an unknown e-mail is answered exactly as a known one with a wrong password", async () => {
    const t = await testApp();
    const owner = await setUpOwner(t);
    const known = await t.req("POST", "/api/auth/login", { token: null, body: { email: owner.email, password: "wrong password" } });
    const unknown = await t.req("POST", "/api/auth/login", { token: null, body: { email: "nobody@example.com", password: "wrong password" } });
    expect(known.status).toBe(401);
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    expect(unknown.headers.get("www-authenticate")).toBe(known.headers.get("www-authenticate"));
  });

  test("failed logins of one account are limited across addresses, and the limit answers the same for an unknown e-mail", async () => {
    const t = await testApp({ WEFT_TRUSTED_PROXIES: "127.0.0.1", WEFT_LOGIN_ATTEMPTS: "3" });
    const owner = await setUpOwner(t);
    const answers = await overSocket(t, async (base) => {
      const seen: Array<{ email: string; status: number; body: any; retryAfter: string | null }> = [];
      for (const email of [owner.email, "nobody@example.com"]) {
        // Three tries, each from another address, use up the account's tries; the fourth is refused, even with the right password.
        for (let i = 1; i <= 4; i++) {
          const password = i === 4 ? PASSWORD : `guess number ${i}`;
          const res = await postLogin(base, { email, password }, { "x-forwarded-for": `198.51.100.${i}` });
          seen.push({ email, status: res.status, body: res.body, retryAfter: res.headers.get("retry-after") });
        }
      }
      return seen;
    });
    const ownerAnswers = answers.filter((a) => a.email === owner.email);
    const unknownAnswers = answers.filter((a) => a.email !== owner.email);
    expect(ownerAnswers.map((a) => a.status)).toEqual([401, 401, 401, 429]);
    expect(unknownAnswers.map((a) => a.status)).toEqual([401, 401, 401, 429]);
    expect(ownerAnswers[3]!.body.error.code).toBe("RATE_LIMITED");
    expect(ownerAnswers[3]!.body.error.message).toContain("for this account");
    expect(Number(ownerAnswers[3]!.retryAfter)).toBeGreaterThan(0);
    const withoutSeconds = (message: string) => message.replace(/\d+ s\b/, "N s");
    expect(withoutSeconds(unknownAnswers[3]!.body.error.message)).toBe(withoutSeconds(ownerAnswers[3]!.body.error.message));
    // Another account from the same addresses is not held back.
    const other = await t.req("POST", "/api/auth/login", { token: null, body: { email: "someone@example.com", password: "wrong password" } });
    expect(other.status).toBe(401);
  }, 60_000);

  test("accepting an invitation with an existing account's password is counted by the same login guard", async () => {
    const t = await testApp({ WEFT_LOGIN_ATTEMPTS: "3" });
    const owner = await setUpOwner(t);
    const ann = await join(t, "ann@example.com", "editor");
    // Ann, who has an account, is invited into a second workspace: accepting takes her password.
    const second = await t.req("POST", "/api/workspaces", { token: null, headers: owner.session, body: { name: "Second" } });
    expect(second.status).toBe(201);
    const switched = await t.req("POST", "/api/auth/workspace", { token: null, headers: owner.session, body: { workspaceId: second.body.data.id } });
    expect(switched.status).toBe(200);
    const token = await invite(t, ann.email, "viewer", owner);
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i++) {
      const res = await t.req("POST", "/api/invitations/accept", { token: null, body: { token, password: `guess number ${i}` } });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // The same account's login is now held back too: one guard for every password check.
    const login = await t.req("POST", "/api/auth/login", { token: null, body: { email: ann.email, password: "member password" } });
    expect(login.status).toBe(429);
    expect(login.body.error.message).toContain("for this account");
  }, 60_000);
});

describe("expired sessions", () => {
  test("expired sessions are deleted by the sweep, a bounded batch at a time, with their single sign-on links; live ones stay", async () => {
    const t = await testApp();
    const owner = await setUpOwner(t);
    const store = t.deps.storage.identity;
    const past = new Date(Date.now() - 86_400_000).toISOString();
    const expired = ["a", "b", "c"].map((n) => `expired-session-${n}`);
    for (const idHash of expired) {
      await store.insertSession({
        id_hash: idHash,
        id: crypto.randomUUID(),
        user_id: owner.userId,
        workspace_id: (await store.user(owner.userId))!.default_workspace_id,
        csrf_token: "x",
        expires_at: past,
        created_at: past,
        last_seen_at: null,
        user_agent: null,
        address: null,
      });
    }
    await store.insertSsoSession({ session_hash: expired[0]!, provider_id: "p", id_token: "t", created_at: past });
    expect(await t.deps.identity.sweepExpired(undefined, 2)).toBe(2);
    expect(await t.deps.identity.sweepExpired(undefined, 2)).toBe(1);
    expect(await t.deps.identity.sweepExpired(undefined, 2)).toBe(0);
    for (const idHash of expired) expect(await store.session(idHash)).toBeNull();
    expect(await store.takeSsoSession(expired[0]!)).toBeNull();
    // The owner's live session is untouched.
    expect((await t.req("GET", "/api/auth/me", as(owner.session))).status).toBe(200);
  });
});
