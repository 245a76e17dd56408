/**
 * One encryption key per cluster, with real `weft serve` processes on one PostgreSQL database: a second
 * instance set up as the documented way does it but without the first one's key (its own data directory, no
 * WEFT_ENCRYPTION_KEY) refuses to start, naming the key it lacks and the two ways to give it that key, before
 * it registers; given the key either way, it joins and runs a step with a connection created on the first.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { secretBox } from "../../src/core/crypto";
import { clusterEnv, ok } from "../support/cluster";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

const servers: ServerHandle[] = [];
let echo: ReturnType<typeof Bun.serve> | undefined;
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  echo?.stop(true);
});

describe.skipIf(!postgresBinaries())("one encryption key per cluster", () => {
  test("an instance without the cluster's key refuses to start, saying which key and how; with it, it joins and uses a connection made elsewhere", async () => {
    // Records the header the step's connection adds (the run shows it masked, as every secret).
    const received: Array<string | null> = [];
    echo = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) => {
        received.push(request.headers.get("x-api-key"));
        return Response.json({ ok: true });
      },
    });
    const { url } = await networkPostgresDatabase();
    // Each instance keeps its key in its own data directory (encryption.key), as a new operator's would.
    const env = { ...clusterEnv(url, { WEFT_HEAP_TUNING: "off", WEFT_WORKERS: "1" }), WEFT_ENCRYPTION_KEY: "" };
    const start = async (options: { dataDir?: string; env?: Record<string, string> } = {}) => {
      const server = await startServer({ env: { ...env, ...options.env }, dataDir: options.dataDir });
      servers.push(server);
      return server;
    };
    const a = await start();
    const clusterKey = readFileSync(join(a.dataDir, "encryption.key"), "utf8").trim();
    const clusterKeyId = secretBox({ dataDir: a.dataDir }).keyId;

    const connection = await ok(a, "POST", "/api/connections", {
      pieceId: "http",
      name: "the API's key",
      values: { header_name: "X-Api-Key", header_value: "made-on-a" },
    });
    const step = {
      name: "call",
      type: "PIECE",
      pieceId: "http",
      actionId: "send_request",
      connectionId: connection.data.id,
      config: { method: "GET", url: `http://127.0.0.1:${echo.port}/`, auth_type: "connection", timeout_ms: 10_000 },
    };
    const workflow = await ok(a, "POST", "/api/workflows", {
      name: "uses the connection",
      definition: { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {}, nextAction: step } },
    });
    const runOn = async (server: ServerHandle) => (await ok(server, "POST", `/api/workflows/${workflow.data.id}/run?wait=10`, {})).data;
    expect((await runOn(a)).status).toBe("completed");
    expect(received).toEqual(["made-on-a"]);

    // Its own data directory and no WEFT_ENCRYPTION_KEY: a key of its own is generated, and the start refused.
    const dataDir = mkdtempSync(join(tmpdir(), "weft-key-"));
    const refused = await start({ dataDir }).then(
      () => "started",
      (error: Error) => error.message,
    );
    expect(refused).toContain("server exited with 2");
    expect(refused).toContain(`does not hold encryption key ${clusterKeyId}`);
    expect(refused).toContain(`copy encryption.key from the data directory of an instance that runs into ${dataDir}`);
    expect(refused).toContain("or set WEFT_ENCRYPTION_KEY to the key the other instances use");
    // Refused before it registered: the cluster never saw it.
    expect((await ok(a, "GET", "/api/fleet")).data).toHaveLength(1);

    // The first way: the key file copied over the one it generated.
    copyFileSync(join(a.dataDir, "encryption.key"), join(dataDir, "encryption.key"));
    const b = await start({ dataDir });
    // The second: WEFT_ENCRYPTION_KEY set to the cluster's key, in a data directory of its own.
    const c = await start({ env: { WEFT_ENCRYPTION_KEY: clusterKey } });
    expect((await ok(a, "GET", "/api/fleet")).data).toHaveLength(3);
    for (const server of [b, c]) expect((await runOn(server)).status).toBe("completed");
    expect(received).toEqual(["made-on-a", "made-on-a", "made-on-a"]);
  }, 60_000);
});
