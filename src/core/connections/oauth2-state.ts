/**
 * The OAuth2 `state` parameter (docs/connections.md "The OAuth2 flow"): a random nonce, the connection it is
 * bound to and its expiry, signed with HMAC-SHA256. The signature lets the callback refuse a forged or edited
 * state before touching the database; single use comes from the server-side row that the callback deletes.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { type Clock, systemClock } from "../../lib/clock";

/** How long an authorize URL's state stays valid by default (WEFT_OAUTH_STATE_TTL_SECONDS). */
export const STATE_LIFETIME_MS = 10 * 60 * 1000;

/** "10 minutes", "90 seconds": a lifetime in the words of the expiry page. */
export function lifetimeText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? "" : "s"}`;
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

export interface StatePayload {
  /** Random nonce; the primary key of the server-side row. */
  nonce: string;
  connectionId: string;
  /** Expiry, ms since the epoch. */
  expiresAt: number;
}

export type StateCheck =
  | { ok: true; payload: StatePayload }
  | { ok: false; reason: "missing" | "malformed" | "bad_signature" | "expired"; payload?: StatePayload };

export class StateSigner {
  constructor(
    private readonly key: Buffer,
    readonly lifetimeMs = STATE_LIFETIME_MS,
    /** When a state expires (docs/architecture.md, "Time"). */
    private readonly clock: Clock = systemClock,
  ) {
    if (key.length < 32) throw new Error("the state signing key must be at least 32 bytes");
  }

  mint(connectionId: string, now = this.clock.now()): { state: string; payload: StatePayload } {
    const payload: StatePayload = { nonce: randomBytes(18).toString("base64url"), connectionId, expiresAt: now + this.lifetimeMs };
    const body = Buffer.from(JSON.stringify([payload.nonce, payload.connectionId, payload.expiresAt])).toString("base64url");
    return { state: `${body}.${this.sign(body)}`, payload };
  }

  /** Checks the signature first (a forged state learns nothing), then the expiry. */
  verify(state: string | undefined, now = this.clock.now()): StateCheck {
    if (!state) return { ok: false, reason: "missing" };
    const dot = state.indexOf(".");
    if (dot <= 0 || state.length > 512) return { ok: false, reason: "malformed" };
    const body = state.slice(0, dot);
    const given = Buffer.from(state.slice(dot + 1), "base64url");
    const expected = Buffer.from(this.sign(body), "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "bad_signature" };
    let payload: StatePayload;
    try {
      const [nonce, connectionId, expiresAt] = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
      if (typeof nonce !== "string" || typeof connectionId !== "string" || typeof expiresAt !== "number") throw new Error();
      payload = { nonce, connectionId, expiresAt };
    } catch {
      return { ok: false, reason: "malformed" };
    }
    if (payload.expiresAt <= now) return { ok: false, reason: "expired", payload };
    return { ok: true, payload };
  }

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(`weft-oauth2-state.${body}`).digest("base64url");
  }
}
