/**
 * A second factor for password logins (docs/teams.md, "Second factor"): TOTP (RFC 6238) done by otpauth — the secret,
 * the otpauth:// URI, the codes — with recovery codes, each usable once, and a workspace owner's requirement. Here:
 * enrolment (pending until the first code is confirmed), the login's second step (a short-lived single-use ticket
 * between the password and the code), refusing a code used already (its time step is recorded), and removal.
 * The TOTP secret is stored encrypted with the server's key (the SecretBox of connection and SSO client secrets);
 * recovery codes are stored as SHA-256 hashes (random, 80 bits each: no slow hash needed).
 */
import * as OTPAuth from "otpauth";
import { AppError } from "../http/errors";
import { newSecret, sha256 } from "../lib/ids";
import { nowIso } from "../store/db";
import type { UserRow } from "../store/identity";
import type { Storage } from "../store/port";
import type { SecretBox } from "./crypto";
import { type Identity, type Principal, userView } from "./identity";

/** RFC 6238's defaults, which every authenticator app reads: SHA-1, six digits, thirty seconds. */
const PERIOD = 30;
const DIGITS = 6;
const ALGORITHM = "SHA1";
/** A code of the step before or after the server's is accepted too (clocks drift; a code typed as it turns). */
const WINDOW = 1;
/** How long a login waits for its code after its password was right. */
const TICKET_MS = 5 * 60_000;
/** Wrong codes one ticket takes before it is dropped (the password must be given again). */
export const TICKET_FAILURES = 5;
const RECOVERY_CODES = 10;

/** What proves the caller is the factor's holder for a change: a current code, or the account's password. */
export interface Proof {
  code?: string;
  password?: string;
}

/** The login's second step: a code of the authenticator app, or one recovery code. */
export interface SecondStep {
  code?: string;
  recoveryCode?: string;
}

export type SecondStepResult =
  | { ok: true; user: UserRow; method: "totp" | "recovery"; recoveryCodesLeft: number }
  | { ok: false; user: UserRow; message: string; attemptsLeft: number };

export interface SecondFactorOptions {
  storage: Storage;
  identity: Identity;
  secrets: SecretBox;
  /** The issuer the authenticator app shows beside the account (the otpauth:// URI's). */
  issuer?: string;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

/** A recovery code as typed: case, spaces and dashes do not matter. */
const normalRecoveryCode = (code: string) => code.toUpperCase().replace(/[^A-Z2-7]/g, "");

export class SecondFactor {
  private readonly now: () => number;

  constructor(private readonly o: SecondFactorOptions) {
    this.now = o.now ?? Date.now;
  }

  private get store() {
    return this.o.storage.secondFactor;
  }

  private async userOf(principal: Principal): Promise<UserRow> {
    if (principal.kind !== "session" || !principal.userId)
      throw new AppError("FORBIDDEN", "a second factor belongs to a person: manage it from a browser session (your profile, #/profile), not with an API token");
    const user = await this.o.identity.user(principal.userId);
    if (!user) throw new AppError("UNAUTHORIZED", "the session's user no longer exists");
    return user;
  }

  /** The caller's second factor: on or not, pending enrolment, recovery codes left, the workspaces requiring one. */
  async status(principal: Principal) {
    const user = await this.userOf(principal);
    const factor = await this.store.factor(user.id);
    const requiredBy = await this.store.requiringWorkspaces(user.id);
    return {
      enabled: factor?.confirmed_at != null,
      pending: factor !== null && factor.confirmed_at === null,
      enabledAt: factor?.confirmed_at ?? null,
      recoveryCodesLeft: factor?.confirmed_at ? await this.store.recoveryCodesLeft(user.id) : 0,
      requiredBy,
      requiredHere: requiredBy.includes(principal.workspaceId),
      mustEnrol: principal.secondFactorMissing === true,
    };
  }

  /** Starts enrolment: a new secret (replacing a pending one), answered with its otpauth:// URI; nothing is on until confirmed. */
  async enrol(principal: Principal) {
    const user = await this.userOf(principal);
    const secret = new OTPAuth.Secret({ size: 20 });
    const written = await this.store.putPending({
      user_id: user.id,
      secret: this.o.secrets.encrypt(secret.base32),
      confirmed_at: null,
      last_step: null,
      created_at: nowIso(),
    });
    if (!written)
      throw new AppError(
        "CONFLICT",
        "a second factor is already on for this account; to enrol another device, turn it off first (POST /api/auth/second-factor/disable)",
      );
    const totp = this.totp(secret, user.email);
    return { secret: secret.base32, uri: totp.toString(), issuer: totp.issuer, label: totp.label, digits: DIGITS, period: PERIOD, algorithm: ALGORITHM };
  }

  /** Turns the pending factor on with its first code; answers the recovery codes, shown this once. */
  async confirm(principal: Principal, code: string) {
    const user = await this.userOf(principal);
    const factor = await this.store.factor(user.id);
    if (!factor || factor.confirmed_at !== null)
      throw new AppError("CONFLICT", factor ? "the second factor is already on" : "no enrolment is pending: start one with POST /api/auth/second-factor/enrol");
    const step = this.stepOf(factor.secret, code);
    if (step === null)
      throw new AppError("VALIDATION_FAILED", "code: wrong or expired; give the 6-digit code your authenticator app shows now for Weft", {
        field: "code",
      });
    const codes = this.newRecoveryCodes();
    const at = nowIso();
    await this.o.storage.atomically(async (unit) => {
      if (!(await unit.secondFactor.confirm(user.id, at, step))) throw new AppError("CONFLICT", "the second factor was confirmed meanwhile");
      await unit.secondFactor.replaceRecoveryCodes(user.id, codes.map(normalRecoveryCode).map(sha256), at);
    });
    return { user: userView(user), recoveryCodes: codes };
  }

  /** Turns the factor off (with its recovery codes) after a current code or the password. */
  async disable(principal: Principal, proof: Proof) {
    const user = await this.userOf(principal);
    await this.prove(user, proof);
    await this.o.storage.atomically((unit) => unit.secondFactor.remove(user.id));
    return { user: userView(user) };
  }

  /** New recovery codes (the old ones stop working), after a current code or the password. */
  async regenerateRecoveryCodes(principal: Principal, proof: Proof) {
    const user = await this.userOf(principal);
    await this.prove(user, proof);
    const codes = this.newRecoveryCodes();
    await this.o.storage.atomically((unit) => unit.secondFactor.replaceRecoveryCodes(user.id, codes.map(normalRecoveryCode).map(sha256), nowIso()));
    return { user: userView(user), recoveryCodes: codes };
  }

  private async prove(user: UserRow, proof: Proof) {
    const factor = await this.store.factor(user.id);
    if (!factor?.confirmed_at) throw new AppError("CONFLICT", "no second factor is on for this account");
    if (proof.code !== undefined) {
      const step = this.stepOf(factor.secret, proof.code);
      if (step !== null && (await this.store.useStep(user.id, step))) return;
      throw new AppError("FORBIDDEN", "code: wrong, expired or used already; give the code your authenticator app shows now, or your password", {
        field: "code",
      });
    }
    if (proof.password !== undefined) {
      if (await this.o.identity.verifyPassword(user, proof.password)) return;
      throw new AppError("FORBIDDEN", "password: wrong; give your account's password, or a current code", { field: "password" });
    }
    throw new AppError("VALIDATION_FAILED", "give a current code (code) or your password (password)");
  }

  /** Whether a password login of this user needs its second step. */
  async isOn(userId: string): Promise<boolean> {
    return (await this.store.factor(userId))?.confirmed_at != null;
  }

  /** After a correct password: the ticket the login's second step is called with (single use, five minutes). */
  async startLogin(user: UserRow) {
    const ticket = newSecret("", 32);
    const expiresAt = new Date(this.now() + TICKET_MS).toISOString();
    await this.store.insertLogin({ ticket_hash: sha256(ticket), user_id: user.id, failures: 0, expires_at: expiresAt });
    return { ticket, expiresAt, methods: ["totp", "recovery"] as const };
  }

  /** The user a waiting login is for; refused when the ticket is unknown, expired or finished. */
  async loginUser(ticket: string): Promise<UserRow> {
    const row = await this.store.login(sha256(ticket), new Date(this.now()).toISOString());
    const user = row ? await this.o.identity.user(row.user_id) : null;
    if (!row || !user) throw new AppError("UNAUTHORIZED", "this sign-in is unknown, expired or already finished; log in with your password again");
    return user;
  }

  /**
   * The login's second step: a current code (not used before) or an unused recovery code finishes it, once. A wrong
   * one counts against the ticket; after TICKET_FAILURES the ticket is dropped. The route opens the session.
   */
  async finishLogin(ticket: string, step: SecondStep): Promise<SecondStepResult> {
    const user = await this.loginUser(ticket);
    const hash = sha256(ticket);
    const factor = await this.store.factor(user.id);
    let method: "totp" | "recovery" | null = null;
    if (factor?.confirmed_at) {
      if (step.code !== undefined) {
        const at = this.stepOf(factor.secret, step.code);
        if (at !== null && (await this.store.useStep(user.id, at))) method = "totp";
      } else if (step.recoveryCode !== undefined) {
        if (await this.store.useRecoveryCode(user.id, sha256(normalRecoveryCode(step.recoveryCode)), nowIso())) method = "recovery";
      }
    }
    if (method === null) {
      const failures = await this.store.failLogin(hash);
      const attemptsLeft = Math.max(0, TICKET_FAILURES - failures);
      if (attemptsLeft === 0) await this.store.takeLogin(hash);
      const what = step.code !== undefined ? "the code is wrong, expired or used already" : "the recovery code is wrong or used already";
      return {
        ok: false,
        user,
        attemptsLeft,
        message: attemptsLeft > 0 ? `${what}; ${attemptsLeft} more tries for this sign-in` : `${what}; too many tries: log in with your password again`,
      };
    }
    if (!(await this.store.takeLogin(hash)))
      throw new AppError("UNAUTHORIZED", "this sign-in is unknown, expired or already finished; log in with your password again");
    return { ok: true, user, method, recoveryCodesLeft: await this.store.recoveryCodesLeft(user.id) };
  }

  /** Whether the workspace requires a second factor of its members. */
  async required(workspaceId: string) {
    return { workspaceId, required: await this.store.required(workspaceId) };
  }

  /**
   * The workspace owner's switch (a token no user minted may set it too). Turning it on needs the owner's own factor
   * first, so the one who requires it is never the one shut out.
   */
  async setRequired(principal: Principal, required: boolean) {
    if (principal.role && principal.role !== "owner")
      throw new AppError("FORBIDDEN", `only the workspace owner requires a second factor; your role is ${principal.role}`, { role: principal.role });
    if (required && principal.userId && principal.kind === "session" && !(await this.isOn(principal.userId)))
      throw new AppError("CONFLICT", "turn on your own second factor first (your profile, #/profile), then require it of the workspace");
    await this.store.setRequired(principal.workspaceId, required, principal.userId, nowIso());
    return this.required(principal.workspaceId);
  }

  private totp(secret: OTPAuth.Secret, label: string) {
    return new OTPAuth.TOTP({ issuer: this.o.issuer ?? "Weft", label, algorithm: ALGORITHM, digits: DIGITS, period: PERIOD, secret });
  }

  /** The time step a code is valid for (now ± WINDOW steps), or null. */
  private stepOf(encryptedSecret: string, code: string): number | null {
    const token = code.replace(/\s/g, "");
    if (!/^\d{6}$/.test(token)) return null;
    const secret = OTPAuth.Secret.fromBase32(this.o.secrets.decrypt(encryptedSecret));
    const timestamp = this.now();
    const delta = OTPAuth.TOTP.validate({ token, secret, algorithm: ALGORITHM, digits: DIGITS, period: PERIOD, timestamp, window: WINDOW });
    return delta === null ? null : OTPAuth.TOTP.counter({ period: PERIOD, timestamp }) + delta;
  }

  /** Ten codes of 80 random bits each, in base32 groups of four (e.g. ABCD-EFGH-IJKL-MNOP). */
  private newRecoveryCodes(): string[] {
    return Array.from({ length: RECOVERY_CODES }, () => new OTPAuth.Secret({ size: 10 }).base32.match(/.{4}/g)!.join("-"));
  }
}
