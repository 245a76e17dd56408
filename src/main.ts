#!/usr/bin/env bun
/**
 * The `weft` program. Decides before anything heavy is loaded what this process is: the code sandbox or
 * a piece host (child processes of a server that re-execute this program, docs/security.md; they need no
 * config and print nothing else), or a command of src/cli.ts. A long-running command first restarts in
 * place with the runtime tuned for a server (src/runtime-tuning.ts): doing that here, before the app is
 * imported, spares start-up a second load of the whole program.
 */
import { commandOf, execWithRuntimeTuning, isLongRunning } from "./runtime-tuning";

const argv = process.argv.slice(2);
if (argv[0] === "__sandbox") await (await import("./sandbox/child")).runSandboxChild();
else if (argv[0] === "__piece-host") await (await import("./pieces-runtime/activepieces/host")).runPieceHost();
else {
  if (isLongRunning(argv)) execWithRuntimeTuning();
  await (await import("./cli")).main(argv);
}
