/**
 * Compiled into a standalone executable by custom-piece.test.ts to prove that user pieces load
 * (including `import ... from "weft/sdk"`) inside a `bun build --compile` binary, where no source tree exists.
 * Prints the registry's ids and one action's output as JSON.
 */
import { loadRegistry } from "../../../src/pieces-runtime/registry";

const registry = await loadRegistry({ piecesDir: process.argv[2] });
const greet = registry.action("greetings", "greet");
const output = greet ? await greet.run({ config: { name: "Ada", style: "formal", title: "Dr.", language: "de" } } as any) : null;
console.log(JSON.stringify({ ids: registry.ids(), version: registry.servedVersion("greetings"), output }));
