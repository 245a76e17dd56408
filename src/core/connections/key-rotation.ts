/**
 * The keyring and `weft keys rotate`.
 *
 * Key file (no WEFT_ENCRYPTION_KEY): rotate generates a new key. The old key is first appended to
 * `encryption.key.previous`, then the new key replaces `encryption.key` (write + rename), then every
 * encrypted value is re-encrypted in one transaction, and only then is the previous-keys file removed.
 * A server always loads the previous-keys file too, so a crash at any step leaves every value readable.
 *
 * WEFT_ENCRYPTION_KEY: the operator chooses the new key. Run rotate with WEFT_ENCRYPTION_KEY set to the new
 * key and WEFT_ENCRYPTION_KEY_PREVIOUS to the old one; while both are set a server reads either. A key file
 * left from before WEFT_ENCRYPTION_KEY was set is read as a previous key, so switching to the variable
 * followed by a rotate moves every value under it.
 *
 * Stop the server while rotating: a running server keeps writing with the key it started with.
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, chmodSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { BLOB_PATTERN } from "../../store/encrypted-values";
import type { Storage } from "../../store/port";
import { loadOrCreateKeyFile, secretBox, type SecretBoxOptions } from "../crypto";

const KEY_FILE = "encryption.key";
const PREVIOUS_FILE = "encryption.key.previous";

export interface KeyringSource {
  encryptionKey?: string;
  dataDir: string;
}

type Env = Record<string, string | undefined>;

function readPrevious(dataDir: string): string[] {
  const path = join(dataDir, PREVIOUS_FILE);
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)
    : [];
}

/** The options every SecretBox of a server should use: the current key plus the keys still being rotated out. */
export function keyringOptions(source: KeyringSource, env: Env = process.env): SecretBoxOptions {
  const previousKeys = readPrevious(source.dataDir);
  if (source.encryptionKey) {
    if (env.WEFT_ENCRYPTION_KEY_PREVIOUS) previousKeys.push(env.WEFT_ENCRYPTION_KEY_PREVIOUS);
    const keyFile = join(source.dataDir, KEY_FILE);
    if (existsSync(keyFile)) previousKeys.push(readFileSync(keyFile, "utf8").trim());
  }
  return { encryptionKey: source.encryptionKey, dataDir: source.dataDir, previousKeys };
}

function writeDurably(path: string, text: string) {
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(path, 0o600);
}

export interface RotationReport {
  keyId: string;
  previousKeyIds: string[];
  rewritten: number;
  rows: number;
  /** Blob-shaped values no held key could decrypt (left unchanged). */
  unreadable: number;
  /** Where the new key lives: "WEFT_ENCRYPTION_KEY" or the key file's path. */
  keySource: string;
}

/**
 * Re-encrypts every value under the current key (generating a new key first when the key file is in use).
 * The values of every table are rewritten in one unit of the storage port (a command run with the server
 * stopped); the authorizations in progress are then dropped.
 */
export async function rotateKeys(storage: Storage, source: KeyringSource, env: Env = process.env): Promise<RotationReport> {
  let keySource: string;
  if (source.encryptionKey) {
    keySource = "WEFT_ENCRYPTION_KEY";
  } else {
    const old = loadOrCreateKeyFile(source.dataDir);
    appendFileSync(join(source.dataDir, PREVIOUS_FILE), `${old}\n`, { mode: 0o600 });
    const fresh = randomBytes(32).toString("base64");
    const tmp = join(source.dataDir, `${KEY_FILE}.tmp`);
    writeDurably(tmp, `${fresh}\n`);
    renameSync(tmp, join(source.dataDir, KEY_FILE));
    keySource = join(source.dataDir, KEY_FILE);
  }
  const options = keyringOptions(source, env);
  const box = secretBox(options);
  const previousKeyIds = [...new Set((options.previousKeys ?? []).map((k) => secretBox({ encryptionKey: k, dataDir: source.dataDir }).keyId))].filter(
    (id) => id !== box.keyId,
  );
  let unreadable = 0;
  const stats = await storage.atomically((unit) =>
    unit.encryptedValues.rewriteAll((blob) => {
      if (box.isCurrent(blob)) return blob;
      try {
        return box.encrypt(box.decrypt(blob));
      } catch {
        unreadable++;
        return blob;
      }
    }),
  );
  // Authorizations in progress were signed with a key derived from the old one; they cannot complete now.
  await storage.connections.dropAllStates();
  if (unreadable === 0 && !source.encryptionKey) rmSync(join(source.dataDir, PREVIOUS_FILE), { force: true });
  return { keyId: box.keyId, previousKeyIds, rewritten: stats.rewritten, rows: stats.rows, unreadable, keySource };
}

/** Counts values per key id (for `weft keys status`-style reporting and tests). */
export function countBlobsByKey(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(BLOB_PATTERN)) {
    const id = match[0].split(":")[1];
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}
