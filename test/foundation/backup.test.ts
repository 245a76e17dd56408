/** `weft backup FILE`: a consistent copy taken while the server runs, which a fresh data directory starts from. */
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startServer } from "../support/server";

const ROOT = resolve(import.meta.dir, "../..");
const weft = (args: string[], env: Record<string, string> = {}) =>
  Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], { cwd: ROOT, env: { ...process.env, WEFT_LOG_LEVEL: "warn", ...env } });

describe("weft backup", () => {
  test("copies a running server's database, WAL included; the copy restores into a working instance", async () => {
    const server = await startServer();
    const target = join(mkdtempSync(join(tmpdir(), "weft-bak-")), "weft-backup.db");
    let id: string;
    try {
      const created = await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Kept by the backup" }),
      });
      expect(created.status).toBe(201);
      id = (await created.json()).data.id;
      const made = weft(["backup", target], { WEFT_DATA_DIR: server.dataDir });
      expect(made.exitCode).toBe(0);
      expect(made.stdout.toString()).toContain(target);
      expect(made.stderr.toString()).toContain("encryption.key"); // the reminder to copy the key file
      // A second backup to the same file is refused rather than overwriting it.
      const again = weft(["backup", target], { WEFT_DATA_DIR: server.dataDir });
      expect(again.exitCode).toBe(2);
      expect(again.stderr.toString()).toContain("already exists");
    } finally {
      await server.stop();
    }
    // Restore as docs/operations.md says: the backup becomes weft.db of a data directory, next to the key.
    const restored = mkdtempSync(join(tmpdir(), "weft-restored-"));
    copyFileSync(target, join(restored, "weft.db"));
    copyFileSync(join(server.dataDir, "encryption.key"), join(restored, "encryption.key"));
    const again = await startServer({ dataDir: restored });
    try {
      const read = await again.fetch(`/api/workflows/${id}`);
      expect(read.status).toBe(200);
      expect((await read.json()).data.name).toBe("Kept by the backup");
    } finally {
      await again.stop();
    }
  });

  test("refuses a data directory without a database, creating nothing", () => {
    const empty = join(mkdtempSync(join(tmpdir(), "weft-bak-")), "none");
    const res = weft(["backup", join(empty, "x.db")], { WEFT_DATA_DIR: empty });
    expect(res.exitCode).toBe(2);
    expect(res.stderr.toString()).toContain("no database");
    expect(existsSync(empty)).toBe(false);
  });
});
