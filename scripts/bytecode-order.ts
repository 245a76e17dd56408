/**
 * `bun scripts/bytecode-order.ts` → scripts/bytecode-order.txt, the profile build.ts lays the binary's
 * bytecode out by (`bun build --bytecode-order`): the functions a compiled `weft serve` runs from its start
 * on a data directory with a published webhook workflow to its answer to that webhook. Bun puts them together
 * at the front of the executable, so a start touches fewer of its pages (a page fault is dear on a small
 * virtual machine: docs/operations.md). Record it again when start-up code changed much; an older profile
 * still applies (functions it does not name are laid out after those it names).
 */
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { greetStep, publishWebhookWorkflow, replyStep, startBenchServer } from "../bench/_support";
import { BYTECODE_ORDER, build } from "../build";

const binary = await build(join("dist", "weft-order"));
const recorded = `${BYTECODE_ORDER}.new`;
const first = await startBenchServer([binary, "serve"]);
let hook: string;
try {
  hook = new URL((await publishWebhookWorkflow(first.url, "order", greetStep(replyStep))).url).pathname;
} finally {
  await first.stop();
}
// The start to record: a restart of a server with data, its first webhook answered, then a normal stop.
const again = await startBenchServer([binary, "serve"], { WEFT_DATA_DIR: first.dataDir, BUN_BYTECODE_ORDER_OUT: recorded });
try {
  const answer = await fetch(`${again.url}${hook}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"Ada","n":21}' });
  if (answer.status !== 200) throw new Error(`the webhook answered ${answer.status}: ${await answer.text()}`);
} finally {
  await again.stop();
  rmSync(first.dataDir, { recursive: true, force: true });
  rmSync(binary, { force: true });
}
if (!(statSync(recorded, { throwIfNoEntry: false })?.size ?? 0)) throw new Error(`the binary wrote no profile to ${recorded}`);
await Bun.write(BYTECODE_ORDER, Bun.file(recorded));
rmSync(recorded);
console.log(`recorded ${BYTECODE_ORDER}: ${(statSync(BYTECODE_ORDER).size / 1024).toFixed(0)} KiB`);
