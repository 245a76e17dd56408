/** Who is logged in: first-start setup, login, logout, and the CSRF token writes must carry. */
import { signal } from "@preact/signals";
import { api, sessionExpired, setCsrfToken } from "./api";
import type { Me } from "./types";

/** A login whose password was right, waiting for its second factor (docs/teams.md, "Second factor"). */
export interface SecondFactorTicket {
  ticket: string;
  expiresAt: string;
}
type LoginAnswer = { csrfToken: string } | ({ secondFactorRequired: true } & SecondFactorTicket);

/** "loading" until the first answer; "setup" while no owner exists; "login" without a session. */
export const authState = signal<"loading" | "setup" | "login" | "ready">("loading");
export const me = signal<Me | null>(null);
/** Set while the login page asks for the code of a login whose password was right. */
export const pendingSecondFactor = signal<SecondFactorTicket | null>(null);

export async function loadSession(): Promise<void> {
  try {
    const res = await api.get<Me>("/api/auth/me");
    setCsrfToken(res.data.csrfToken);
    me.value = res.data;
    sessionExpired.value = false;
    authState.value = "ready";
  } catch {
    const status = await api.get<{ needsSetup: boolean }>("/api/auth/status");
    authState.value = status.data.needsSetup ? "setup" : "login";
  }
}

export async function setupOwner(input: { email: string; password: string; name?: string }) {
  const res = await api.post<{ csrfToken: string }>("/api/auth/setup", input);
  setCsrfToken(res.data.csrfToken);
  await loadSession();
}

/** Either a session, or (an account with a second factor) a ticket the login page asks the code for. */
async function sessionOrTicket(data: LoginAnswer) {
  if ("secondFactorRequired" in data) {
    pendingSecondFactor.value = { ticket: data.ticket, expiresAt: data.expiresAt };
    authState.value = "login";
    return;
  }
  pendingSecondFactor.value = null;
  setCsrfToken(data.csrfToken);
  await loadSession();
}

export async function login(email: string, password: string) {
  await sessionOrTicket((await api.post<LoginAnswer>("/api/auth/login", { email, password })).data);
}

/** The login's second step: a code of the authenticator app, or a recovery code. */
export async function finishLogin(answer: { code: string } | { recoveryCode: string }) {
  const pending = pendingSecondFactor.value;
  if (!pending) throw new Error("log in with your password first");
  const res = await api.post<{ csrfToken: string }>("/api/auth/login/second-factor", { ticket: pending.ticket, ...answer });
  await sessionOrTicket(res.data);
}

/** Joins a workspace by invitation (docs/teams.md) and starts the session it answers with. */
export async function acceptInvitation(input: { token: string; password: string; name?: string }) {
  await sessionOrTicket((await api.post<LoginAnswer>("/api/invitations/accept", input)).data);
}

/** Ends the session; one that came from a single sign-on provider is ended there too (RP-initiated logout, docs/teams.md). */
export async function logout() {
  let logoutUrl: string | null = null;
  try {
    logoutUrl = (await api.post<{ logoutUrl?: string | null }>("/api/auth/logout")).data.logoutUrl ?? null;
  } finally {
    setCsrfToken(undefined);
    me.value = null;
    authState.value = "login";
  }
  if (logoutUrl) window.location.assign(logoutUrl);
}

export async function switchWorkspace(workspaceId: string) {
  await api.post("/api/auth/workspace", { workspaceId });
  await loadSession();
}
