/**
 * The suite runner behind `npm test` and `npm run test:postgres` (CONTRIBUTING.md, "Test"): `bun test` with
 * the files spread over worker processes (`--parallel`), the slowest started first (`--timings`, the
 * per-file durations in test/timings.json), each test given 30 s. Arguments are handed on to `bun test`
 * (a file, `--reporter=junit --reporter-outfile=...`, `--update-timings`).
 *
 * Under `--parallel` every file runs in a fresh global, so the preload (test/support/preload.ts) makes and
 * removes a temporary directory per file. This runner adds what a file cannot own:
 * - one temporary directory for the whole run, under which the files' directories go, removed at the end
 *   even when a worker died before its clean-up;
 * - on PostgreSQL, one throwaway server and its migrated template for every worker
 *   (test/support/postgres-storage.ts) instead of an initdb per file, stopped at the end.
 *
 *   bun test/support/run-suite.ts [bun test arguments...]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBinaries } from "./postgres";
import { SUITE_POSTGRES_URL, startSuitePostgres, testStorage } from "./postgres-storage";

/**
 * Worker processes. Most files wait (servers starting, browsers, the engine's timers) rather than compute,
 * so more workers than this machine's two cores still shorten the run; measured in CONTRIBUTING.md.
 */
const WORKERS = 3;
const TIMINGS = "test/timings.json";

const root = mkdtempSync(join(tmpdir(), "weft-suite-"));
// os.tmpdir() reads TMPDIR on every call, and the workers and what they spawn inherit it.
process.env.TMPDIR = root;

const pg = testStorage() === "postgres" && postgresBinaries() ? await startSuitePostgres() : undefined;
if (pg) process.env[SUITE_POSTGRES_URL] = pg.url;

let status = 1;
try {
  const bun = Bun.spawn([process.execPath, "test", `--parallel=${WORKERS}`, `--timings=${TIMINGS}`, "--timeout", "30000", ...process.argv.slice(2)], {
    stdio: ["inherit", "inherit", "inherit"],
  });
  // Ctrl-C reaches the workers through the terminal; a SIGTERM from CI is handed on, and either way the
  // clean-up below still runs.
  const forward = (signal: NodeJS.Signals) => () => bun.kill(signal);
  process.on("SIGINT", forward("SIGINT"));
  process.on("SIGTERM", forward("SIGTERM"));
  status = await bun.exited;
} finally {
  await pg?.stop();
  rmSync(root, { recursive: true, force: true });
}
process.exit(status);
