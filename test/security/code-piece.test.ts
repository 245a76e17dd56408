/** The `code` piece: registered as code.run_code, runs in the sandbox, logs and fails like a step should. */
import { afterAll, expect, test } from "bun:test";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import { configureSandbox, sandboxSettings, stopSandboxProcesses } from "../../src/sandbox";
import type { ActionContext } from "../../src/pieces-sdk/types";

afterAll(() => stopSandboxProcesses());

const action = () => builtinRegistry().get("code")!.actions.run_code!;

function context(config: Record<string, unknown>, logs: string[] = []): ActionContext {
  return { config, signal: new AbortController().signal, log: (line: string) => logs.push(line) } as unknown as ActionContext;
}

/** The error a failing step throws. */
async function stepError(config: Record<string, unknown>): Promise<Error> {
  try {
    await action().run(context(config));
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the step to fail");
}

test("the built-in catalog has code.run_code, pure, with input and code properties", () => {
  const runCode = action();
  expect(runCode.sideEffects).toBe("pure");
  expect(Object.keys(runCode.props).sort()).toEqual(["code", "input"]);
  expect(runCode.props.code!.type).toBe("code");
  expect(runCode.props.code!.required).toBe(true);
});

test("returns what the code returns; console lines go to the step log", async () => {
  const logs: string[] = [];
  const output = await action().run(context({ input: { a: 1 }, code: "console.log('adding'); return { b: input.a + 1 }" }, logs));
  expect(output).toEqual({ b: 2 });
  expect(logs).toEqual(["adding"]);
});

test("Activepieces-style code works as written there", async () => {
  expect(await action().run(context({ input: { name: "Ada" }, code: "export const code = async (inputs) => {\n  return `hello ${inputs.name}`;\n};" }))).toBe(
    "hello Ada",
  );
});

test("an escape attempt fails the step with the sandbox's message", async () => {
  const error = await stepError({ input: {}, code: "return this.constructor.constructor('return process')().exit(7)" });
  expect(error.message).toContain("'process' is not defined");
});

test("an infinite loop fails the step instead of hanging the server's thread", async () => {
  // A limit of 1 s of CPU time: on a machine busy with other work the loop takes longer to reach it.
  const previous = sandboxSettings().timeoutMs;
  configureSandbox({ timeoutMs: 1_000 });
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 50);
  try {
    const error = await stepError({ input: {}, code: "while (true) {}" });
    expect(error.message).toMatch(/time limit/);
  } finally {
    clearInterval(ticker);
    configureSandbox({ timeoutMs: previous });
  }
  // On the server's own thread the code runs in a sandbox process, so this thread kept ticking meanwhile.
  expect(ticks).toBeGreaterThan(15);
}, 30_000);

test("code that is not text is refused", async () => {
  const error = await stepError({ input: {}, code: 42 });
  expect(error.message).toContain("config.code must be text");
});
