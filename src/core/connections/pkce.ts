/** PKCE (RFC 7636) with the S256 method: the verifier stays on the server, the challenge goes in the authorize URL. */
import { createHash, randomBytes } from "node:crypto";

export interface Pkce {
  verifier: string;
  challenge: string;
  method: "S256";
}

/** 32 random bytes → a 43-character base64url verifier (the RFC allows 43–128 characters). */
export function newPkce(): Pkce {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: pkceChallenge(verifier), method: "S256" };
}

export const pkceChallenge = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url");
