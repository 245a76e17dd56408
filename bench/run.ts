/**
 * `npm run bench`: runs every benchmark file in bench/ one after another, each in its own process
 * (so one bench's memory and threads never colour the next one's figures), and prints their output, then
 * one table of the figures they measured against the product's goals (reportGoal in ./_support.ts), so a
 * sitting ends with every goal beside its measurement.
 * `npm run bench -- engine` runs only the files whose name contains "engine".
 */
import { closeSync, existsSync, fdatasyncSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { GoalFigure } from "./_support";

const dir = import.meta.dir;
const filter = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_"))
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
  .sort();

const goalsDir = mkdtempSync(join(tmpdir(), "weft-bench-goals-"));
/** settleDisk: this many fsyncs in a row (20 ms apart), each within QUIET_FSYNC_MS, and the disk is quiet. */
const QUIET_PROBES = 50;
const QUIET_FSYNC_MS = 15;
const goalsFile = join(goalsDir, "goals.jsonl");
const started = new Date();
let failed = 0;
for (const file of files) {
  console.log(`\n=== bench/${file} ===`);
  settleDisk();
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, join(dir, file)], {
    stdout: "inherit",
    stderr: "inherit",
    env: { ...process.env, WEFT_BENCH_GOALS: goalsFile },
  });
  const code = await proc.exited;
  console.log(`=== bench/${file}: ${code === 0 ? "done" : `exit code ${code}`} in ${((performance.now() - t0) / 1000).toFixed(1)} s ===`);
  if (code !== 0) failed++;
}
/**
 * Waits until the disk answers an fsync quickly again (at most a minute), so that a bench does not measure
 * what the one before it left: on a file system mounted with `discard` (this machine's ext4 is), deleting a
 * data dir of 10,000,000 runs (4.4 GB) makes the disk trim the freed blocks for a while after, and fsyncs meanwhile
 * took 40–650 ms against 3–7 ms (a prune right after a history bench once answered webhooks after ~190–320 ms
 * and the API after 135 ms). Prints how long it waited when it did.
 */
function settleDisk(): void {
  const probe = join(goalsDir, "fsync-probe");
  const fd = openSync(probe, "w");
  const page = Buffer.alloc(4096, 1);
  const started = performance.now();
  let quiet = 0;
  try {
    Bun.spawnSync(["sync"]);
    while (quiet < QUIET_PROBES && performance.now() - started < 60_000) {
      const t = performance.now();
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      quiet = performance.now() - t < QUIET_FSYNC_MS ? quiet + 1 : 0;
      Bun.sleepSync(20);
    }
  } finally {
    closeSync(fd);
    rmSync(probe, { force: true });
  }
  const waited = performance.now() - started - QUIET_PROBES * 20;
  if (waited > 1_000) console.log(`(waited ${(waited / 1000).toFixed(1)} s for the disk to answer fsyncs within ${QUIET_FSYNC_MS} ms again)`);
}

if (files.length === 0) console.log(filter.length ? `no bench file matches ${filter.join(", ")}` : "no bench files");

const goals: Array<GoalFigure & { bench: string }> = existsSync(goalsFile)
  ? readFileSync(goalsFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  : [];
rmSync(goalsDir, { recursive: true, force: true });
if (goals.length > 0) {
  console.log(`\n=== goals, this sitting (nproc=${cpus().length}, ${started.toISOString().slice(0, 16)}Z → ${new Date().toISOString().slice(11, 16)}Z) ===`);
  const rows = goals.map((g) => [`bench/${g.bench}`, g.figure, g.value, g.goal, g.met ? "met" : "NOT MET"]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const row of rows)
    console.log(
      row
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join("  ")
        .trimEnd(),
    );
  const unmet = goals.filter((g) => !g.met).length;
  console.log(`${goals.length - unmet} of ${goals.length} met`);
}
process.exit(failed === 0 ? 0 : 1);
