/**
 * The hard backstop: sandbox processes (`weft __sandbox`) that are SIGKILLed when a call overruns,
 * including the cases the interrupt handler cannot stop in time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { configureSandbox, runUserCode, sandboxSettings, stopSandboxProcesses } from "../../src/sandbox";

const ROOT = resolve(import.meta.dir, "../..");
let previous: ReturnType<typeof sandboxSettings>;

beforeAll(() => {
  previous = sandboxSettings();
  configureSandbox({ processes: 2 });
});
afterAll(() => {
  stopSandboxProcesses();
  configureSandbox(previous);
});

const inProcess = (code: string, timeoutMs = 2_000, input?: unknown) => runUserCode({ code, input, isolation: "process", timeoutMs });

describe("process isolation", () => {
  test("runs code like inline isolation does", async () => {
    expect(await inProcess("return input.a + 1", 2_000, { a: 1 })).toEqual({ ok: true, value: 2, logs: [] });
    expect(await inProcess("export const code = async (inputs) => { console.log('x'); return inputs }", 2_000, [1])).toEqual({
      ok: true,
      value: [1],
      logs: ["x"],
    });
  });

  test("a built-in that never reaches the interrupt handler is killed at the limit, and a concurrent call completes", async () => {
    const started = performance.now();
    // Array(2**32 - 1).join() walks four billion holes inside one built-in call: minutes without an interrupt check.
    const stuck = inProcess("return Array(2 ** 32 - 1).join('').length", 300);
    const quick = inProcess("return 'still served'");
    expect(await quick).toEqual({ ok: true, value: "still served", logs: [] });
    const result = await stuck;
    expect(result).toMatchObject({ ok: false, reason: "killed" });
    expect(performance.now() - started).toBeLessThan(5_000);
    // The killed process is replaced.
    expect(await inProcess("return 2")).toEqual({ ok: true, value: 2, logs: [] });
  });

  test("an expensive built-in in a loop that catches out-of-memory stops at the limit", async () => {
    const started = performance.now();
    const result = await inProcess("const hoard = []; for (;;) { try { hoard.push(new Array(100000).fill(1)) } catch (e) {} }", 500);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(["timeout", "killed"]).toContain(result.reason);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  // The limit counts CPU time: on a machine busy with other work the loop takes longer to reach it.
  for (const [name, code, reason, timeoutMs] of [
    ["infinite loop", "while (true) {}", "timeout", 1_000],
    ["memory bomb", "const hoard = []; for (;;) hoard.push('y'.repeat(1 << 20) + hoard.length)", "memory", 3_000],
    ["deep recursion", "function down() { return down() + 1 } return down()", "stack", 3_000],
  ] as const) {
    test(`${name} fails with reason ${reason}`, async () => {
      expect(await inProcess(code, timeoutMs)).toMatchObject({ ok: false, reason });
    }, 30_000);
  }

  test("100k-deep input is refused before it is sent", async () => {
    let value: unknown = 1;
    for (let i = 0; i < 100_000; i++) value = [value];
    expect(await inProcess("return input", 2_000, value)).toMatchObject({ ok: false, reason: "input" });
  });
});

describe("fairness between calls", () => {
  test("a call's time limit does not count its wait, and past the queue bound a call is refused naming the setting", async () => {
    stopSandboxProcesses(); // an empty pool of one process
    configureSandbox({ processes: 1, queue: 2 });
    try {
      // One process, a running call of 600 ms; two calls of 400 ms with a 500 ms limit wait behind it (a
      // slow call has nothing pipelined behind it): the last waits ~1 s, past its limit, and still completes.
      // A fourth finds two already waiting and is refused at once.
      const busy = (ms: number) => `const t = Date.now(); while (Date.now() - t < ${ms}) {} return input.n`;
      const waits: boolean[][] = [[], [], []];
      await runUserCode({ code: "return 1", isolation: "process" }); // the process has started
      const first = runUserCode({ code: busy(600), input: { n: 0 }, isolation: "process", timeoutMs: 2_000, onWait: (w) => waits[0]!.push(w) });
      await Bun.sleep(150); // the first is running, and slow, by now
      const next = [1, 2].map((n) => runUserCode({ code: busy(400), input: { n }, isolation: "process", timeoutMs: 500, onWait: (w) => waits[n]!.push(w) }));
      const refused = await runUserCode({ code: busy(400), input: { n: 3 }, isolation: "process", timeoutMs: 500 });
      expect(refused).toMatchObject({ ok: false, reason: "busy" });
      expect((refused as { error: string }).error).toContain("WEFT_SANDBOX_QUEUE");
      const results = await Promise.all([first, ...next]);
      expect(results.map((r) => (r.ok ? r.value : r.error))).toEqual([0, 1, 2]);
      // The first ran at once; the others were told they waited, then that they started.
      expect(waits).toEqual([[], [true, false], [true, false]]);
    } finally {
      configureSandbox({ processes: 2, queue: 1_000 });
    }
  }, 20_000);

  test("a call killed for overrunning takes no other call with it: the calls behind it run elsewhere", async () => {
    stopSandboxProcesses();
    configureSandbox({ processes: 1 });
    try {
      // Code that ran quick before is stuck this time and holds the only process; three calls of it are
      // pipelined behind it. When it is killed they had not started: they run on the replacement process
      // instead of failing with it.
      const code = "if (input.n === 0) return Array(2 ** 32 - 1).join('').length; return input.n * 10";
      expect(await runUserCode({ code, input: { n: 4 }, isolation: "process" })).toEqual({ ok: true, value: 40, logs: [] });
      const stuck = runUserCode({ code, input: { n: 0 }, isolation: "process", timeoutMs: 300 });
      const behind = [1, 2, 3].map((n) => runUserCode({ code, input: { n }, isolation: "process", timeoutMs: 2_000 }));
      expect(await stuck).toMatchObject({ ok: false, reason: "killed" });
      expect((await Promise.all(behind)).map((r) => (r.ok ? r.value : r.error))).toEqual([10, 20, 30]);
    } finally {
      configureSandbox({ processes: 2 });
    }
  }, 20_000);
});

describe("inside a compiled binary", () => {
  test("QuickJS's wasm is embedded and `__sandbox` re-executes the binary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-sandbox-bin-"));
    const entry = join(dir, "entry.ts");
    // A tiny program shaped like src/main.ts: `__sandbox` dispatches to the child, anything else runs one call of each kind.
    await Bun.write(
      entry,
      `
      import { runSandboxChild } from ${JSON.stringify(join(ROOT, "src/sandbox/child.ts"))};
      import { runUserCode, stopSandboxProcesses } from ${JSON.stringify(join(ROOT, "src/sandbox/index.ts"))};
      if (process.argv[2] === "__sandbox") await runSandboxChild();
      // Anything else that is not the test's own start exits: a wrong re-exec must never recurse.
      else if (process.env.WEFT_SANDBOX_CHECK !== "run") process.exit(3);
      else {
        const inline = await runUserCode({ code: "return input.a + 1", input: { a: 1 }, isolation: "inline" });
        const child = await runUserCode({ code: "return typeof process", isolation: "process" });
        console.log(JSON.stringify({ inline, child }));
        stopSandboxProcesses();
      }
    `,
    );
    const binary = join(dir, "sandbox-check");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", entry, "--outfile", binary], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
      timeout: 60_000,
    });
    expect(build.stderr.toString()).not.toContain("error");
    expect(build.exitCode).toBe(0);
    // Run from elsewhere so nothing can be read from node_modules.
    const run = Bun.spawnSync([binary], {
      cwd: tmpdir(),
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "", WEFT_SANDBOX_CHECK: "run" },
      timeout: 30_000,
    });
    expect(run.exitCode).toBe(0);
    rmSync(dir, { recursive: true, force: true });
    expect(JSON.parse(run.stdout.toString().trim())).toEqual({ inline: { ok: true, value: 2, logs: [] }, child: { ok: true, value: "undefined", logs: [] } });
  }, 120_000);
});
