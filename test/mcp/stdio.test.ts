import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Identity } from "../../src/core/identity";
import { openDatabase } from "../../src/store/sqlite/db";
import { storageOf } from "../../src/store/storage";
import { ROOT_TOKEN } from "../support/app";
import { freePort, startServer, type ServerHandle } from "../support/server";
import { buildAndRunWebhookToHttp, echoServer } from "./agent";
import { stdioClient } from "./client";

/** A data dir holding the bootstrap token and a token limited to piece:read. */
async function dataDirWithTokens() {
  const dataDir = mkdtempSync(join(tmpdir(), "weft-mcp-stdio-"));
  const db = openDatabase(join(dataDir, "weft.db"), { synchronous: "NORMAL" });
  const identity = new Identity(storageOf(db));
  await identity.bootstrap(ROOT_TOKEN);
  const { orgId, workspaceId } = await identity.ensureOrg();
  const reader = (await identity.createToken({ orgId, workspaceId, name: "reader", scopes: ["piece:read"], createdBy: null })).token;
  db.close();
  return { dataDir, reader };
}

describe("weft mcp on its own data directory (stdio)", () => {
  const echo = echoServer();
  let env: Record<string, string>;
  let reader: string;
  let mcp: Awaited<ReturnType<typeof stdioClient>>;

  beforeAll(async () => {
    const made = await dataDirWithTokens();
    reader = made.reader;
    // A free port: no server answers there, so `weft mcp` opens the data directory itself.
    env = { WEFT_DATA_DIR: made.dataDir, WEFT_PORT: String(await freePort()), WEFT_LOG_LEVEL: "info", WEFT_WORKERS: "1", WEFT_ALLOW_CIDRS: "127.0.0.0/8" };
    mcp = await stdioClient({ ...env, WEFT_TOKEN: ROOT_TOKEN });
  });
  afterAll(async () => {
    await mcp?.close();
    echo.stop(true);
  });

  test("the agent script builds, validates, publishes, runs and reads a webhook → http.send_request workflow", async () => {
    const { run } = await buildAndRunWebhookToHttp(mcp, `http://127.0.0.1:${echo.port}/hook`);
    expect(run.triggerType).toBe("mcp");
    // Logs went to stderr; stdout carried only JSON-RPC (the client would have failed otherwise).
    expect(mcp.stderr()).not.toContain('"level":"error"');
  });

  test("publishing a callable workflow notifies the session that the tool list changed, and the tool answers", async () => {
    let changed = 0;
    mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed++;
    });
    const created = await mcp.call("create_workflow", {
      name: "Double it",
      definition: {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "callable",
          pieceId: "subflows",
          actionId: "callable",
          config: { fields: [{ name: "n", type: "number", required: true }] },
          nextAction: { name: "answer", type: "PIECE", pieceId: "subflows", actionId: "return_response", config: { value: "{{ trigger.body.n * 2 }}" } },
        },
      },
    });
    await mcp.call("publish_workflow", { id: created.body.data.id });
    const deadline = Date.now() + 5_000;
    while (changed === 0 && Date.now() < deadline) await Bun.sleep(50);
    expect(changed).toBeGreaterThan(0);
    expect((await mcp.tools()).map((x) => x.name)).toContain("double_it");
    const answer = await mcp.call("double_it", { n: 21 });
    expect(answer.body.data).toBe(42);
  });

  test("a second weft mcp on the same data directory, while the first still runs, refuses to start and names its pid", async () => {
    const second = Bun.spawn([process.execPath, join(import.meta.dir, "../../src/main.ts"), "mcp"], {
      env: { PATH: process.env.PATH ?? "", ...env, WEFT_TOKEN: ROOT_TOKEN },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await second.exited).toBe(2);
    expect(await new Response(second.stderr).text()).toMatch(/data directory .* is in use by another weft process \(pid \d+\)/);
    // Two engines on one database would execute the same runs: the agents after this one get it in turn.
    await mcp.close();
  }, 20_000);

  test("a token without the scope gets the route's FORBIDDEN as a tool error", async () => {
    const limited = await stdioClient({ ...env, WEFT_TOKEN: reader });
    try {
      expect((await limited.call("list_pieces", {})).isError).toBe(false);
      const answer = await limited.call("list_workflows", {});
      expect(answer.isError).toBe(true);
      expect(answer.body.error.code).toBe("FORBIDDEN");
      expect(answer.body.error.message).toContain('"workflow:read"');
    } finally {
      await limited.close();
    }
  });

  test("a missing or unknown WEFT_TOKEN stops with a clear message", async () => {
    for (const token of [undefined, "weft_not_a_real_token_000"]) {
      const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../src/main.ts"), "mcp"], {
        env: { PATH: process.env.PATH ?? "", ...env, ...(token ? { WEFT_TOKEN: token } : {}) },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(await proc.exited).toBe(2);
      expect(await new Response(proc.stderr).text()).toContain("WEFT_TOKEN");
    }
  });
});

describe("weft mcp relaying to a running server (stdio → Streamable HTTP)", () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.stop());

  test("with WEFT_URL it relays to {url}/mcp", async () => {
    const mcp = await stdioClient({ WEFT_URL: server.url, WEFT_TOKEN: server.token, WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-unused-")) });
    try {
      const created = await mcp.call("create_workflow", { name: "Relayed" });
      expect(created.isError).toBe(false);
      // The workflow lives in the server's database, not in a second one.
      const res = await server.fetch(`/api/workflows/${created.body.data.id}`);
      expect(res.status).toBe(200);
      expect(mcp.stderr()).toContain(`relaying to ${server.url}/mcp`);
    } finally {
      await mcp.close();
    }
  });

  test("without WEFT_URL it finds the server running at WEFT_HOST:WEFT_PORT instead of opening the data directory", async () => {
    const mcp = await stdioClient({ WEFT_HOST: "127.0.0.1", WEFT_PORT: String(server.port), WEFT_TOKEN: server.token, WEFT_DATA_DIR: server.dataDir });
    try {
      expect((await mcp.tools()).map((x) => x.name)).toContain("run_workflow");
      expect(mcp.stderr()).toContain("relaying to");
    } finally {
      await mcp.close();
    }
  });

  test("a client that writes its requests and closes stdin still gets every answer", async () => {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "pipe", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]
      .map((m) => JSON.stringify(m) + "\n")
      .join("");
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../src/main.ts"), "mcp"], {
      env: { ...process.env, WEFT_URL: server.url, WEFT_TOKEN: server.token, WEFT_LOG_LEVEL: "warn" },
      stdin: new Blob([lines]),
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const answers = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    expect(answers.find((a) => a.id === 2).result.tools.map((t: { name: string }) => t.name)).toContain("run_workflow");
  });

  test("a refused token surfaces as an error to the desktop client", async () => {
    await expect(
      stdioClient({ WEFT_URL: server.url, WEFT_TOKEN: "weft_wrong_token_value_000", WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-unused-")) }),
    ).rejects.toThrow(/401|credential|Weft/);
  });
});
