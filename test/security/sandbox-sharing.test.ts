/**
 * More sandbox processes than cores: a burst of slow calls gets processes of its own (up to
 * WEFT_SANDBOX_PROCESSES), which run below the server's priority once a call runs slow, count only the
 * CPU time a call uses against its limit, still kill a call stuck in a built-in, and leave once idle —
 * all but one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism, getPriority } from "node:os";
import { configureSandbox, runUserCode, sandboxSettings, stopSandboxProcesses } from "../../src/sandbox";

/** Four sandbox processes per core: each call of a burst gets at most a quarter of a core. */
const PROCESSES = 4 * availableParallelism();
let previous: ReturnType<typeof sandboxSettings>;

beforeAll(() => {
  previous = sandboxSettings();
  stopSandboxProcesses();
  configureSandbox({ processes: PROCESSES });
});
afterAll(() => {
  stopSandboxProcesses();
  configureSandbox(previous);
});

/** This process's sandbox processes (`weft __sandbox` children), as the operator sees them in ps. */
function sandboxPids(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return parent === process.pid && readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("__sandbox");
      } catch {
        return false;
      }
    });
}

/** Waits (up to 10 s) until `check` holds. */
async function eventually(check: () => boolean): Promise<boolean> {
  for (const until = Date.now() + 10_000; Date.now() < until; await Bun.sleep(50)) if (check()) return true;
  return check();
}

/** Busy-waits `ms` of wall-clock time: it computes only while it has a core. */
const busy = (ms: number) => `const t = Date.now(); while (Date.now() - t < ${ms}) {} return input.n`;
const burst = (count: number, ms: number, timeoutMs: number) =>
  Promise.all(Array.from({ length: count }, (_, n) => runUserCode({ code: busy(ms), input: { n }, isolation: "process", timeoutMs })));
const values = (results: Awaited<ReturnType<typeof burst>>) => results.map((result) => (result.ok ? result.value : result.reason));

describe.skipIf(process.platform !== "linux")("more sandbox processes than cores", () => {
  test("a process that ran only quick code keeps the server's priority", async () => {
    for (let n = 0; n < 50; n++) expect(await runUserCode({ code: "return input.n * 2", input: { n }, isolation: "process" })).toMatchObject({ value: n * 2 });
    const pids = sandboxPids();
    expect(pids.length).toBe(1);
    expect(getPriority(pids[0])).toBe(getPriority());
  });

  test("a quick call answered late because the server was busy keeps the server's priority", async () => {
    // The server's thread computes for 100 ms right after sending each call, as under a heavy load: the reply
    // waits unread past the slow mark, but the call itself computed for a millisecond.
    for (let n = 0; n < 5; n++) {
      const call = runUserCode({ code: "return input.n * 3", input: { n }, isolation: "process" });
      for (const until = Date.now() + 100; Date.now() < until; );
      expect(await call).toMatchObject({ value: n * 3 });
    }
    const pids = sandboxPids();
    expect(pids.length).toBe(1);
    expect(getPriority(pids[0])).toBe(getPriority());
  });

  test("a burst of slow calls gets a process each, up to the setting, all below the server's priority", async () => {
    expect(values(await burst(PROCESSES, 600, 5_000))).toEqual(Array.from({ length: PROCESSES }, (_, n) => n));
    const pids = sandboxPids();
    expect(pids.length).toBe(PROCESSES);
    expect(pids.map((pid) => getPriority(pid))).toEqual(pids.map(() => 10));
  }, 30_000);

  test("a call that shares a core is not stopped for waiting: its limit counts the CPU time it used", async () => {
    await burst(PROCESSES, 300, 5_000); // every process is up
    // Each busy call waits 1.2 s of wall-clock time, twice its limit, but gets at most a quarter of a core, so
    // it computes ~0.3 s of its 0.6 s. The endless loop beside them still runs into the limit.
    const loop = runUserCode({ code: "while (true) {}", isolation: "process", timeoutMs: 600 });
    expect(values(await burst(PROCESSES - 1, 1_200, 600))).toEqual(Array.from({ length: PROCESSES - 1 }, (_, n) => n));
    expect(await loop).toMatchObject({ ok: false, reason: "timeout" });
  }, 30_000);

  test("a call stuck inside a built-in is still killed while the cores are shared, and the others complete", async () => {
    const stuck = runUserCode({ code: "return Array(2 ** 32 - 1).join('').length", isolation: "process", timeoutMs: 300 });
    const others = burst(PROCESSES - 1, 1_200, 2_000);
    expect(await stuck).toMatchObject({ ok: false, reason: "killed" });
    expect(values(await others)).toEqual(Array.from({ length: PROCESSES - 1 }, (_, n) => n));
  }, 60_000);

  test("past WEFT_SANDBOX_QUEUE waiting calls a new one is refused, though the pool is below WEFT_SANDBOX_PROCESSES", async () => {
    // Quick code grows the pool to one process per core at most, so the pool stays below the setting here.
    const quick = (n: number) => runUserCode({ code: "return input.n + 1", input: { n }, isolation: "process" });
    for (let n = 0; n < 20; n++) await quick(n);
    configureSandbox({ queue: 5 });
    try {
      const results = await Promise.all(Array.from({ length: 500 }, (_, n) => quick(n)));
      const refused = results.filter((result) => !result.ok);
      expect(refused.length).toBeGreaterThan(0);
      for (const result of refused) expect(result).toMatchObject({ reason: "busy", error: expect.stringContaining("WEFT_SANDBOX_QUEUE") });
      // Every call not refused ran.
      expect(results.filter((result) => result.ok).length).toBe(500 - refused.length);
    } finally {
      configureSandbox({ queue: previous.queue });
    }
  });

  test("idle sandbox processes are stopped, all but one, which still serves", async () => {
    configureSandbox({ processIdleMs: 1_000 });
    try {
      await burst(PROCESSES, 300, 5_000);
      expect(sandboxPids().length).toBe(PROCESSES);
      expect(await eventually(() => sandboxPids().length === 1)).toBe(true);
      expect(await runUserCode({ code: "return input.n * 2", input: { n: 21 }, isolation: "process" })).toEqual({ ok: true, value: 42, logs: [] });
      expect(sandboxPids().length).toBe(1);
    } finally {
      configureSandbox({ processIdleMs: previous.processIdleMs });
    }
  }, 30_000);
});
