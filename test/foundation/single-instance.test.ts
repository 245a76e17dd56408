/**
 * One data directory, one process; one port, one server. A second `weft serve` on a port in use or on a
 * data directory in use refuses to start with a message naming what to do; a lock left by a killed
 * process does not block the restart; `weft backup` still works beside a running server; and stopping
 * `npm start` with SIGTERM stops the server it started.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE, writeLockFile } from "../../src/store/data-dir-lock";
import { freePort, startServer } from "../support/server";

const ROOT = resolve(import.meta.dir, "../..");
const weft = (args: string[], env: Record<string, string>) =>
  Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });

async function portAnswers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

describe("one process per port and per data directory", () => {
  test("a second server on a port in use refuses to start and names the port; the first keeps all the calls", async () => {
    const first = await startServer();
    try {
      await expect(startServer({ env: { WEFT_PORT: String(first.port) } })).rejects.toThrow(
        new RegExp(`port ${first.port} on 127\\.0\\.0\\.1 is already in use.*WEFT_PORT`),
      );
      // Every call reaches the one server (with port sharing, some went to the other database and answered 401).
      const statuses = await Promise.all(Array.from({ length: 10 }, () => first.fetch("/api/auth/me").then((r) => r.status)));
      expect(statuses).toEqual(Array(10).fill(200));
    } finally {
      await first.stop();
    }
  }, 60_000);

  test("a second server on a data directory in use refuses to start and names the pid that holds it", async () => {
    const first = await startServer();
    try {
      const lock = readFileSync(join(first.dataDir, LOCK_FILE), "utf8").trim();
      expect(lock).toBe(String(first.proc.pid));
      await expect(startServer({ dataDir: first.dataDir })).rejects.toThrow(
        new RegExp(`data directory .* is in use by another weft process \\(pid ${first.proc.pid}\\)`),
      );
      // Offline and read-only commands still work beside it.
      const backup = weft(["backup", join(mkdtempSync(join(tmpdir(), "weft-bak-")), "copy.db")], { WEFT_DATA_DIR: first.dataDir });
      expect(backup.stderr.toString()).not.toContain("in use");
      expect(backup.exitCode).toBe(0);
      expect(weft(["version"], { WEFT_DATA_DIR: first.dataDir }).exitCode).toBe(0);
      expect((await first.fetch("/healthz")).status).toBe(200);
    } finally {
      await first.stop();
    }
    // A clean stop removes the lock.
    expect(existsSync(join(first.dataDir, LOCK_FILE))).toBe(false);
  }, 60_000);

  test("the lock of a killed process does not block the restart", async () => {
    const first = await startServer();
    await first.stop("SIGKILL");
    expect(existsSync(join(first.dataDir, LOCK_FILE))).toBe(true);
    const again = await startServer({ dataDir: first.dataDir });
    try {
      expect(readFileSync(join(first.dataDir, LOCK_FILE), "utf8").trim()).toBe(String(again.proc.pid));
      expect((await again.fetch("/api/auth/me")).status).toBe(200);
    } finally {
      await again.stop();
    }
  }, 60_000);

  test("the lock itself: exclusive while its holder runs, taken over when it is gone, released only by its holder", () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-lock-"));
    // A live process that is not us: the test runner's parent.
    writeLockFile(dir, process.ppid);
    expect(() => acquireDataDirLock(dir)).toThrow(DataDirLockedError);
    // A pid that does not run (beyond the kernel's pid range) is stale.
    writeLockFile(dir, 4_194_305);
    const lock = acquireDataDirLock(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    // Released only while it is still ours.
    const mine = acquireDataDirLock(dir);
    writeLockFile(dir, process.ppid);
    mine.release();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim()).toBe(String(process.ppid));
  });
});

describe("npm start", () => {
  test("SIGTERM to npm start stops the server: the port is free and no server process remains", async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), "weft-npm-"));
    const npm = Bun.spawn(["npm", "start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, WEFT_PORT: String(port), WEFT_DATA_DIR: dataDir, WEFT_HOST: "127.0.0.1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const deadline = Date.now() + 20_000;
    while (!(await portAnswers(port))) {
      if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`npm start did not serve on ${port}: ${await new Response(npm.stderr).text()}`);
      await Bun.sleep(100);
    }
    const server = Number(readFileSync(join(dataDir, LOCK_FILE), "utf8").trim());
    expect(server).toBeGreaterThan(0);
    npm.kill("SIGTERM");
    await npm.exited;
    const stopBy = Date.now() + 10_000;
    while ((await portAnswers(port)) && Date.now() < stopBy) await Bun.sleep(100);
    expect(await portAnswers(port)).toBe(false);
    let alive = true;
    try {
      process.kill(server, 0);
    } catch {
      alive = false;
    }
    expect(alive).toBe(false);
  }, 60_000);
});
