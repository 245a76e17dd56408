/**
 * Engine steps run in Worker threads, whose native stack is smaller than the main thread's: the
 * sandbox's limits must fail cleanly there too (the stack limit is set with that margin).
 */
import { expect, test } from "bun:test";

test("limits fail cleanly inside a Worker thread, which keeps serving", async () => {
  const source = `
    import { runUserCode } from ${JSON.stringify(new URL("../../src/sandbox/index.ts", import.meta.url).pathname)};
    const cases = {
      recursion: "function down(n) { return down(n + 1) + 1 } return down(0)",
      mapRecursion: "function g(n) { return [1, 2].map(() => g(n + 1)) } return g(0)",
      deepStringify: "let a = []; for (let i = 0; i < 50000; i++) a = [a]; return JSON.stringify(a).length",
      deepParse: "return JSON.parse('['.repeat(100000) + ']'.repeat(100000))",
      regexRecursion: "return /((a)|b)+$/.test('ab'.repeat(200000) + 'c')",
      loop: "while (true) {}",
      memory: "const hoard = []; for (;;) hoard.push('y'.repeat(1 << 20) + hoard.length)",
    };
    const out = {};
    for (const [name, code] of Object.entries(cases)) {
      const r = await runUserCode({ code, isolation: "inline", timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024 });
      out[name] = r.ok ? "ok" : r.reason;
    }
    out.after = (await runUserCode({ code: "return input.a + 1", input: { a: 1 }, isolation: "inline" })).value;
    postMessage(out);
  `;
  const url = URL.createObjectURL(new Blob([source], { type: "application/typescript" }));
  const worker = new Worker(url);
  const result = await new Promise<Record<string, unknown>>((resolve, reject) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(event.message));
  });
  worker.terminate();
  expect(result.recursion).toBe("stack");
  expect(result.mapRecursion).toBe("stack");
  expect(["stack", "ok"]).toContain(result.deepStringify as string);
  expect(result.deepParse).toBe("stack");
  expect(["stack", "timeout", "memory", "ok"]).toContain(result.regexRecursion as string);
  expect(result.loop).toBe("timeout");
  expect(result.memory).toBe("memory");
  expect(result.after).toBe(2);
}, 30_000);
