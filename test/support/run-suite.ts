/**
 * The suite runner behind `npm test` and `npm run test:postgres` (CONTRIBUTING.md, "Test"): `bun test` with
 * the files spread over worker processes (`--parallel`), the slowest started first (`--timings`, the
 * per-file durations in test/timings.json), each test given 30 s; then the few files that must not run beside
 * them (ALONE below): the cluster and crash files two at a time (PAIRED), the sandbox files one after another.
 * Arguments are handed on to `bun test` (`--reporter=junit --reporter-outfile=...`, `--update-timings`, `-t`);
 * given files or folders, it runs just those, in parallel.
 *
 * Each worker keeps one global and module registry for the files it runs (`--no-isolate`), as a plain serial
 * `bun test` does for all of them: loading the app's modules again for every file cost the parallel pass a
 * tenth of its CPU (477 → 414 s). A file still must not lean on what an earlier one left (a global, a
 * module's state); the preload (test/support/preload.ts) gives each file a temporary directory of its own.
 * This runner adds what a file cannot own:
 * - one temporary directory for the whole run, under which the files' directories go, removed at the end
 *   even when a worker died before its clean-up;
 * - on PostgreSQL, one throwaway server and its migrated template for every worker
 *   (test/support/postgres-storage.ts) instead of an initdb per file, stopped at the end;
 * - one junit report holding every pass when one is asked for (.ci/run adds up its totals).
 *
 *   bun ./test/support/run-suite.ts [bun test arguments...]
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Glob } from "bun";
import { RUN_DIR } from "./announce";
import { postgresBinaries } from "./postgres";
import { SUITE_POSTGRES_URL, startSuitePostgres, testStorage } from "./postgres-storage";

/**
 * Worker processes: as many as the two cores of the machine the suite was measured on (CONTRIBUTING.md, "How
 * the suite runs in parallel"). Most files wait (servers starting, browsers, the engine's timers) rather
 * than compute, so a third may shorten the run on a quiet machine; on a busy one the files that start
 * servers slowed past their limits. WEFT_TEST_WORKERS sets another number.
 */
const WORKERS = Number(process.env.WEFT_TEST_WORKERS) || 2;
const TIMINGS = "test/timings.json";
/** How the parallel pass (and a filtered run) spreads files: WORKERS processes, each keeping its global (see above). */
const PARALLEL = [`--parallel=${WORKERS}`, "--no-isolate"];

/**
 * Files that run alone, after the parallel pass: each measures what other files running beside it would
 * change. The cluster files race real `weft serve` instances on one PostgreSQL database whose heartbeats,
 * claims and schedules run on the wall clock (a schedule every second firing once per instant, a lease
 * taken over within its time); test/cluster/start-up.test.ts is not one of them: it asserts what three
 * instances started together agree on, not when, and a busier machine only varies the interleavings it
 * tries (it ran its twenty rounds green at a load average of 8, in 173 s). crash-safety and crash-cycles
 * SIGKILL a server at chosen moments of a run; sandbox-fairness measures a burst of sandboxed runs sharing the CPU, sandbox-limits which of a
 * time and a memory limit a hostile script reaches first, sandbox-process and sandbox-sharing how sandbox
 * processes share the cores, stop at their time limits and leave once idle. remote-database times /healthz and
 * webhooks (median < 20 ms) while a list read is held at a proxy ~2 ms from PostgreSQL: beside the parallel pass
 * both cores are busy and its webhooks' median reached 24 ms there once (2026-11-30); alone it passes.
 */
const ALONE = [
  "test/cluster/",
  "test/security/crash-cycles.test.ts",
  "test/security/crash-safety.test.ts",
  "test/security/sandbox-fairness.test.ts",
  "test/security/sandbox-limits.test.ts",
  "test/security/sandbox-process.test.ts",
  "test/security/sandbox-sharing.test.ts",
  "test/store/remote-database.test.ts",
];

/** Files under an ALONE folder that run in the parallel pass all the same (see above). */
const TOGETHER = new Set(["test/cluster/start-up.test.ts"]);

/**
 * ALONE files that may run two at a time, beside one another but not beside the parallel pass: the cluster files
 * and the crash files spend most of their time waiting — for heartbeats, leases and schedules on the wall clock,
 * for a restarted server — (two of them kept the machine 1.3 cores busy), so another such file costs them little
 * CPU, and the lane takes their wall time from ~155 s to ~90 s. The sandbox files still run one after another: a
 * second file beside them would change what they measure.
 */
const PAIRED = ["test/cluster/", "test/security/crash-cycles.test.ts", "test/security/crash-safety.test.ts"];

/** `bun test` options followed by a value as a separate argument: that value is no file filter. */
const TAKES_VALUE = new Set([
  "-t",
  "--test-name-pattern",
  "--timeout",
  "--reporter",
  "--reporter-outfile",
  "--preload",
  "--bail",
  "--rerun-each",
  "--seed",
  "--max-concurrency",
  "--shard",
  "--timings",
  "--coverage-dir",
  "--coverage-reporter",
]);

// `--reporter-outfile x` as `--reporter-outfile=x`, so that the alone pass can be given a report of its own.
const args: string[] = [];
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]!;
  args.push(arg === "--reporter-outfile" ? `${arg}=${process.argv[++i] ?? ""}` : arg);
}
const filtered = args.some((arg, i) => !arg.startsWith("-") && !TAKES_VALUE.has(args[i - 1] ?? ""));
const outfileArg = args.find((arg) => arg.startsWith("--reporter-outfile="));
const outfile = outfileArg?.slice("--reporter-outfile=".length);

const root = mkdtempSync(join(tmpdir(), "weft-suite-"));
// Open to pass through (not to list or write): a file's PostgreSQL runs as the postgres user when the suite runs as root
// (test/support/postgres.ts), and its data directory lies below this one. Each file's own directory stays private.
chmodSync(root, 0o711);
// Where a missing server's skip line leaves its marker, so that it is said once for the run (./announce.ts).
process.env[RUN_DIR] = root;
// os.tmpdir() reads TMPDIR on every call, and the workers and what they spawn inherit it.
process.env.TMPDIR = root;

/** The suite's files, as `bun test` finds them (*.test.ts and *.test.tsx under test/). */
function suiteFiles(): string[] {
  return [...new Glob("test/**/*.test.{ts,tsx}").scanSync(".")].sort();
}

/** Set by a SIGINT or SIGTERM: the pass under way ends, and no other starts. */
let stopped = false;

/** `bun test` with `extra` arguments and `files`, its junit report (if asked for) going to `report`. */
async function bunTest(extra: readonly string[], files: string[], report?: string): Promise<number> {
  const passed = report === undefined ? args : args.map((arg) => (arg === outfileArg ? `--reporter-outfile=${report}` : arg));
  const child = Bun.spawn([process.execPath, "test", ...extra, `--timings=${TIMINGS}`, "--timeout", "30000", ...passed, ...files.map((file) => `./${file}`)], {
    // Given explicitly: Bun.spawn hands a child the environment the runner started with, not process.env.
    env: { ...process.env },
    stdio: ["inherit", "inherit", "inherit"],
  });
  // Ctrl-C reaches the workers through the terminal; a SIGTERM from CI is handed on, and either way the
  // clean-up below still runs.
  const forward = (signal: NodeJS.Signals) => () => {
    stopped = true;
    child.kill(signal);
  };
  const onInt = forward("SIGINT");
  const onTerm = forward("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  try {
    return await child.exited;
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  }
}

/** One junit report of both passes: the suites of each, and the totals added up. */
function mergeJunit(into: string, from: string): void {
  if (!existsSync(from)) return;
  if (!existsSync(into)) {
    writeFileSync(into, readFileSync(from));
    return;
  }
  const head = /<testsuites\b[^>]*>/;
  const a = readFileSync(into, "utf8");
  const b = readFileSync(from, "utf8");
  const headA = head.exec(a)?.[0];
  const headB = head.exec(b)?.[0];
  if (!headA || !headB) throw new Error(`cannot merge junit reports ${into} and ${from}: no <testsuites> element`);
  const attr = (tag: string, name: string) => Number(new RegExp(`\\b${name}="([\\d.]+)"`).exec(tag)?.[1] ?? 0);
  let merged = headA;
  for (const name of ["tests", "assertions", "failures", "errors", "skipped", "time"]) {
    if (!new RegExp(`\\b${name}="`).test(headA)) continue;
    const sum = attr(headA, name) + attr(headB, name);
    merged = merged.replace(new RegExp(`\\b${name}="[\\d.]+"`), `${name}="${name === "time" ? sum.toFixed(6) : sum}"`);
  }
  const inner = (xml: string) => xml.slice(xml.indexOf(">", xml.search(head)) + 1, xml.lastIndexOf("</testsuites>"));
  writeFileSync(into, `${a.slice(0, a.search(head))}${merged}${inner(a).trimEnd()}\n${inner(b).replace(/^\n/, "")}</testsuites>\n`);
}

/**
 * PostgreSQL servers that files started and did not stop (a worker killed mid-file, a run interrupted): pg_ctl's
 * server is not the worker's child, so it outlives it, and the file's directory (its data directory's parent)
 * may be gone already. Found by their command line naming a data directory below the run's (Linux's /proc),
 * shut down at once (SIGQUIT). Says how many, since a file should stop its own.
 */
async function stopLeftoverPostgres(): Promise<void> {
  if (!existsSync("/proc/self/cmdline")) return;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const data = argv[argv.indexOf("-D") + 1];
    if (!argv[0]?.endsWith("/postgres") || !data?.startsWith(`${root}/`)) continue;
    try {
      process.kill(pid, "SIGQUIT");
      pids.push(pid);
    } catch {}
  }
  if (pids.length === 0) return;
  console.log(`run-suite: stopped ${pids.length} PostgreSQL server(s) that test files left running`);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const deadline = Date.now() + 5_000; pids.some(alive) && Date.now() < deadline; ) await Bun.sleep(50);
}

const pg = testStorage() === "postgres" && postgresBinaries() ? await startSuitePostgres() : undefined;
if (pg) process.env[SUITE_POSTGRES_URL] = pg.url;

let status = 1;
try {
  if (filtered) {
    status = await bunTest(PARALLEL, []);
  } else {
    const files = suiteFiles();
    const apart = files.filter((file) => !TOGETHER.has(file) && ALONE.some((entry) => file.startsWith(entry)));
    const paired = apart.filter((file) => PAIRED.some((entry) => file.startsWith(entry)));
    const alone = apart.filter((file) => !paired.includes(file));
    const together = files.filter((file) => !apart.includes(file));
    status = await bunTest(PARALLEL, together);
    // Then the paired lane and the files that run alone, each pass into a report of its own, merged into the one asked for.
    for (const [name, extra, group] of [
      ["paired", ["--parallel=2", "--no-isolate"], paired],
      ["alone", [], alone],
    ] as const) {
      if (group.length === 0) continue;
      const report = outfile === undefined ? undefined : join(root, `${name}.xml`);
      const passStatus = stopped ? 1 : await bunTest(extra, group, report);
      if (status === 0) status = passStatus;
      if (outfile !== undefined && report !== undefined) mergeJunit(outfile, report);
    }
  }
} finally {
  await pg?.stop();
  await stopLeftoverPostgres();
  rmSync(root, { recursive: true, force: true });
}
process.exit(status);
