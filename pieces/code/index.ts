/**
 * Code: run the user's JavaScript in the sandbox (src/sandbox, docs/security.md).
 *
 *   input: { "items": "{{ fetch.output.items }}" }
 *   code:  return { total: input.items.reduce((sum, item) => sum + item.price, 0) }
 *
 * The code is a function body that reads `input` and `return`s the step's output (it may `await`),
 * or a module that exports the function: `export const code = async (inputs) => ...` as in
 * Activepieces, or `export default (input) => ...`. JSON in, JSON out; no network, files or timers.
 */
import { isMainThread } from "node:worker_threads";
import { runUserCode } from "../../src/sandbox";
import { action, definePiece, Property } from "../../src/pieces-sdk";

export default definePiece({
  id: "code",
  name: "Code",
  version: "1.0.0",
  icon: "⌨️",
  description: "Run JavaScript in a sandbox: JSON in, JSON out",
  actions: [
    action({
      id: "run_code",
      name: "Run code",
      description: "Runs a JavaScript function body (or a module exporting `code`) with `input`; what it returns is the step's output",
      // No side effects can leave the sandbox, so a resumed run may run it again.
      sideEffects: "pure",
      props: {
        input: Property.json({
          displayName: "Input",
          description: 'The value the code reads as `input`; use {{ }} to pass earlier steps\' output, e.g. {"items": "{{fetch.output.items}}"}',
          default: {},
        }),
        code: Property.code({
          displayName: "Code",
          description: "A function body using `input` and `return` (e.g. `return { n: input.n + 1 }`), or `export const code = async (inputs) => { ... }`",
          required: true,
          default: "return { result: input };",
        }),
      },
      sampleData: { result: {} },
      async run(ctx) {
        const { code, input } = ctx.config as { code?: unknown; input?: unknown };
        if (typeof code !== "string") throw new Error("config.code must be text: a function body such as `return input.a + 1`");
        if (ctx.signal.aborted) throw new Error("the run was cancelled before the code started");
        // Inline QuickJS blocks its thread for up to the time limit: never the server's own thread.
        const result = await runUserCode({
          code,
          input: input ?? {},
          isolation: isMainThread ? "process" : undefined,
          onWait: (waiting) => ctx.waiting(waiting ? "a sandbox" : null),
        });
        for (const line of result.logs) ctx.log(line);
        if (!result.ok) throw new Error(result.error);
        return result.value;
      },
    }),
  ],
});
