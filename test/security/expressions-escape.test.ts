/**
 * `{{ }}` expressions are JSONata, never JavaScript: the escape corpus reaches nothing of the host,
 * and a runaway recursive expression fails within the expression time limit.
 */
import { describe, expect, test } from "bun:test";
import { EXPRESSION_LIMITS, evaluateExpression, resolveValue } from "../../src/engine/expressions";

const context = {
  trigger: { body: { a: 1, name: "x" } },
  greet: { output: { text: "hi" } },
  variables: { apiBase: "https://example.com" },
  run: { id: "r1", environment: "test" },
};

const ESCAPES = [
  'trigger.constructor.constructor("return process")()',
  '$.constructor.constructor("return process")()',
  'trigger.body.constructor.constructor("return process")().exit(7)',
  '$lookup($lookup(trigger, "constr" & "uctor"), "constr" & "uctor")("return process")()',
  '$lookup(trigger, "__proto__")',
  "trigger.__proto__.constructor",
  '$eval("$.constructor.constructor")',
  '$eval("trigger.constructor")("return process")()',
  "$string(trigger.constructor)",
  "$keys(trigger.__proto__)",
  "process",
  "$process",
  "Bun",
  "globalThis",
  "this",
  "require",
  '$require("fs")',
  '$import("fs")',
  '$fetch("http://127.0.0.1/")',
  '$sift($, function($v, $k) { $k = "constructor" })',
];

describe("the escape corpus against {{ }} expressions", () => {
  for (const expression of ESCAPES) {
    test(expression, async () => {
      const outcome = await evaluateExpression(expression, context).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      );
      if ("value" in outcome) {
        // Nothing comes back: no function, no host object, not even the Object constructor's name.
        expect(typeof outcome.value).not.toBe("function");
        expect(outcome.value === undefined || JSON.stringify(outcome.value) === "{}" || outcome.value === "").toBe(true);
      } else {
        expect(outcome.error).toMatch(/failed/);
      }
    });
  }

  test("a whole config with escape attempts resolves to nothing of the host", async () => {
    const resolved = await resolveValue({ a: "{{ trigger.constructor }}", b: 'pre {{ $.constructor.constructor("return process")() }} post' }, context);
    expect(resolved).toEqual({ a: undefined, b: "pre  post" });
  });

  test(
    "a runaway recursive expression fails within the time limit",
    async () => {
      const started = performance.now();
      const error = await evaluateExpression("($spin := function($n) { $spin($n + 1) }; $spin(0))", context).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/timeout|Stack overflow/i);
      expect(performance.now() - started).toBeLessThan(EXPRESSION_LIMITS.timeoutMs + 2_000);
    },
    EXPRESSION_LIMITS.timeoutMs + 10_000,
  );

  test("deep non-tail recursion fails on the stack limit, quickly", async () => {
    const started = performance.now();
    const error = await evaluateExpression("($down := function($n) { $n > 0 ? 1 + $down($n - 1) : 0 }; $down(1000000))", context).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/Stack overflow/i);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
