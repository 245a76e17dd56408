/**
 * One encryption key per cluster (src/core/key-check.ts): the database records the key its secrets use, an
 * instance with another key is refused naming the key it lacks and how to get it, and the record follows a
 * rotation. On any instance, a secret it cannot decrypt answers ENCRYPTION_KEY_MISSING in the envelope, never
 * INTERNAL. (`weft serve` applies the check on a shared database only: test/cluster/encryption-key.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { rotateKeys } from "../../src/core/connections/key-rotation";
import { secretBox } from "../../src/core/crypto";
import { checkClusterKey, KeyMismatchError } from "../../src/core/key-check";
import { loadConfig } from "../../src/config";
import { storageOf } from "../../src/store/storage";
import { createLogger } from "../../src/http/logger";
import { ROOT_TOKEN, testApp, type TestApp } from "../support/app";
import { registerTestPieces } from "./support/flow";

const CLUSTER_KEY = "the-cluster-key-0123456789abcdefghijkl";
const OTHER_KEY = "another-instance-key-9876543210zyxwvuts";

/** A box as an instance with these keys holds it. */
const boxOf = (t: TestApp, encryptionKey: string, previousKeys: string[] = []) => secretBox({ dataDir: t.dataDir, encryptionKey, previousKeys });

/** What checkClusterKey threw, or null when it let the instance start. */
async function refusal(run: () => Promise<unknown>): Promise<KeyMismatchError | null> {
  try {
    await run();
    return null;
  } catch (error) {
    if (error instanceof KeyMismatchError) return error;
    throw error;
  }
}

describe("the cluster's encryption key, checked at start", () => {
  test("the first instance records its key; another key is refused naming the key it lacks and the two ways to get it", async () => {
    const t = await testApp({ WEFT_ENCRYPTION_KEY: CLUSTER_KEY });
    const cluster = boxOf(t, CLUSTER_KEY);
    expect(await checkClusterKey(storageOf(t.db), cluster, { encryptionKey: CLUSTER_KEY, dataDir: t.dataDir })).toEqual({
      keyId: cluster.keyId,
      recorded: true,
    });
    // The next instance with the same key starts, recording nothing.
    expect(await checkClusterKey(storageOf(t.reopen()), cluster, { encryptionKey: CLUSTER_KEY, dataDir: "/srv/b" })).toEqual({
      keyId: cluster.keyId,
      recorded: false,
    });

    const other = boxOf(t, OTHER_KEY);
    const refused = await refusal(() => checkClusterKey(storageOf(t.reopen()), other, { dataDir: "/srv/b" }));
    expect(refused?.clusterKeyId).toBe(cluster.keyId);
    expect(refused?.message).toContain(`does not hold encryption key ${cluster.keyId}`);
    expect(refused?.message).toContain(`its own key is ${other.keyId}, from /srv/b/encryption.key`);
    expect(refused?.message).toContain("copy encryption.key from the data directory of an instance that runs into /srv/b");
    expect(refused?.message).toContain("or set WEFT_ENCRYPTION_KEY to the key the other instances use");
  });

  test("an instance holding the cluster's key only as a previous one is refused: the others could not read what it wrote", async () => {
    const t = await testApp({ WEFT_ENCRYPTION_KEY: CLUSTER_KEY });
    await checkClusterKey(storageOf(t.db), boxOf(t, CLUSTER_KEY), { encryptionKey: CLUSTER_KEY, dataDir: t.dataDir });
    const moving = boxOf(t, OTHER_KEY, [CLUSTER_KEY]);
    const refused = await refusal(() => checkClusterKey(storageOf(t.reopen()), moving, { encryptionKey: OTHER_KEY, dataDir: t.dataDir }));
    expect(refused?.clusterKeyId).toBe(boxOf(t, CLUSTER_KEY).keyId);
    expect(refused?.message).toContain(`would encrypt new secrets with key ${moving.keyId} (from WEFT_ENCRYPTION_KEY)`);
    expect(refused?.message).toContain("stop every instance and run weft keys rotate");
  });

  test("a database whose secrets predate the check: an instance without their key is refused before it records its own", async () => {
    const t = await testApp({ WEFT_ENCRYPTION_KEY: CLUSTER_KEY });
    registerTestPieces(t);
    expect((await t.req("POST", "/api/connections", { body: { pieceId: "test-apikey", name: "k", apiKey: "sk-live" } })).status).toBe(201);
    const other = boxOf(t, OTHER_KEY);
    expect((await refusal(() => checkClusterKey(storageOf(t.reopen()), other, { dataDir: t.dataDir })))?.clusterKeyId).toBe(boxOf(t, CLUSTER_KEY).keyId);
    // Refused without recording: the instance with the secrets' key records it afterwards.
    expect((await checkClusterKey(storageOf(t.db), boxOf(t, CLUSTER_KEY), { encryptionKey: CLUSTER_KEY, dataDir: t.dataDir })).recorded).toBe(true);
  });

  test("weft keys rotate moves the record with the secrets: the new key starts, the old one is refused", async () => {
    const t = await testApp({ WEFT_ENCRYPTION_KEY: CLUSTER_KEY });
    await checkClusterKey(storageOf(t.db), boxOf(t, CLUSTER_KEY), { encryptionKey: CLUSTER_KEY, dataDir: t.dataDir });
    const report = await rotateKeys(t.deps.storage, loadConfig({ WEFT_DATA_DIR: t.dataDir, WEFT_ENCRYPTION_KEY: OTHER_KEY }), {
      WEFT_ENCRYPTION_KEY_PREVIOUS: CLUSTER_KEY,
    });
    expect(report.unreadable).toBe(0);
    expect(await checkClusterKey(storageOf(t.reopen()), boxOf(t, OTHER_KEY), { encryptionKey: OTHER_KEY, dataDir: t.dataDir })).toEqual({
      keyId: report.keyId,
      recorded: false,
    });
    expect(
      (await refusal(() => checkClusterKey(storageOf(t.reopen()), boxOf(t, CLUSTER_KEY), { encryptionKey: CLUSTER_KEY, dataDir: t.dataDir })))?.clusterKeyId,
    ).toBe(report.keyId);
  });
});

describe("a secret this server cannot decrypt", () => {
  test("answers ENCRYPTION_KEY_MISSING naming the key and what to do, never INTERNAL", async () => {
    const t = await testApp({ WEFT_ENCRYPTION_KEY: CLUSTER_KEY });
    registerTestPieces(t);
    const made = await t.req("POST", "/api/connections", { body: { pieceId: "test-apikey", name: "k", apiKey: "sk-live" } });
    expect(made.status).toBe(201);
    // The same database seen by a server with another key (a lost key file, a second instance set up without it).
    const config = loadConfig({ WEFT_DATA_DIR: t.dataDir, WEFT_ENCRYPTION_KEY: OTHER_KEY, WEFT_LOG_LEVEL: "silent", WEFT_RATE_LIMIT: "0", WEFT_WORKERS: "1" });
    const other = createApp({ config, db: t.reopen(), log: createLogger("silent"), pieces: t.deps.pieces });
    const res = await other.app.handle(
      new Request(`http://localhost/api/connections/${made.body.data.id}`, { headers: { authorization: `Bearer ${ROOT_TOKEN}` } }),
    );
    const body = (await res.json()) as { error: { code: string; message: string; details: unknown } };
    expect(res.status).toBe(500);
    const clusterKeyId = boxOf(t, CLUSTER_KEY).keyId;
    expect(body.error.code).toBe("ENCRYPTION_KEY_MISSING");
    expect(body.error.details).toEqual({ keyId: clusterKeyId, serverKeyId: other.deps.secrets.keyId });
    expect(body.error.message).toContain(`encrypted with key ${clusterKeyId}, which this server does not hold`);
    expect(body.error.message).toContain("copy encryption.key from the data directory of the server that stored the secret, or set WEFT_ENCRYPTION_KEY");
  });
});
