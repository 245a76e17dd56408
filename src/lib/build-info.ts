/**
 * Which build this program is, for `weft version`: `bun build.ts` embeds the commit and the target it
 * compiled for (`--define`); run from source, the commit is asked of git and the target is this machine.
 *
 *   describeBuild("0.1.0") // "0.1.0 (commit 70d083a, linux-arm64)"
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

declare const WEFT_BUILD_COMMIT: string | undefined;
declare const WEFT_BUILD_TARGET: string | undefined;

/** The commit a compiled binary was built from; from source `git rev-parse --short HEAD`, or "source" without git. */
export function buildCommit(): string {
  if (typeof WEFT_BUILD_COMMIT === "string") return WEFT_BUILD_COMMIT;
  try {
    const git = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: dirname(fileURLToPath(import.meta.url)), stdout: "pipe", stderr: "ignore" });
    const commit = git.stdout.toString().trim();
    return git.exitCode === 0 && commit ? commit : "source";
  } catch {
    return "source";
  }
}

/** os-arch[-baseline] as the release files are named (build.ts); from source, this machine's os-arch. */
export function buildTarget(): string {
  if (typeof WEFT_BUILD_TARGET === "string") return WEFT_BUILD_TARGET;
  return `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
}

/** The version first (scripts read the first word), then the commit and the target. */
export function describeBuild(version: string): string {
  const compiled = typeof WEFT_BUILD_TARGET === "string";
  return `${version} (commit ${buildCommit()}, ${compiled ? "" : "source on "}${buildTarget()})`;
}
