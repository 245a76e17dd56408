/**
 * A second factor for password logins (docs/teams.md, "Second factor"): enrolment (pending until the first code),
 * login with a code, a wrong code, a code used twice, a recovery code that works once, removal, new recovery codes,
 * and a workspace owner's requirement that lets a member without a factor only enrol. Codes are computed here with
 * otpauth from the secret the server answered, as an authenticator app would. On SQLite and on PostgreSQL
 * (WEFT_TEST_STORAGE=postgres).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import * as OTPAuth from "otpauth";
import { sha256 } from "../../src/lib/ids";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { join, setUpOwner, type Person } from "./support";

let t: TestApp;
let owner: Person;

// On PostgreSQL the first file of a run starts the server here: give it longer than a test.
beforeAll(async () => {
  t = await testApp();
  owner = await setUpOwner(t);
}, 90_000);

const asSession = (person: Person) => ({ token: null, headers: person.session });
/** The code an authenticator app shows for `secret`, `stepsAhead` periods of thirty seconds from now. */
const codeOf = (secret: string, stepsAhead = 0) =>
  OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp: Date.now() + stepsAhead * 30_000 });
/** Another six digits than `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

function sessionOf(res: { headers: Headers; body: any }): Record<string, string> {
  return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": res.body.data.csrfToken };
}

/** Enrols `person` and answers the secret and the recovery codes; the confirming code is of the current step. */
async function enrol(person: Person) {
  const started = await t.req("POST", "/api/auth/second-factor/enrol", asSession(person));
  expect(started.status).toBe(200);
  const secret: string = started.body.data.secret;
  const confirmed = await t.req("POST", "/api/auth/second-factor/confirm", { ...asSession(person), body: { code: codeOf(secret) } });
  expect(confirmed.status).toBe(200);
  return { secret, recoveryCodes: confirmed.body.data.recoveryCodes as string[] };
}

async function passwordStep(email: string, password: string) {
  return t.req("POST", "/api/auth/login", { token: null, body: { email, password } });
}

async function actions(query: string) {
  return (await t.req("GET", `/api/audit?limit=100&${query}`)).body.data as Array<{ action: string; target: any; details: any }>;
}

describe("enrolment", () => {
  test("pending until the first code: a wrong code confirms nothing, the right one answers ten recovery codes once", async () => {
    const person = await join(t, "enrol@example.com", "editor");
    const started = await t.req("POST", "/api/auth/second-factor/enrol", asSession(person));
    expect(started.status).toBe(200);
    const { secret, uri } = started.body.data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(uri).toStartWith("otpauth://totp/Weft:enrol%40example.com?");
    expect(OTPAuth.URI.parse(uri).secret.base32).toBe(secret);
    expect((await t.req("GET", "/api/auth/second-factor", asSession(person))).body.data).toMatchObject({ enabled: false, pending: true });
    // Not on yet: the password alone still logs in.
    expect((await passwordStep(person.email, "member password")).headers.get("set-cookie")).toContain("weft_session=");

    const refused = await t.req("POST", "/api/auth/second-factor/confirm", { ...asSession(person), body: { code: wrong(codeOf(secret)) } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("code: wrong or expired");

    const confirmed = await t.req("POST", "/api/auth/second-factor/confirm", { ...asSession(person), body: { code: codeOf(secret) } });
    expect(confirmed.status).toBe(200);
    const codes: string[] = confirmed.body.data.recoveryCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
    expect((await t.req("GET", "/api/auth/second-factor", asSession(person))).body.data).toMatchObject({
      enabled: true,
      pending: false,
      recoveryCodesLeft: 10,
    });
    // Shown once: confirming again is refused, and nothing stored holds a code or the secret in the clear.
    expect((await t.req("POST", "/api/auth/second-factor/confirm", { ...asSession(person), body: { code: codeOf(secret) } })).status).toBe(409);
    const sql = appSql(t);
    const stored = await sql.get<{ secret: string }>("SELECT secret FROM second_factors WHERE user_id = ?", [person.userId]);
    expect(stored!.secret).toStartWith("v1:");
    expect(stored!.secret).not.toContain(secret);
    const hashes = (await sql.all<{ code_hash: string }>("SELECT code_hash FROM recovery_codes WHERE user_id = ?", [person.userId])).map((r) => r.code_hash);
    expect(hashes.sort()).toEqual(codes.map((c) => sha256(c.replace(/-/g, ""))).sort());
    // A second enrolment while one is on is refused (turn it off first).
    expect((await t.req("POST", "/api/auth/second-factor/enrol", asSession(person))).status).toBe(409);
    const enrolled = await actions("action=second_factor.enrolled");
    expect(enrolled.map((e) => e.target.name)).toContain("enrol@example.com");
  });

  test("an API token cannot enrol: a second factor belongs to a person's browser session", async () => {
    const res = await t.req("POST", "/api/auth/second-factor/enrol");
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("browser session");
  });
});

describe("login", () => {
  let person: Person;
  let secret: string;
  let recoveryCodes: string[];
  /** The code the first login used: replayed below as it was typed. */
  let used: string;

  beforeAll(async () => {
    person = await join(t, "login@example.com", "editor");
    ({ secret, recoveryCodes } = await enrol(person));
  });

  test("the password answers a ticket and no session; the code finishes the login, once", async () => {
    const first = await passwordStep(person.email, "member password");
    expect(first.status).toBe(200);
    expect(first.headers.get("set-cookie")).toBeNull();
    expect(first.body.data).toMatchObject({ secondFactorRequired: true, methods: ["totp", "recovery"] });
    const ticket: string = first.body.data.ticket;

    const refused = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: wrong(codeOf(secret, 1)) } });
    expect(refused.status).toBe(401);
    expect(refused.body.error.details).toEqual({ attemptsLeft: 4 });
    expect(refused.headers.get("set-cookie")).toBeNull();

    // The code of the next step (the confirming code used this one): within the window of one step.
    used = codeOf(secret, 1);
    const done = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: used } });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ method: "totp", user: { email: person.email } });
    const me = await t.req("GET", "/api/auth/me", { token: null, headers: sessionOf(done) });
    expect(me.body.data.user.email).toBe(person.email);

    // The ticket finished its login: not again, not even with another code.
    const again = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: codeOf(secret, 2) } });
    expect(again.status).toBe(401);
    expect(again.body.error.message).toContain("log in with your password again");
    const failed = await actions("action=second_factor.failed");
    expect(failed.some((e) => e.target.name === person.email && e.details.with === "code")).toBe(true);
  });

  test("a code used once is refused the second time (replay), even on a fresh ticket", async () => {
    const ticket = (await passwordStep(person.email, "member password")).body.data.ticket;
    const replay = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: used } });
    expect(replay.status).toBe(401);
    expect(replay.body.error.message).toContain("used already");
  });

  test("a recovery code works once, typed in any case", async () => {
    const ticket = (await passwordStep(person.email, "member password")).body.data.ticket;
    const used = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, recoveryCode: recoveryCodes[0]!.toLowerCase() } });
    expect(used.status).toBe(200);
    expect(used.body.data).toMatchObject({ method: "recovery", recoveryCodesLeft: 9 });
    const next = (await passwordStep(person.email, "member password")).body.data.ticket;
    const twice = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket: next, recoveryCode: recoveryCodes[0] } });
    expect(twice.status).toBe(401);
    expect(twice.body.error.message).toContain("recovery code is wrong or used already");
    expect((await actions("action=second_factor.recovery_code_used")).map((e) => e.details.recoveryCodesLeft)).toContain(9);
  });

  test("five wrong codes drop the ticket", async () => {
    const ticket = (await passwordStep(person.email, "member password")).body.data.ticket;
    const bad = wrong(codeOf(secret, 1));
    for (let i = 4; i >= 0; i--) {
      const res = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: bad } });
      expect(res.body.error.details).toEqual({ attemptsLeft: i });
    }
    const after = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, recoveryCode: recoveryCodes[1] } });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toContain("log in with your password again");
  });

  test("unknown e-mail and wrong password answer as before, with or without a second factor", async () => {
    const unknown = await passwordStep("nobody@example.com", "member password");
    const wrongPassword = await passwordStep(person.email, "not the password");
    for (const res of [unknown, wrongPassword]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: "UNAUTHORIZED", message: "email or password is wrong" } });
    }
  });

  test("code and recoveryCode: one of them, and a ticket that exists", async () => {
    const ticket = (await passwordStep(person.email, "member password")).body.data.ticket;
    expect((await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket } })).status).toBe(400);
    expect((await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket: "made-up", code: "123456" } })).status).toBe(401);
  });
});

test("an account gets ten code attempts whatever its tickets, then one a minute (429)", async () => {
  const person = await join(t, "guess@example.com", "viewer");
  const { secret } = await enrol(person);
  const bad = wrong(codeOf(secret, 1));
  const statuses: number[] = [];
  for (let round = 0; round < 3; round++) {
    const ticket = (await passwordStep(person.email, "member password")).body.data.ticket;
    for (let i = 0; i < 4; i++) statuses.push((await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: bad } })).status);
  }
  expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
  expect(statuses.slice(10)).toEqual([429, 429]);
  // Even the right code waits now: guessing gains nothing.
  const ticket = (await passwordStep(person.email, "member password")).body.data.ticket;
  const right = await t.req("POST", "/api/auth/login/second-factor", { token: null, body: { ticket, code: codeOf(secret, 1) } });
  expect(right.status).toBe(429);
  expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
});

describe("turning it off and new recovery codes", () => {
  test("disable needs a current code or the password; afterwards the password alone logs in", async () => {
    const person = await join(t, "disable@example.com", "editor");
    const { secret } = await enrol(person);
    const wrongPassword = await t.req("POST", "/api/auth/second-factor/disable", { ...asSession(person), body: { password: "not it" } });
    expect(wrongPassword.status).toBe(403);
    expect((await t.req("POST", "/api/auth/second-factor/disable", { ...asSession(person), body: {} })).status).toBe(400);
    const renewed = await t.req("POST", "/api/auth/second-factor/recovery-codes", { ...asSession(person), body: { code: codeOf(secret, 1) } });
    expect(renewed.status).toBe(200);
    expect(renewed.body.data.recoveryCodes).toHaveLength(10);
    const off = await t.req("POST", "/api/auth/second-factor/disable", { ...asSession(person), body: { password: "member password" } });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ enabled: false, pending: false });
    expect(await appSql(t).all("SELECT * FROM recovery_codes WHERE user_id = ?", [person.userId])).toEqual([]);
    const login = await passwordStep(person.email, "member password");
    expect(login.headers.get("set-cookie")).toContain("weft_session=");
    const removed = await actions("action=second_factor.removed");
    expect(removed.some((e) => e.target.name === "disable@example.com" && e.details.with === "password")).toBe(true);
    const failed = await actions("action=second_factor.failed");
    expect(failed.some((e) => e.target.name === "disable@example.com")).toBe(true);
    expect(JSON.stringify(failed)).not.toContain("not it");
  });
});

describe("a workspace that requires a second factor", () => {
  test("the owner turns it on after enrolling themselves; a member without one can only enrol until they do", async () => {
    const member = await join(t, "required@example.com", "editor");
    const admin = await join(t, "admin2@example.com", "admin");
    expect((await t.req("PUT", "/api/settings/second-factor", { ...asSession(admin), body: { required: true } })).status).toBe(403);
    const first = await t.req("PUT", "/api/settings/second-factor", { ...asSession(owner), body: { required: true } });
    expect(first.status).toBe(409);
    expect(first.body.error.message).toContain("turn on your own second factor first");
    await enrol(owner);
    const on = await t.req("PUT", "/api/settings/second-factor", { ...asSession(owner), body: { required: true } });
    expect(on.status).toBe(200);
    expect(on.body.data.required).toBe(true);

    const blocked = await t.req("GET", "/api/workflows", asSession(member));
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.details).toMatchObject({ secondFactorRequired: true });
    const me = await t.req("GET", "/api/auth/me", asSession(member));
    expect(me.status).toBe(200);
    expect(me.body.data.secondFactorMissing).toBe(true);
    expect((await t.req("GET", "/api/auth/second-factor", asSession(member))).body.data).toMatchObject({ mustEnrol: true, requiredHere: true });
    // API tokens are not password logins: the root token is not held back.
    expect((await t.req("GET", "/api/workflows")).status).toBe(200);

    await enrol(member);
    expect((await t.req("GET", "/api/workflows", asSession(member))).status).toBe(200);
    expect((await t.req("GET", "/api/auth/me", asSession(member))).body.data.secondFactorMissing).toBe(false);

    // A session from single sign-on is not held back (the provider asks for its factors): one without a factor here.
    const sso = await join(t, "sso-user@example.com", "viewer");
    expect((await t.req("GET", "/api/workflows", asSession(sso))).status).toBe(403);
    const raw = decodeURIComponent(sso.session.cookie!.split("=")[1]!);
    await appSql(t).run("INSERT INTO sso_sessions (session_hash, provider_id, id_token, created_at) VALUES (?, ?, ?, ?)", [
      sha256(raw),
      "provider",
      "id-token",
      new Date().toISOString(),
    ]);
    expect((await t.req("GET", "/api/workflows", asSession(sso))).status).toBe(200);

    const off = await t.req("PUT", "/api/settings/second-factor", { ...asSession(owner), body: { required: false } });
    expect(off.body.data.required).toBe(false);
    const changes = await actions("action=settings.changed");
    expect(changes.map((e) => e.details.secondFactorRequired)).toEqual(expect.arrayContaining([true, false]));
    // The owner's own factor stays on: the password alone no longer logs in.
    expect((await passwordStep(owner.email, "owner password")).body.data.secondFactorRequired).toBe(true);
  });

  test("accepting an invitation with the password of an account with a second factor opens no session", async () => {
    const person = await join(t, "invited-again@example.com", "viewer");
    await enrol(person);
    const other = (await t.req("POST", "/api/workspaces", { body: { name: "another" } })).body.data.id as string;
    const raw = (await t.req("POST", "/api/tokens", { body: { name: "other admin", scopes: "all", workspaceId: other } })).body.data.token;
    const invited = await t.req("POST", "/api/invitations", { token: raw, body: { email: person.email, role: "editor" } });
    expect(invited.status).toBe(201);
    const token = invited.body.data.token;
    const res = await t.req("POST", "/api/invitations/accept", { token: null, body: { token, password: "member password" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.body.data).toMatchObject({ secondFactorRequired: true });
  });
});
