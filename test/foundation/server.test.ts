/** The real server process: CLI commands, configuration errors, structured logs, graceful shutdown. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startServer } from "../support/server";
import { Database } from "bun:sqlite";
import { HEAP_RAM_SIZE, RUNTIME_SETTINGS } from "../../src/runtime-tuning";
import { migrations } from "../../src/store/sqlite/migrations";

const ROOT = resolve(import.meta.dir, "../..");
const weft = (args: string[], env: Record<string, string> = {}) =>
  Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], { cwd: ROOT, env: { ...process.env, WEFT_LOG_LEVEL: "warn", ...env } });

describe("CLI", () => {
  test("token create prints a raw token once that then authenticates against the server", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-cli-"));
    const made = weft(["token", "create", "--name", "ci", "--scopes", "run:read,workspace:admin"], { WEFT_DATA_DIR: dataDir });
    expect(made.exitCode).toBe(0);
    const raw = made.stdout.toString().trim();
    expect(raw).toStartWith("weft_");
    const server = await startServer({ dataDir });
    try {
      const res = await server.fetch("/api/auth/me", { token: raw });
      expect(res.status).toBe(200);
      expect((await res.json()).data.scopes.sort()).toEqual(["run:read", "workspace:admin"]);
    } finally {
      await server.stop();
    }
  });

  test("token create refuses unknown scopes naming the legal ones", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-cli-"));
    const made = weft(["token", "create", "--name", "x", "--scopes", "workflow:fly"], { WEFT_DATA_DIR: dataDir });
    expect(made.exitCode).toBe(2);
    expect(made.stderr.toString()).toContain("workflow:read");
  });

  test("migrate applies migrations and reports the schema version; a second run is up to date", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-cli-"));
    const first = weft(["migrate"], { WEFT_DATA_DIR: dataDir });
    expect(first.exitCode).toBe(0);
    expect(first.stdout.toString()).toContain("applied migrations");
    const second = weft(["migrate"], { WEFT_DATA_DIR: dataDir });
    expect(second.stdout.toString()).toContain("up to date");
  });

  test("migrate announces an upgrade of a database that had a schema, with what its migrations do; a new one is just created", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-cli-"));
    const fresh = weft(["migrate"], { WEFT_DATA_DIR: dataDir });
    expect(fresh.stdout.toString()).not.toContain("upgrading");
    const older = mkdtempSync(join(tmpdir(), "weft-cli-"));
    const db = new Database(join(older, "weft.db"));
    for (const m of migrations.filter((m) => m.version < 18)) db.run(m.sql);
    db.run("PRAGMA user_version = 17");
    db.close();
    const upgraded = weft(["migrate"], { WEFT_DATA_DIR: older });
    expect(upgraded.exitCode).toBe(0);
    const [copied, ...announced] = upgraded.stdout.toString().split("\n");
    const latest = migrations.at(-1)!.version;
    const pending = migrations
      .filter((m) => m.version > 17)
      .map((m) => `${m.version} ${m.name}`)
      .join(", ");
    expect(copied).toStartWith(`copying the database at schema version 17 to ${join(older, "backups", `weft-schema-17-before-${latest}-`)}`);
    expect(copied).toEndWith(".db before upgrading it");
    expect(`${announced.join("\n")}`).toStartWith(
      `upgrading schema version 17 to ${latest} (${pending}); 18 compact-runs: rewrites every stored run once: ~11 s per million runs on 2 cores; 19 compact-runs-postgres: changes nothing on SQLite (PostgreSQL's runs are rewritten as SQLite's already are); 20 run-id-hash: changes nothing on SQLite (PostgreSQL's unique index of run ids becomes a smaller hash index); 21 run-sizes: changes nothing on SQLite (PostgreSQL rewrites its runs once, with fuller index pages and narrower columns); 22 duration-index: builds the index of sort=duration again: ~1 s per million runs on 2 cores; 24 run-durations: counts the runs per duration and builds the index of sort=duration again: ~11 s per million runs on 2 cores\n`,
    );
  });

  test("a database a newer weft migrated is refused by serve and migrate, naming both schema versions, and left as it was", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-cli-"));
    expect(weft(["migrate"], { WEFT_DATA_DIR: dataDir }).exitCode).toBe(0);
    const path = join(dataDir, "weft.db");
    const latest = migrations.at(-1)!.version;
    const newer = new Database(path);
    newer.run(`PRAGMA user_version = ${latest + 1}`);
    newer.close();
    for (const command of [["serve"], ["migrate"]]) {
      const res = weft(command, { WEFT_DATA_DIR: dataDir, WEFT_PORT: "0" });
      expect(res.exitCode).toBe(2);
      expect(res.stderr.toString()).toBe(
        `weft: the database ${path} is at schema version ${latest + 1}, newer than this weft knows (${latest}): run the weft version that wrote it, or a newer one\n`,
      );
    }
    const db = new Database(path, { readonly: true });
    expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: latest + 1 });
    db.close();
  });

  test("a bad configuration value stops start-up with a message naming the variable and the legal values", () => {
    const res = weft(["serve"], { WEFT_PORT: "eighty" });
    expect(res.exitCode).toBe(2);
    expect(res.stderr.toString()).toContain("WEFT_PORT");
    expect(res.stderr.toString()).toContain("0 to 65535");
    const level = weft(["serve"], { WEFT_LOG_LEVEL: "loud" });
    expect(level.stderr.toString()).toContain("debug, info, warn, error, silent");
  });

  test("unknown commands are refused with the list of commands", () => {
    const res = weft(["frobnicate"]);
    expect(res.exitCode).toBe(2);
    expect(res.stderr.toString()).toContain("serve, token create, migrate, version");
  });
});

describe("server process", () => {
  test("logs JSON lines and shuts down gracefully on SIGTERM, finishing in-flight requests", async () => {
    const server = await startServer();
    // A request whose body is still arriving when SIGTERM lands is in flight for certain.
    let sendRest!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":'));
        sendRest = () => {
          controller.enqueue(new TextEncoder().encode('"late"}'));
          controller.close();
        };
      },
    });
    const inflight = server.fetch("/api/workspaces", { method: "POST", headers: { "content-type": "application/json" }, body, duplex: "half" } as RequestInit);
    await Bun.sleep(200);
    server.proc.kill("SIGTERM");
    await Bun.sleep(200);
    sendRest();
    const res = await inflight;
    expect(res.status).toBe(201);
    const code = await server.proc.exited;
    expect(code).toBe(0);
    const lines = server
      .output()
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("{"));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.some((l) => JSON.parse(l).msg === "shutting down")).toBe(true);
  });
});

describe("request bodies over a real socket", () => {
  test("a body over WEFT_BODY_LIMIT answers 413 PAYLOAD_TOO_LARGE in the envelope, declared or chunked", async () => {
    const server = await startServer({ env: { WEFT_BODY_LIMIT: "4096" } });
    try {
      const json = { "content-type": "application/json" };
      const declared = await server.fetch("/api/workspaces", { method: "POST", headers: json, body: JSON.stringify({ name: "x".repeat(200_000) }) });
      expect(declared.status).toBe(413);
      expect((await declared.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
      const huge = await server.fetch("/api/workspaces", { method: "POST", headers: json, body: "x".repeat(8 * 1024 * 1024) });
      expect(huge.status).toBe(413);
      expect((await huge.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1024)));
          controller.close();
        },
      });
      const chunked = await server.fetch("/api/workspaces", { method: "POST", headers: json, body: chunks, duplex: "half" } as RequestInit);
      expect(chunked.status).toBe(413);
      expect((await chunked.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
      const fine = await server.fetch("/api/workspaces", { method: "POST", headers: json, body: JSON.stringify({ name: "ok" }) });
      expect(fine.status).toBe(201);
    } finally {
      await server.stop();
    }
  });
});

describe("runtime tuning (src/runtime-tuning.ts)", () => {
  const environOf = (pid: number) =>
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter((v) => v.startsWith("BUN_JSC_"))
      .sort();
  const tuned = (values: Record<string, string>) =>
    Object.entries({ ...RUNTIME_SETTINGS, ...values })
      .map(([name, value]) => `${name}=${value}`)
      .sort();

  test("serve restarts itself in place once with the server's runtime settings; an operator's values or WEFT_HEAP_TUNING=off are respected", async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("BUN_JSC_"))) as Record<string, string>;
    expect(RUNTIME_SETTINGS.BUN_JSC_forceRAMSize).toBe(HEAP_RAM_SIZE);
    const operator = { BUN_JSC_forceRAMSize: "536870912", BUN_JSC_thresholdForJITSoon: "500" };
    const cases: Array<[Record<string, string>, string[]]> = [
      [{}, tuned({})],
      [operator, tuned(operator)],
      [{ WEFT_HEAP_TUNING: "off" }, []],
    ];
    for (const [extra, expected] of cases) {
      const server = await startServer({ env: { ...env, ...extra } });
      try {
        expect((await server.fetch("/healthz", { token: null })).status).toBe(200);
        expect(environOf(server.proc.pid)).toEqual(expected);
      } finally {
        await server.stop();
      }
    }
  });
});
