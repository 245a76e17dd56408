/**
 * The HMAC key that signs OAuth2 state, derived (HKDF-SHA256) from the same key material as encryption at
 * rest, so an operator manages one secret. A key rotation therefore voids authorizations in progress,
 * which only means starting them again.
 */
import { hkdfSync } from "node:crypto";
import { deriveKey, loadOrCreateKeyFile } from "../crypto";

export function stateKeyFrom(options: { encryptionKey?: string; dataDir: string }): Buffer {
  const material = deriveKey(options.encryptionKey ?? loadOrCreateKeyFile(options.dataDir));
  return Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), "weft oauth2 state v1", 32));
}
