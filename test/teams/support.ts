/**
 * Members for tests: the first owner set up through the API, and people who joined by invitation, each with a
 * browser session (cookie + CSRF token) and an API token minted while they were admin (docs/teams.md).
 */
import { expect } from "bun:test";
import type { TestApp } from "../support/app";

export interface Person {
  email: string;
  userId: string;
  /** Headers of their browser session: the cookie and the CSRF token. */
  session: Record<string, string>;
}

function sessionOf(res: { headers: Headers; body: any }): Record<string, string> {
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  return { cookie, "x-csrf-token": res.body.data.csrfToken };
}

export async function setUpOwner(t: TestApp, email = "owner@example.com"): Promise<Person> {
  const res = await t.req("POST", "/api/auth/setup", { token: null, body: { email, password: "owner password" } });
  expect(res.status).toBe(201);
  return { email, userId: res.body.data.user.id, session: sessionOf(res) };
}

/** Invites `email` into the root token's workspace (or with `as`'s session) and returns the raw token. */
export async function invite(t: TestApp, email: string, role: string, as?: Person): Promise<string> {
  const res = await t.req("POST", "/api/invitations", { ...(as ? { token: null, headers: as.session } : {}), body: { email, role } });
  expect(res.status).toBe(201);
  return res.body.data.token;
}

export async function accept(t: TestApp, token: string, email: string, password = "member password"): Promise<Person> {
  const res = await t.req("POST", "/api/invitations/accept", { token: null, body: { token, password } });
  expect(res.status).toBe(201);
  return { email, userId: res.body.data.user.id, session: sessionOf(res) };
}

/** Joins with `role` by invitation. */
export async function join(t: TestApp, email: string, role: string): Promise<Person> {
  return accept(t, await invite(t, email, role), email);
}

/** A token the person mints with their session. */
export async function mint(t: TestApp, person: Person, scopes: string[] | "all") {
  return t.req("POST", "/api/tokens", { token: null, headers: person.session, body: { name: `${person.email} token`, scopes } });
}

export async function setRole(t: TestApp, userId: string, role: string) {
  const res = await t.req("PUT", `/api/members/${userId}/role`, { body: { role } });
  expect(res.status).toBe(200);
}
