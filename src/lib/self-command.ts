/**
 * The command that runs this program again with a subcommand (the code sandbox and the piece hosts are
 * child processes of the server): from source, Bun with src/main.ts; inside a `bun build --compile`
 * binary, whose sources live in an embedded file system, the binary itself.
 */
import { fileURLToPath } from "node:url";

export function selfCommand(subcommand: string): string[] {
  if (isCompiled()) return [process.execPath, subcommand];
  return [process.execPath, fileURLToPath(new URL("../main.ts", import.meta.url)), subcommand];
}

/** Is this program a `bun build --compile` binary (its sources in an embedded file system)? */
export function isCompiled(): boolean {
  return import.meta.url.includes("$bunfs") || import.meta.url.includes("~BUN");
}
