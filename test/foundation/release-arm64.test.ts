/**
 * The linux-arm64 release binary (a Raspberry Pi's), cross-compiled here and run under Debian's qemu-user with
 * the arm64 C library of libc6-arm64-cross as its root (the binary links glibc dynamically). It serves, answers
 * /healthz, runs a webhook workflow on its worker threads, writes a backup on its backup thread, and runs user code
 * in its sandbox process.
 *
 * Under qemu-user without binfmt_misc (none here) an arm64 process cannot start an arm64 program: the kernel
 * does not know the format. So the server's own restart with the runtime tuned is skipped (src/runtime-tuning.ts
 * falls back to the runtime's defaults), and a `code` step inside a workflow fails, since the server runs it in
 * a `weft __sandbox` child of its own executable (pieces/code). That child is started under qemu by the test
 * instead, as the server would start it; on a real arm64 machine the server starts it itself.
 * Skipped on the PostgreSQL pass of CI: the emulated server stores in SQLite either way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ok, publishWebhook } from "../support/cluster";
import { testStorage } from "../support/postgres-storage";
import { startServer, type ServerHandle } from "../support/server";

const ROOT = resolve(import.meta.dir, "../..");
const QEMU = "/usr/bin/qemu-aarch64";
/** libc6-arm64-cross installs the arm64 glibc and its loader here. */
const SYSROOT = "/usr/aarch64-linux-gnu";
const CAN_EMULATE = existsSync(QEMU) && existsSync(join(SYSROOT, "lib/ld-linux-aarch64.so.1"));
/** Spawn → /healthz took 6–30 s under qemu on 2 cores shared with other jobs (load average 8–20, 2026-11-29). */
const START_TIMEOUT_MS = 120_000;

if (!CAN_EMULATE) console.log("linux-arm64 binary tests skipped: install the Debian packages qemu-user and libc6-arm64-cross");
const skip = !CAN_EMULATE || testStorage() === "postgres";

let binary: string;
let server: ServerHandle;
let startMs: number;
const emulated = (...args: string[]) => [QEMU, "-L", SYSROOT, binary, ...args];

beforeAll(async () => {
  if (skip) return;
  binary = join(mkdtempSync(join(tmpdir(), "weft-arm64-")), "weft");
  // The first build for the target downloads its runtime from the npm registry (build.ts).
  const built = Bun.spawnSync([process.execPath, "build.ts", binary, "--target", "linux-arm64"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`build failed: ${built.stderr.toString()}`);
  const started = performance.now();
  server = await startServer({ command: emulated("serve"), cwd: mkdtempSync(join(tmpdir(), "weft-arm64-alone-")), timeoutMs: START_TIMEOUT_MS });
  startMs = performance.now() - started;
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describe.skipIf(skip)("linux-arm64 binary under qemu-user", () => {
  test("is an arm64 executable that names its build", () => {
    const header = readFileSync(binary).subarray(0, 20);
    // ELF, machine 183 (EM_AARCH64) at offset 18.
    expect([...header.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    expect(header[18] | (header[19]! << 8)).toBe(183);
    const version = Bun.spawnSync(emulated("version"), { stdout: "pipe", stderr: "pipe", timeout: 60_000 });
    expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+ \(commit [0-9a-f]+(-dirty)?, linux-arm64\)$/);
  }, 90_000);

  test("starts, answers /healthz and serves the UI from inside the binary", async () => {
    console.log(`linux-arm64 under qemu-user: spawn → /healthz ${Math.round(startMs)} ms`);
    const res = await server.fetch("/healthz", { token: null });
    expect(res.status).toBe(200);
    expect((await res.json()).data.status).toBe("ok");
    const ui = await server.fetch("/", { token: null });
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain("data-weft-ui");
  });

  test("writes a backup on its backup thread, and the emulated `weft backup --verify` accepts it", async () => {
    const res = await server.fetch("/api/backups", { method: "POST" });
    expect(res.status).toBe(201);
    const { name } = ((await res.json()) as { data: { name: string } }).data;
    const verify = Bun.spawnSync(emulated("backup", "--verify", join(server.dataDir, "backups", name)), { stdout: "pipe", stderr: "pipe", timeout: 60_000 });
    expect({ exitCode: verify.exitCode, stderr: verify.stderr.toString() }).toEqual({ exitCode: 0, stderr: "" });
    expect(verify.stdout.toString()).toContain(name);
  }, 90_000);

  test("runs a webhook workflow and answers with its reply", async () => {
    const token = await publishWebhook(
      server,
      "arm64",
      {
        name: "greet",
        type: "PIECE",
        pieceId: "data",
        actionId: "set_fields",
        config: { fields: { greeting: "hello {{trigger.body.name}}", doubled: "{{trigger.body.n * 2}}" } },
        // Not pure: runs on a worker thread, whose entry must resolve inside the arm64 binary.
        nextAction: {
          name: "remember",
          type: "PIECE",
          pieceId: "store",
          actionId: "put",
          config: { key: "last", value: "{{greet.output.doubled}}" },
          nextAction: {
            name: "reply",
            type: "PIECE",
            pieceId: "webhook",
            actionId: "respond",
            config: { status: 200, body: { greeting: "{{greet.output.greeting}}", stored: "{{remember.output.value}}" } },
          },
        },
      },
      { reply: "respond_action" },
    );
    const res = await fetch(`${server.url}/webhook/${token}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Pi", n: 21 }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ greeting: "hello Pi", stored: 42 });
    const runs = (await ok(server, "GET", "/api/runs?environment=all")).data;
    expect(runs[0]?.status).toBe("completed");
  }, 60_000);

  // A code step runs in `weft __sandbox`, a child the server starts from its own executable, which qemu-user
  // cannot (see the top): here the arm64 child is started under qemu as the server would, and runs a call.
  test("runs a code step's call in its sandbox process (`weft __sandbox`)", async () => {
    const child = Bun.spawn(emulated("__sandbox"), { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    try {
      const request = {
        id: 1,
        code: "return { tripled: input.n * 3 };",
        input: { n: 42 },
        timeoutMs: 5000,
        memoryBytes: 64 * 1024 * 1024,
      };
      child.stdin.write(`${JSON.stringify(request)}\n`);
      child.stdin.flush();
      const lines: any[] = [];
      let buffer = "";
      for await (const chunk of child.stdout) {
        buffer += new TextDecoder().decode(chunk);
        for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
          lines.push(JSON.parse(buffer.slice(0, at)));
          buffer = buffer.slice(at + 1);
        }
        if (lines.some((line) => line.id === 1)) break;
      }
      expect(lines[0]).toMatchObject({ ready: true });
      expect(lines.find((line) => line.id === 1)?.result).toMatchObject({ ok: true, value: { tripled: 126 } });
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
  }, 60_000);
});
