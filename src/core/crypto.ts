/**
 * Encryption at rest for secrets (workflow variables, connection credentials): AES-256-GCM with a
 * random 96-bit nonce per value. The key comes from WEFT_ENCRYPTION_KEY (any string of ≥ 32 characters,
 * stretched with SHA-256) or, when unset, from `<dataDir>/encryption.key`, generated once with mode 0600.
 *
 *   const box = secretBox({ encryptionKey: config.encryptionKey, dataDir: config.dataDir });
 *   const blob = box.encrypt("s3cret");  // "v1:<keyId>:<nonce>:<ciphertext+tag>" (base64url parts)
 *   box.decrypt(blob);                   // "s3cret"
 *
 * The key id (first 8 hex characters of SHA-256 of the key) in every blob lets a rotation tool
 * (`weft keys rotate`) tell old blobs from new ones: pass the old keys as `previousKeys` to decrypt them.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "../http/errors";

const VERSION = "v1";
const KEY_FILE = "encryption.key";

export interface SecretBox {
  /** The id of the key new blobs are written with. */
  readonly keyId: string;
  encrypt(text: string): string;
  /**
   * Throws when the blob was tampered with, or AppError ENCRYPTION_KEY_MISSING (naming the key id) when it was
   * written under a key this box does not hold.
   */
  decrypt(blob: string): string;
  /** True when `blob` was written under the current key (false: re-encrypt it during rotation). */
  isCurrent(blob: string): boolean;
  /** True when this box holds the key of that id, current or previous. */
  holds(keyId: string): boolean;
}

export interface SecretBoxOptions {
  /** WEFT_ENCRYPTION_KEY; when absent, the key file in dataDir is used (and created). */
  encryptionKey?: string;
  dataDir: string;
  /** Older key strings whose blobs must still decrypt (key rotation). */
  previousKeys?: string[];
}

/** 32 key bytes from a key string: base64/hex of exactly 32 bytes is used as is, anything else is hashed. */
export function deriveKey(material: string): Buffer {
  const trimmed = material.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return Buffer.from(trimmed, "hex");
  const decoded = Buffer.from(trimmed, "base64");
  if (decoded.length === 32 && /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return decoded;
  return createHash("sha256").update(trimmed, "utf8").digest();
}

const keyIdOf = (key: Buffer) => createHash("sha256").update(key).digest("hex").slice(0, 8);

/** Reads `<dataDir>/encryption.key`, creating it (0600, 32 random bytes, base64) on first use. */
export function loadOrCreateKeyFile(dataDir: string): string {
  const path = join(dataDir, KEY_FILE);
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const material = randomBytes(32).toString("base64");
  // wx: never overwrite a key another process wrote meanwhile; losing the key loses every secret.
  try {
    writeFileSync(path, `${material}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(path, "utf8").trim();
    throw error;
  }
  chmodSync(path, 0o600);
  return material;
}

export function secretBox(options: SecretBoxOptions): SecretBox {
  const current = deriveKey(options.encryptionKey ?? loadOrCreateKeyFile(options.dataDir));
  const keyId = keyIdOf(current);
  const keys = new Map<string, Buffer>([[keyId, current]]);
  for (const old of options.previousKeys ?? []) {
    const key = deriveKey(old);
    keys.set(keyIdOf(key), key);
  }
  return {
    keyId,
    encrypt(text: string): string {
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current, nonce);
      const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}:${keyId}:${nonce.toString("base64url")}:${body.toString("base64url")}`;
    },
    decrypt(blob: string): string {
      const [version, id, nonceText, bodyText] = blob.split(":");
      if (version !== VERSION || !id || !nonceText || bodyText === undefined) throw new Error("not an encrypted value (expected v1:<keyId>:<nonce>:<data>)");
      const key = keys.get(id);
      if (!key) throw keyMissing(id, keyId, options.encryptionKey !== undefined);
      const body = Buffer.from(bodyText, "base64url");
      if (body.length < 16) throw new Error("encrypted value is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonceText, "base64url"));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
    },
    isCurrent: (blob: string) => blob.split(":")[1] === keyId,
    holds: (id: string) => keys.has(id),
  };
}

/** A secret this server cannot read, as the API answers it: the key it needs, and the two ways to give it that key. */
function keyMissing(needed: string, held: string, fromEnvironment: boolean): AppError {
  return new AppError(
    "ENCRYPTION_KEY_MISSING",
    `a stored secret was encrypted with key ${needed}, which this server does not hold (its key is ${held}, from ${fromEnvironment ? "WEFT_ENCRYPTION_KEY" : "its data directory's encryption.key"}): give the server that key — copy encryption.key from the data directory of the server that stored the secret, or set WEFT_ENCRYPTION_KEY to that key — and restart it, or enter the secret again`,
    { keyId: needed, serverKeyId: held },
  );
}
