/**
 * Each limit fails only its own call, cleanly and quickly, while other calls go on; the memory a
 * memory bomb took goes back.
 */
import { describe, expect, test } from "bun:test";
import { isolationFor, runUserCode } from "../../src/sandbox";

const deep = (levels: number) => {
  let value: unknown = { leaf: true };
  for (let i = 0; i < levels; i++) value = { next: value };
  return value;
};

// Time limits are short; the memory cases get more time so that a busy machine still runs out of memory first.
const HOSTILE = {
  "infinite loop": { code: "while (true) {}", reason: "timeout", timeoutMs: 250 },
  "loop that catches the interrupt": { code: "for (;;) { try { while (true) {} } catch (e) {} }", reason: "timeout", timeoutMs: 250 },
  "async loop": { code: "for (;;) await null", reason: "timeout", timeoutMs: 250 },
  "catastrophic regex": { code: "return /(a+)+$/.test('a'.repeat(40) + 'b')", reason: "timeout", timeoutMs: 250 },
  "memory bomb": { code: "const hoard = []; for (;;) hoard.push(new Array(100000).fill(hoard.length))", reason: "memory", timeoutMs: 5000 },
  "string hoard": { code: "const hoard = []; for (;;) hoard.push('y'.repeat(1 << 20) + hoard.length)", reason: "memory", timeoutMs: 5000 },
  "deep recursion": { code: "function down(n) { return down(n + 1) + 1 } return down(0)", reason: "stack", timeoutMs: 2000 },
  "deep JSON built inside": { code: "return JSON.parse('['.repeat(100000) + ']'.repeat(100000))", reason: "stack", timeoutMs: 2000 },
} as const;

describe("limits (inline QuickJS)", () => {
  for (const [name, { code, reason, timeoutMs }] of Object.entries(HOSTILE)) {
    test(`${name} fails with reason ${reason}, and the next call works`, async () => {
      const started = performance.now();
      const result = await runUserCode({ code, isolation: "inline", timeoutMs, memoryBytes: 32 * 1024 * 1024 });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.reason).toBe(reason);
        expect(result.error.length).toBeGreaterThan(20);
      }
      expect(performance.now() - started).toBeLessThan(timeoutMs + 2_000);
      expect(await runUserCode({ code: "return input.a + 1", input: { a: 1 }, isolation: "inline" })).toEqual({ ok: true, value: 2, logs: [] });
    });
  }

  test("code that ran into its time limit inline runs in a sandbox process from then on", async () => {
    const code = "let spins = 0; while (true) spins++";
    expect(isolationFor(code)).toBe("inline");
    expect(await runUserCode({ code, isolation: "inline", timeoutMs: 100 })).toMatchObject({ ok: false, reason: "timeout" });
    expect(isolationFor(code)).toBe("process");
    expect(isolationFor("return 1")).toBe("inline");
  });

  test("100k-deep JSON input is refused before it reaches the sandbox", async () => {
    const result = await runUserCode({ code: "return input", input: deep(100_000), isolation: "inline" });
    expect(result).toMatchObject({ ok: false, reason: "input" });
    if (!result.ok) expect(result.error).toContain("nested more than");
  });

  test("a cyclic input is refused", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(await runUserCode({ code: "return 1", input: cyclic, isolation: "inline" })).toMatchObject({ ok: false, reason: "input" });
  });

  test("input nested 150 levels still works", async () => {
    const result = await runUserCode({ code: "let n = 0; for (let v = input; v.next; v = v.next) n++; return n", input: deep(150), isolation: "inline" });
    expect(result).toEqual({ ok: true, value: 150, logs: [] });
  });

  test("a concurrent call completes while another runs into its limit", async () => {
    const [loop, bomb, quick] = await Promise.all([
      runUserCode({ code: HOSTILE["infinite loop"].code, isolation: "inline", timeoutMs: 200 }),
      runUserCode({ code: HOSTILE["memory bomb"].code, isolation: "inline", timeoutMs: 5000, memoryBytes: 16 * 1024 * 1024 }),
      runUserCode({ code: "return input.n * 2", input: { n: 21 }, isolation: "inline" }),
    ]);
    expect(loop).toMatchObject({ ok: false, reason: "timeout" });
    expect(bomb).toMatchObject({ ok: false, reason: "memory" });
    expect(quick).toEqual({ ok: true, value: 42, logs: [] });
  });

  test("memory taken by a memory bomb goes back (RSS returns near its baseline)", async () => {
    const rss = () => process.memoryUsage().rss;
    await runUserCode({ code: "return 1", isolation: "inline" });
    Bun.gc(true);
    const baseline = rss();
    const result = await runUserCode({ code: HOSTILE["string hoard"].code, isolation: "inline", timeoutMs: 10_000, memoryBytes: 128 * 1024 * 1024 });
    expect(result).toMatchObject({ ok: false, reason: "memory" });
    const peak = rss();
    // The garbage collector is conservative about stacks; a few rounds of other work let it see the memory as free.
    let after = rss();
    for (let round = 0; round < 20 && after > baseline + 24 * 1024 * 1024; round++) {
      await runUserCode({ code: "return 1", isolation: "inline" });
      await Bun.sleep(20);
      Bun.gc(true);
      after = rss();
    }
    expect(peak).toBeGreaterThan(baseline + 48 * 1024 * 1024);
    expect(after).toBeLessThan(baseline + 24 * 1024 * 1024);
  });
});

describe("results and errors users see", () => {
  const run = (code: string, input?: unknown) => runUserCode({ code, input, isolation: "inline" });

  test("a function body with input and return", async () => {
    expect(await run("return input.a + 1", { a: 1 })).toEqual({ ok: true, value: 2, logs: [] });
  });

  test("Activepieces' export const code = async (inputs) => ...", async () => {
    expect(await run("export const code = async (inputs) => ({ doubled: inputs.n * 2 });", { n: 4 })).toEqual({ ok: true, value: { doubled: 8 }, logs: [] });
  });

  test("export default", async () => {
    expect(await run("export default function (input) { return input.toUpperCase() }", "hi")).toEqual({ ok: true, value: "HI", logs: [] });
  });

  test("await inside a body", async () => {
    expect(await run("const values = await Promise.all([1, 2].map(async (x) => x * input)); return values", 3)).toEqual({ ok: true, value: [3, 6], logs: [] });
  });

  test("console lines come back as logs", async () => {
    expect(await run("console.log('seen', { n: 1 }); console.error('oops'); return null")).toEqual({ ok: true, value: null, logs: ['seen {"n":1}', "oops"] });
  });

  test("undefined becomes null", async () => {
    expect(await run("const x = 1;")).toEqual({ ok: true, value: null, logs: [] });
  });

  test("a thrown error names its type, message and line", async () => {
    expect(await run("const a = 1;\nconst b = null;\nreturn b.c")).toMatchObject({
      ok: false,
      reason: "error",
      error: "TypeError: cannot read property 'c' of null (line 3)",
    });
    expect(await run("throw new RangeError('too big')")).toMatchObject({ ok: false, reason: "error", error: "RangeError: too big (line 1)" });
  });

  test("a syntax error is reported", async () => {
    expect(await run("return {")).toMatchObject({ ok: false, reason: "error" });
  });

  test("a module without an entry function says what to export", async () => {
    const result = await run("export const value = 1;");
    expect(result).toMatchObject({ ok: false, reason: "error" });
    if (!result.ok) expect(result.error).toContain("export const code");
  });

  test("a promise that never settles fails instead of hanging", async () => {
    expect(await run("await new Promise(() => {}); return 1")).toMatchObject({ ok: false, reason: "error" });
  });

  test("a result that is not JSON", async () => {
    expect(await run("return 10n")).toMatchObject({ ok: false, reason: "output" });
    expect(await run("const a = {}; a.self = a; return a")).toMatchObject({ ok: false, reason: "output" });
  });

  test("empty code is refused with what to write", async () => {
    expect(await run("  ")).toMatchObject({ ok: false, reason: "error" });
  });

  test("a call may lower the limits, never raise them past the operator's", async () => {
    const result = await runUserCode({ code: "while (true) {}", isolation: "inline", timeoutMs: 60_000_000 });
    // Capped at the operator's limit (WEFT_SANDBOX_TIMEOUT_MS, 5 s by default), not an hour.
    expect(result).toMatchObject({ ok: false, reason: "timeout" });
    // 20 s, four times the cap: still far from the hour asked, and room for a machine whose load starves this
    // thread (at a load average of 9–17 on two cores the 5 s loop's call took over 10 s to come back).
  }, 20_000);
});
