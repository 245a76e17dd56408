/**
 * Loaded before every test file (bunfig.toml): the run's temporary files — data directories, compiled
 * binaries, the files of spawned servers and browsers — all go into one directory, removed when the run
 * ends. Without it a full suite left over a gigabyte in /tmp each time.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopSharedPostgres } from "./postgres-storage";

const root = mkdtempSync(join(tmpdir(), "weft-tests-"));
// os.tmpdir() reads TMPDIR on every call, and spawned processes inherit it.
process.env.TMPDIR = root;
// A top-level hook of a preload runs once, after the last test file.
afterAll(async () => {
  await stopSharedPostgres();
  rmSync(root, { recursive: true, force: true });
});
