/**
 * `npm run bench`: runs every benchmark file in bench/ one after another, each in its own process
 * (so one bench's memory and threads never colour the next one's figures), and prints their output.
 * `npm run bench -- engine` runs only the files whose name contains "engine".
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = import.meta.dir;
const filter = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_"))
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
  .sort();

let failed = 0;
for (const file of files) {
  console.log(`\n=== bench/${file} ===`);
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, join(dir, file)], { stdout: "inherit", stderr: "inherit", env: process.env });
  const code = await proc.exited;
  console.log(`=== bench/${file}: ${code === 0 ? "done" : `exit code ${code}`} in ${((performance.now() - started) / 1000).toFixed(1)} s ===`);
  if (code !== 0) failed++;
}
if (files.length === 0) console.log(filter.length ? `no bench file matches ${filter.join(", ")}` : "no bench files");
process.exit(failed === 0 ? 0 : 1);
