/** `weft keys rotate`: every encrypted value moves to the new key; nothing becomes unreadable on the way. */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createApp } from "../../src/app";
import { countBlobsByKey, keyringOptions, rotateKeys } from "../../src/core/connections/key-rotation";
import { secretBox } from "../../src/core/crypto";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/http/logger";
import { testApp, type TestApp } from "../support/app";
import { postgresClient } from "../support/postgres-storage";
import { storedText } from "../support/stored-text";
import { registerTestPieces } from "./support/flow";

const ROOT = resolve(import.meta.dir, "../..");

/**
 * A table of another module, holding a secret embedded in JSON, written and read with the test's own SQL: on
 * SQLite through the app's connection (read: `db`, a restarted app's), on PostgreSQL through the test's client.
 */
async function putOtherModuleDoc(t: TestApp, doc: string): Promise<void> {
  if (!t.databaseUrl) {
    t.db.run("CREATE TABLE other_module (doc TEXT)");
    t.db.run("INSERT INTO other_module VALUES (?)", [doc]);
    return;
  }
  const c = postgresClient(t.databaseUrl);
  await c.run("CREATE TABLE other_module (doc TEXT)");
  await c.run("INSERT INTO other_module VALUES ($1)", [doc]);
}

async function otherModuleDoc(t: TestApp, db: TestApp["db"]): Promise<string> {
  if (!t.databaseUrl) return (db.query("SELECT doc FROM other_module").get() as { doc: string }).doc;
  return (await postgresClient(t.databaseUrl).get<{ doc: string }>("SELECT doc FROM other_module"))!.doc;
}

async function withSecrets(env: Record<string, string> = {}) {
  const t = await testApp(env);
  registerTestPieces(t);
  const key = await t.req("POST", "/api/connections", { body: { pieceId: "test-apikey", name: "k", apiKey: "rotating-api-key" } });
  const custom = await t.req("POST", "/api/connections", {
    body: { pieceId: "test-custom", name: "c", values: { subdomain: "acme", token: "rotating-custom-token" } },
  });
  // Another module's secret, embedded in JSON: the rotation finds blobs wherever they are.
  await putOtherModuleDoc(t, JSON.stringify({ token: t.deps.secrets.encrypt("other-secret") }));
  return { t, keyId: key.body.data.id as string, customId: custom.body.data.id as string, workspaceId: key.body.data.workspaceId as string };
}

/** A fresh app on the same data dir, store and config: what the server sees after a restart. */
function restart(t: TestApp, env: Record<string, string> = {}) {
  const config = loadConfig({ WEFT_DATA_DIR: t.dataDir, WEFT_LOG_LEVEL: "silent", ...env });
  const db = t.reopen();
  const app = createApp({ config, db, log: createLogger("silent"), pieces: t.deps.pieces });
  return { ...app, db };
}

describe("weft keys rotate", () => {
  test("key file: a new key, every value re-encrypted, the old key gone", async () => {
    const { t, keyId, workspaceId } = await withSecrets();
    const oldKeyId = t.deps.secrets.keyId;
    const oldMaterial = readFileSync(join(t.dataDir, "encryption.key"), "utf8").trim();
    const before = countBlobsByKey(await storedText(t));
    expect(before[oldKeyId]).toBeGreaterThanOrEqual(3);

    const report = await rotateKeys(t.deps.storage, t.config);
    expect(report.keyId).not.toBe(oldKeyId);
    expect(report.unreadable).toBe(0);
    expect(report.rewritten).toBe(before[oldKeyId]!);
    expect(readFileSync(join(t.dataDir, "encryption.key"), "utf8").trim()).not.toBe(oldMaterial);
    expect(existsSync(join(t.dataDir, "encryption.key.previous"))).toBe(false);
    expect(countBlobsByKey(await storedText(t))).toEqual({ [report.keyId]: before[oldKeyId]! });

    const after = restart(t);
    expect(after.deps.secrets.keyId).toBe(report.keyId);
    expect(await after.deps.connections.resolveConnectionAuth({ workspaceId, connectionId: keyId, pieceId: "test-apikey" })).toEqual({
      kind: "api_key",
      apiKey: "rotating-api-key",
    });
    const doc = JSON.parse(await otherModuleDoc(t, after.db));
    expect(after.deps.secrets.decrypt(doc.token)).toBe("other-secret");
    // The old key alone reads nothing any more.
    const oldBox = secretBox({ encryptionKey: oldMaterial, dataDir: t.dataDir });
    expect(() => oldBox.decrypt(doc.token)).toThrow();
    after.db.close();
  });

  test("a rotation interrupted after the key file was replaced leaves every value readable", async () => {
    const { t, keyId, workspaceId } = await withSecrets();
    const oldMaterial = readFileSync(join(t.dataDir, "encryption.key"), "utf8").trim();
    // The first two steps of a rotation, then a "crash" before the database is rewritten.
    writeFileSync(join(t.dataDir, "encryption.key.previous"), oldMaterial + "\n", { mode: 0o600 });
    writeFileSync(join(t.dataDir, "encryption.key"), Buffer.alloc(32, 7).toString("base64") + "\n", { mode: 0o600 });
    const after = restart(t);
    expect(await after.deps.connections.resolveConnectionAuth({ workspaceId, connectionId: keyId, pieceId: "test-apikey" })).toEqual({
      kind: "api_key",
      apiKey: "rotating-api-key",
    });
    // Running the rotation again finishes the job.
    const report = await rotateKeys(after.deps.storage, after.deps.config);
    expect(report.unreadable).toBe(0);
    expect(existsSync(join(t.dataDir, "encryption.key.previous"))).toBe(false);
    after.db.close();
  });

  test("WEFT_ENCRYPTION_KEY: the operator's new key, with the old one in WEFT_ENCRYPTION_KEY_PREVIOUS", async () => {
    const oldKey = "old-operator-key-0123456789abcdefghij";
    const newKey = "new-operator-key-9876543210zyxwvutsrq";
    const { t, customId, workspaceId } = await withSecrets({ WEFT_ENCRYPTION_KEY: oldKey });
    const config = loadConfig({ WEFT_DATA_DIR: t.dataDir, WEFT_ENCRYPTION_KEY: newKey });
    const report = await rotateKeys(t.deps.storage, config, { WEFT_ENCRYPTION_KEY_PREVIOUS: oldKey });
    expect(report.unreadable).toBe(0);
    expect(report.keySource).toBe("WEFT_ENCRYPTION_KEY");
    expect(Object.keys(countBlobsByKey(await storedText(t)))).toEqual([report.keyId]);
    const after = restart(t, { WEFT_ENCRYPTION_KEY: newKey });
    expect(await after.deps.connections.resolveConnectionAuth({ workspaceId, connectionId: customId, pieceId: "test-custom" })).toEqual({
      kind: "custom",
      values: { subdomain: "acme", token: "rotating-custom-token" },
    });
    after.db.close();
    // Without the previous key the old values are reported unreadable, never silently lost.
    const { t: t2 } = await withSecrets({ WEFT_ENCRYPTION_KEY: oldKey });
    expect((await rotateKeys(t2.deps.storage, loadConfig({ WEFT_DATA_DIR: t2.dataDir, WEFT_ENCRYPTION_KEY: newKey }), {})).unreadable).toBeGreaterThanOrEqual(
      3,
    );
  });

  test("the values are rewritten all or none: a failure part way leaves every one as it was", async () => {
    const { t } = await withSecrets();
    const before = countBlobsByKey(await storedText(t));
    expect(Object.values(before).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
    let seen = 0;
    const failing = t.deps.storage.atomically((unit) =>
      unit.encryptedValues.rewriteAll((blob) => {
        if (++seen === 3) throw new Error("disk on fire");
        return blob.replace(/^v1:[0-9a-f]{8}:/, "v1:00000000:");
      }),
    );
    await expect(failing).rejects.toThrow("disk on fire");
    expect(seen).toBe(3);
    expect(countBlobsByKey(await storedText(t))).toEqual(before);
    // Unchanged blobs are counted as kept, and nothing is written.
    expect(await t.deps.storage.atomically((unit) => unit.encryptedValues.rewriteAll((blob) => blob))).toMatchObject({ rewritten: 0, rows: 0 });
    expect(countBlobsByKey(await storedText(t))).toEqual(before);
  });

  test("keyringOptions reads the previous-keys file and WEFT_ENCRYPTION_KEY_PREVIOUS", async () => {
    const t = await testApp();
    writeFileSync(join(t.dataDir, "encryption.key.previous"), "a".repeat(40) + "\n" + "b".repeat(40) + "\n");
    expect(keyringOptions({ dataDir: t.dataDir }).previousKeys).toEqual(["a".repeat(40), "b".repeat(40)]);
    const withEnv = keyringOptions({ dataDir: t.dataDir, encryptionKey: "c".repeat(40) }, { WEFT_ENCRYPTION_KEY_PREVIOUS: "d".repeat(40) });
    expect(withEnv.previousKeys).toContain("d".repeat(40));
  });

  test("the CLI command rotates and reports", async () => {
    const { t } = await withSecrets();
    if (!t.databaseUrl) t.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const oldKeyId = t.deps.secrets.keyId;
    const proc = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), "keys", "rotate"], {
      cwd: ROOT,
      env: { ...process.env, WEFT_DATA_DIR: t.dataDir, WEFT_LOG_LEVEL: "silent", ...(t.databaseUrl ? { WEFT_DATABASE_URL: t.databaseUrl } : {}) },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(proc.exitCode).toBe(0);
    expect(proc.stdout.toString()).toMatch(/re-encrypted \d+ value\(s\)/);
    expect(Object.keys(countBlobsByKey(await storedText(t)))).not.toContain(oldKeyId);
  });
});
