/** The escape corpus against run_code: no host object is ever reachable, in either isolation mode. */
import { afterAll, describe, expect, test } from "bun:test";
import { runUserCode, stopSandboxProcesses, type SandboxResult } from "../../src/sandbox";
import { HOST_GLOBALS, JS_ESCAPES } from "./escape-corpus";

afterAll(() => stopSandboxProcesses());

/** An escape would have returned something or killed us; a contained attempt fails or yields nothing of the host. */
function expectContained(name: string, result: SandboxResult) {
  if (result.ok) {
    // Only harmless values may come back: "undefined" from typeof, or an empty list of host globals.
    expect({ name, value: result.value }).toEqual({ name, value: name === "Symbol.unscopables" ? [] : "undefined" });
  } else {
    expect(result.reason).toBe("error");
    expect(result.error).toMatch(/ReferenceError|TypeError|not defined|not a function|could not load module|cannot read property/);
  }
}

describe("escape corpus (inline QuickJS)", () => {
  for (const [name, code] of Object.entries(JS_ESCAPES)) {
    test(name, async () => {
      expectContained(name, await runUserCode({ code, input: { a: 1 }, isolation: "inline", timeoutMs: 1000 }));
    });
  }

  test("no host global exists, by any spelling", async () => {
    const result = await runUserCode({
      code: `return ${JSON.stringify(HOST_GLOBALS)}.filter((n) => typeof globalThis[n] !== "undefined" || Object.getOwnPropertyNames(globalThis).includes(n))`,
      isolation: "inline",
    });
    expect(result).toEqual({ ok: true, value: [], logs: [] });
  });

  test("an escape attempt does not disturb the next call", async () => {
    await runUserCode({
      code: "Object.prototype.polluted = 1; Array.prototype.map = null; globalThis.leak = input.secret; return 1",
      input: { secret: "s3cret" },
      isolation: "inline",
    });
    const next = await runUserCode({ code: "return [typeof globalThis.leak, typeof ({}).polluted, [1].map((x) => x + 1)]", isolation: "inline" });
    expect(next).toEqual({ ok: true, value: ["undefined", "undefined", [2]], logs: [] });
  });

  test("the input is a copy: code cannot reach the caller's objects", async () => {
    const input = { list: [1, 2], nested: { n: 1 } };
    const result = await runUserCode({ code: "input.list.push(3); input.nested.n = 99; return input", input, isolation: "inline" });
    expect(result.ok && result.value).toEqual({ list: [1, 2, 3], nested: { n: 99 } });
    expect(input).toEqual({ list: [1, 2], nested: { n: 1 } });
  });
});

describe("escape corpus (sandbox process)", () => {
  // The same QuickJS behind a process boundary; a few representative entries keep this quick.
  for (const name of ["constructor chain", "template literal", "computed property", "Reflect.construct", "import()", "Bun"]) {
    test(name, async () => {
      expectContained(name, await runUserCode({ code: JS_ESCAPES[name]!, input: { a: 1 }, isolation: "process", timeoutMs: 2000 }));
    });
  }
});
