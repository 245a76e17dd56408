/**
 * Loaded before every test file (bunfig.toml): the run's temporary files — data directories, compiled
 * binaries, the files of spawned servers and browsers — all go into one directory, removed when the run
 * ends. Without it a full suite left over a gigabyte in /tmp each time.
 *
 * The top-level hooks below run once after the last file of a plain `bun test`, and after every file under
 * `--parallel`. The suite runner's workers keep one global for the files they run (`--no-isolate`,
 * test/support/run-suite.ts), so this module is loaded once per worker while its hook runs after each file:
 * there the directory is removed and a fresh one made for the next file (whose module-level code runs before
 * any hook of its own); the runner removes the last with the run's directory.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RUN_DIR } from "./announce";
import { stopSharedPostgres } from "./postgres-storage";

const base = tmpdir();
let root = "";

/** A directory of its own for what comes next; os.tmpdir() reads TMPDIR on every call, and spawned processes inherit it. */
function freshRoot() {
  root = mkdtempSync(join(base, "weft-tests-"));
  process.env.TMPDIR = root;
}

freshRoot();
afterAll(async () => {
  await stopSharedPostgres();
  rmSync(root, { recursive: true, force: true });
  if (process.env[RUN_DIR]) freshRoot();
});
