/**
 * `npm run bench`: runs every benchmark file in bench/ one after another, each in its own process
 * (so one bench's memory and threads never colour the next one's figures), and prints their output, then
 * one table of the figures they measured against the product's goals (reportGoal in ./_support.ts), so a
 * sitting ends with every goal beside its measurement.
 * `npm run bench -- engine` runs only the files whose name contains "engine".
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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
const goalsFile = join(goalsDir, "goals.jsonl");
const started = new Date();
let failed = 0;
for (const file of files) {
  console.log(`\n=== bench/${file} ===`);
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
