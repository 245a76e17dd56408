/**
 * The fleet registry (GET /api/fleet): a serving instance registers with its host, pid, version and pieces and
 * renews its heartbeat; a clean stop leaves the registry. On one PostgreSQL database, two real `weft serve`
 * processes see each other; a SIGKILLed one shows as not alive once three heartbeats are missed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../support/app";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

describe("the fleet registry, in one process", () => {
  test("a started instance lists itself with its pieces; a clean stop removes it; reading takes workspace:admin", async () => {
    const t = await testApp();
    expect((await t.req("GET", "/api/fleet")).body.data).toEqual([]);
    await t.deps.fleet.start();
    try {
      const [self, ...others] = (await t.req("GET", "/api/fleet")).body.data;
      expect(others).toEqual([]);
      expect(self).toMatchObject({ pid: process.pid, role: "all", alive: true, self: true });
      expect(self.pieces).toContainEqual({ id: "data", version: expect.any(String) });
      expect(Date.parse(self.lastHeartbeatAt)).toBeGreaterThanOrEqual(Date.parse(self.startedAt));

      const reader = (await t.req("POST", "/api/tokens", { body: { name: "reader", scopes: ["workflow:read"] } })).body.data.token;
      const refused = await t.req("GET", "/api/fleet", { token: reader });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain("workspace:admin");
    } finally {
      await t.deps.fleet.stop();
    }
    expect((await t.req("GET", "/api/fleet")).body.data).toEqual([]);
  });
});

describe.skipIf(!postgresBinaries())("the fleet registry, two instances on one PostgreSQL database", () => {
  const servers: ServerHandle[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop().catch(() => undefined);
  });

  test("each lists both; a SIGKILLed one is shown not alive after three missed heartbeats; a clean stop leaves", async () => {
    const { url } = await networkPostgresDatabase();
    const env = { WEFT_DATABASE_URL: url, WEFT_HEARTBEAT_SECONDS: "1", WEFT_LOG_LEVEL: "warn" };
    const a = await startServer({ env });
    servers.push(a);
    // One database, one encryption key: the second instance's data dir holds the first one's key.
    const dirB = mkdtempSync(join(tmpdir(), "weft-fleet-"));
    copyFileSync(join(a.dataDir, "encryption.key"), join(dirB, "encryption.key"));
    const b = await startServer({ env, dataDir: dirB });
    servers.push(b);

    const fleetOf = async (server: ServerHandle) => ((await (await server.fetch("/api/fleet")).json()) as { data: any[] }).data;
    const seenByA = await fleetOf(a);
    const seenByB = await fleetOf(b);
    expect(seenByA.map((i) => i.pid).sort()).toEqual([a.proc.pid, b.proc.pid].sort());
    expect(seenByB.map((i) => i.id).sort()).toEqual(seenByA.map((i) => i.id).sort());
    expect(seenByA.filter((i) => i.self).map((i) => i.pid)).toEqual([a.proc.pid]);
    expect(seenByA.every((i) => i.alive)).toBe(true);

    await b.stop("SIGKILL");
    let dead: any;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(250)) {
      dead = (await fleetOf(a)).find((i) => i.pid === b.proc.pid);
      if (dead && !dead.alive) break;
    }
    expect(dead).toMatchObject({ alive: false, self: false });

    // A third instance that stops cleanly leaves the registry.
    const dirC = mkdtempSync(join(tmpdir(), "weft-fleet-"));
    copyFileSync(join(a.dataDir, "encryption.key"), join(dirC, "encryption.key"));
    const c = await startServer({ env, dataDir: dirC });
    expect((await fleetOf(a)).some((i) => i.pid === c.proc.pid)).toBe(true);
    await c.stop("SIGTERM");
    expect((await fleetOf(a)).some((i) => i.pid === c.proc.pid)).toBe(false);
  }, 60_000);
});
