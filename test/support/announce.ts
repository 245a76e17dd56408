/**
 * Says a skip line once for the whole run, however many files print it: a missing server's suites skip with ONE line
 * naming its Debian package (CONTRIBUTING.md, "Tests that need real servers"). Under the suite runner every file runs
 * in a fresh global (`bun test --parallel`), so a flag in memory is not enough: the first file to say it leaves a
 * marker in the run's directory (WEFT_TEST_RUN_DIR, set by test/support/run-suite.ts), created exclusively.
 *   announceOnce("postgresql", "PostgreSQL tests skipped ...: install the Debian package postgresql");
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const RUN_DIR = "WEFT_TEST_RUN_DIR";
const said = new Set<string>();

export function announceOnce(key: string, line: string): void {
  if (said.has(key)) return;
  said.add(key);
  const dir = process.env[RUN_DIR];
  if (dir) {
    try {
      writeFileSync(join(dir, `announced-${key}`), "", { flag: "wx" });
    } catch {
      return; // another file of this run said it (or the directory is gone: the run is ending)
    }
  }
  console.log(line);
}
