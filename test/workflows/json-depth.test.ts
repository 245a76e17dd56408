/** The HTTP layer's JSON depth limit: 64 levels, except that a nextAction chain adds none. */
import { describe, expect, test } from "bun:test";
import { assertSafeJson, MAX_CHAIN_LENGTH } from "../../src/http/body";

const chain = (n: number) => {
  const root: any = { name: "t" };
  let tail = root;
  for (let i = 0; i < n; i++) tail = tail.nextAction = { name: `s${i}`, config: { deep: { er: [1] } } };
  return root;
};

describe("assertSafeJson", () => {
  test("a 500-step nextAction chain passes although it nests ~1000 objects deep", () => {
    expect(() => assertSafeJson({ definition: { trigger: chain(500) } })).not.toThrow();
  });

  test("anything else still stops at 64 levels, also inside a long chain", () => {
    const nested: any = {};
    let tail = nested;
    for (let i = 0; i < 70; i++) tail = tail.x = {};
    expect(() => assertSafeJson(nested)).toThrow(/deeper than 64/);
    const inChain = chain(300);
    let last = inChain;
    while (last.nextAction) last = last.nextAction;
    last.config = {};
    let deep: Record<string, unknown> = last.config;
    for (let i = 0; i < 70; i++) {
      const next = {};
      deep.y = next;
      deep = next;
    }
    expect(() => assertSafeJson(inChain)).toThrow(/nextAction×300/);
  });

  test("a chain longer than the chain bound is refused", () => {
    expect(() => assertSafeJson(chain(MAX_CHAIN_LENGTH + 5))).toThrow(/chain of more than/);
  });

  test("forbidden keys are still found inside a chain", () => {
    const c = chain(100);
    let last = c;
    while (last.nextAction) last = last.nextAction;
    Object.defineProperty(last, "__proto__", { value: { polluted: true }, enumerable: true });
    expect(() => assertSafeJson(c)).toThrow(/__proto__/);
  });
});
