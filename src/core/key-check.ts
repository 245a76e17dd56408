/**
 * One encryption key per cluster. Instances sharing a database must encrypt and decrypt with the same key: one
 * with another key would start, report healthy, join the cluster and then fail every use of a secret written
 * elsewhere, and write secrets nobody else can read. So before an instance on a shared database registers or
 * takes any work, `checkClusterKey` compares its key with the one the database records (migration 23):
 * - recorded: the instance's current key must be that key (decrypting the recorded check proves it holds it);
 * - not yet (a new database, or one from before the check): every stored secret must be under a key the
 *   instance holds; it then records its current key. Instances recording at once: the first insert wins and
 *   the others are checked against it.
 * `weft keys rotate` re-encrypts the recorded check with every other secret, so it names the new key after a
 * rotation. Alone on SQLite the data directory holds both the database and its key, and a secret that cannot
 * be decrypted is answered with ENCRYPTION_KEY_MISSING (src/core/crypto.ts) instead.
 *
 *   await checkClusterKey(storage, secrets, config); // throws KeyMismatchError with the message to print
 */
import { join } from "node:path";
import { nowIso } from "../store/db";
import type { Storage } from "../store/port";
import type { SecretBox } from "./crypto";

/** What the recorded check decrypts to. */
const CHECK_TEXT = "weft encryption key check";

/** Where an instance's key comes from, as config.ts has it. */
export interface KeySource {
  encryptionKey?: string;
  dataDir: string;
}

/** The instance cannot take part in the cluster with the key it has; the message says which key it needs and how to give it. */
export class KeyMismatchError extends Error {
  constructor(
    /** The key the cluster's secrets are encrypted with. */
    readonly clusterKeyId: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Checks (and, on a database that records none yet, records) the cluster's key; throws KeyMismatchError when
 * this instance does not write with it. `recorded`: this call recorded it.
 */
export async function checkClusterKey(storage: Storage, box: SecretBox, source: KeySource): Promise<{ keyId: string; recorded: boolean }> {
  const store = storage.keyCheck;
  let check = await store.current();
  let recorded = false;
  if (check === null) {
    const foreign = (await store.secretKeyIds()).find((id) => !box.holds(id));
    if (foreign !== undefined) throw lacking(foreign, box, source);
    recorded = await store.recordIfAbsent(box.encrypt(CHECK_TEXT), nowIso());
    check = await store.current();
    if (check === null) throw new Error("the encryption key check was recorded but cannot be read back");
  }
  const keyId = check.split(":")[1] ?? "";
  if (!box.isCurrent(check)) throw box.holds(keyId) ? writesAnother(keyId, box, source) : lacking(keyId, box, source);
  let text: string | undefined;
  try {
    text = box.decrypt(check);
  } catch {
    // Same key id, another key (ids are 8 hex digits of the key's hash), or a check altered in the database.
  }
  if (text !== CHECK_TEXT) throw lacking(keyId, box, source);
  return { keyId, recorded };
}

const keyFile = (source: KeySource) => join(source.dataDir, "encryption.key");

function lacking(keyId: string, box: SecretBox, source: KeySource): KeyMismatchError {
  const own = source.encryptionKey ? "WEFT_ENCRYPTION_KEY" : keyFile(source);
  return new KeyMismatchError(
    keyId,
    `this instance does not hold encryption key ${keyId}, which the secrets in the shared database are encrypted with (its own key is ${box.keyId}, from ${own}). Every instance of a cluster needs the same key: copy encryption.key from the data directory of an instance that runs into ${source.dataDir} (replacing the one there), or set WEFT_ENCRYPTION_KEY to the key the other instances use; then start it again. Nothing was written to the database`,
  );
}

function writesAnother(keyId: string, box: SecretBox, source: KeySource): KeyMismatchError {
  const own = source.encryptionKey ? "WEFT_ENCRYPTION_KEY" : keyFile(source);
  return new KeyMismatchError(
    keyId,
    `this instance would encrypt new secrets with key ${box.keyId} (from ${own}), but the secrets in the shared database use key ${keyId}, which it holds only as a previous key; the other instances could not read what it wrote. Start it with the cluster's key (WEFT_ENCRYPTION_KEY, or its encryption.key copied into ${source.dataDir}); to move the cluster to a new key, stop every instance and run weft keys rotate (docs/connections.md). Nothing was written to the database`,
  );
}
