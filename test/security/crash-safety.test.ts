/**
 * Crash safety (issue 6 item 3) against a real `weft serve` child process killed with SIGKILL and started
 * again on the same data directory:
 * - runs mid-flight never stay `running`: a run cut off inside a step with side effects fails with
 *   "interrupted by a restart" (the step is not repeated), a run cut off inside a pure step resumes from its
 *   recorded steps, and no completed step runs twice (side effects are counted at a loopback server);
 * - every start (webhook or API) that got a 2xx before the kill exists after the restart;
 * - a worker thread that dies fails its run with the reason and its slot serves the next run.
 * The test-only piece below lives in a temporary WEFT_PIECES_DIR: nothing of it is in the product.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type ServerHandle } from "../support/server";

const PIECE = `export default (sdk) => sdk.definePiece({
  id: "crashy", name: "Crashy", version: "1.0.0", description: "test-only: slow pure steps and dying workers",
  actions: [
    sdk.action({ id: "sleep", name: "sleep", description: "a slow pure step", sideEffects: "pure", props: {},
      run: async (ctx) => { await Bun.sleep(Number(ctx.config.ms)); return { slept: Number(ctx.config.ms) }; } }),
    sdk.action({ id: "read", name: "read", description: "a slow read: safe to repeat", sideEffects: "read", props: {},
      run: async (ctx) => { const res = await ctx.fetch(String(ctx.config.url)); await Bun.sleep(Number(ctx.config.ms)); return { read: (await res.json()).path }; } }),
    sdk.action({ id: "exit", name: "exit", description: "ends its worker thread", sideEffects: "external", props: {},
      run: () => { process.exit(7); } }),
    sdk.action({ id: "throw_later", name: "throw later", description: "an uncaught error in its worker thread", sideEffects: "external", props: {},
      run: () => new Promise(() => { setTimeout(() => { throw new Error("fatal error outside the step"); }, 0); }) }),
  ],
});
`;

/** The outside world the workflows act on: counts every request; `/slow/...` never answers. */
const hits = new Map<string, number>();
let world: ReturnType<typeof Bun.serve>;
let server: ServerHandle | undefined;
let env: Record<string, string>;

beforeAll(() => {
  world = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path.startsWith("/slow/")) return new Promise<Response>(() => {});
      return Response.json({ path });
    },
  });
  const piecesDir = mkdtempSync(join(tmpdir(), "weft-crashy-"));
  writeFileSync(join(piecesDir, "crashy.ts"), PIECE);
  env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_PIECES_DIR: piecesDir, WEFT_WORKERS: "1", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" };
});
afterAll(async () => {
  await server?.stop("SIGKILL");
  world.stop(true);
});

const worldUrl = (path: string) => `http://127.0.0.1:${world.port}${path}`;
const get = (path: string) => ({
  type: "PIECE",
  pieceId: "http",
  actionId: "send_request",
  config: { method: "GET", url: worldUrl(path), timeout_ms: 120000 },
});
const sleep = (ms: number) => ({ type: "PIECE", pieceId: "crashy", actionId: "sleep", config: { ms } });
const text = (template: string) => ({ type: "PIECE", pieceId: "text", actionId: "template", config: { template } });
const crashy = (actionId: string) => ({ type: "PIECE", pieceId: "crashy", actionId, config: {} });

function chain(...steps: Array<[string, Record<string, unknown>]>): Record<string, unknown> | undefined {
  let next: Record<string, unknown> | undefined;
  for (const [name, step] of steps.reverse()) next = { name, ...step, ...(next ? { nextAction: next } : {}) };
  return next;
}

const manual = (first: Record<string, unknown> | undefined) => ({
  schemaVersion: 2,
  trigger: { name: "trigger", type: "manual", config: {}, nextAction: first },
  settings: {},
  variables: {},
});

async function json(res: Response | Promise<Response>) {
  const answer = await res;
  return { status: answer.status, body: (await answer.json()) as any };
}

async function createWorkflow(s: ServerHandle, name: string, definition: unknown): Promise<string> {
  const res = await json(
    s.fetch("/api/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, definition }) }),
  );
  if (res.status !== 201) throw new Error(`create ${name}: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

async function startRun(s: ServerHandle, workflowId: string, environment = "test"): Promise<string> {
  const res = await json(
    s.fetch(`/api/workflows/${workflowId}/run?environment=${environment}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
  );
  if (res.status !== 202) throw new Error(`run: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

const getRun = async (s: ServerHandle, id: string) => (await json(s.fetch(`/api/runs/${id}`))).body.data;

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what} not reached within ${timeoutMs} ms; last: ${JSON.stringify(value)?.slice(0, 800)}\n${server?.output().slice(-2000)}`);
    await Bun.sleep(25);
  }
}

const finished = (run: any) => run && ["completed", "failed", "cancelled"].includes(run.status);
const stepsOf = (run: any) => run.steps.map((s: any) => [s.nodeId, s.status]);

/** SIGKILL, then a new process on the same data directory. */
async function crashAndRestart(): Promise<ServerHandle> {
  const old = server!;
  expect(await old.stop("SIGKILL")).not.toBe(0);
  server = await startServer({ dataDir: old.dataDir, env });
  return server;
}

describe("SIGKILL mid-run", () => {
  test("a run cut off in a step with side effects fails; runs cut off in pure steps resume; nothing completed runs twice", async () => {
    server = await startServer({ env });
    const s = server;
    const cut = await createWorkflow(
      s,
      "cut in a side effect",
      manual(chain(["before", get("/count/cut")], ["hang", get("/slow/cut")], ["after", text("never")])),
    );
    const mixed = await createWorkflow(
      s,
      "cut in a pure step after a side effect",
      manual(chain(["effect", get("/count/mixed")], ["think", sleep(2500)], ["after", text("done {{effect.output.body.path}}")])),
    );
    const pure = await createWorkflow(s, "pure only", manual(chain(["a", text("one")], ["think", sleep(2500)], ["b", text("{{a.output.text}} two")])));
    const runs = { cut: await startRun(s, cut), mixed: await startRun(s, mixed), pure: await startRun(s, pure) };

    // Kill when: the hanging request arrived, and the other two runs are inside their slow pure step.
    await until(
      async () => hits.get("/slow/cut") ?? 0,
      (n) => n === 1,
      "the hanging request",
    );
    await until(
      () => getRun(s, runs.mixed),
      (r) => r.steps?.some((x: any) => x.nodeId === "effect" && x.status === "completed"),
      "mixed: effect done",
    );
    await until(
      () => getRun(s, runs.pure),
      (r) => r.steps?.some((x: any) => x.nodeId === "a" && x.status === "completed"),
      "pure: a done",
    );
    await Bun.sleep(300); // the finished steps' rows are group-committed within a turn of the event loop
    expect(hits.get("/count/cut")).toBe(1);
    expect(hits.get("/count/mixed")).toBe(1);
    for (const id of Object.values(runs)) expect((await getRun(s, id)).status).toBe("running");

    const next = await crashAndRestart();
    const [cutRun, mixedRun, pureRun] = await Promise.all(Object.values(runs).map((id) => until(() => getRun(next, id), finished, `run ${id} finished`)));

    expect(cutRun.status).toBe("failed");
    expect(cutRun.errorMessage).toStartWith("interrupted by a restart");
    expect(cutRun.errorMessage).toContain('"hang"');
    expect(stepsOf(cutRun)).toEqual([
      ["before", "completed"],
      ["hang", "failed"],
    ]);
    expect(cutRun.steps[1].errorMessage).toBe("interrupted by a restart");

    expect(mixedRun.status).toBe("completed");
    expect(stepsOf(mixedRun)).toEqual([
      ["effect", "completed"],
      ["think", "completed"],
      ["after", "completed"],
    ]);
    expect(mixedRun.steps[2].outputData.text).toBe("done /count/mixed");
    expect(pureRun.status).toBe("completed");
    expect(stepsOf(pureRun)).toEqual([
      ["a", "completed"],
      ["think", "completed"],
      ["b", "completed"],
    ]);
    expect(pureRun.steps[2].outputData.text).toBe("one two");

    // No side effect happened twice: the completed request was replayed, the cut-off one not repeated.
    expect(hits.get("/count/cut")).toBe(1);
    expect(hits.get("/slow/cut")).toBe(1);
    expect(hits.get("/count/mixed")).toBe(1);
    const stuck = await json(next.fetch("/api/runs?status=running"));
    expect(stuck.body.pagination.total).toBe(0);
  }, 40_000);
});

describe("SIGKILL inside a step that only reads", () => {
  const read = (path: string) => ({ type: "PIECE", pieceId: "crashy", actionId: "read", config: { url: worldUrl(path), ms: 3000 } });

  test("the step runs again once and the run completes; interrupted a second time, the run fails", async () => {
    server ??= await startServer({ env });
    let s = server;
    const wf = await createWorkflow(s, "reads", manual(chain(["first", text("one")], ["look", read("/read/once")], ["after", text("{{look.output.read}}")])));
    const runId = await startRun(s, wf);
    await until(
      async () => hits.get("/read/once") ?? 0,
      (n) => n === 1,
      "the read started",
    );
    await Bun.sleep(300);
    s = await crashAndRestart();
    const done = await until(() => getRun(s, runId), finished, "run finished after one restart");
    expect(done.status).toBe("completed");
    expect(stepsOf(done)).toEqual([
      ["first", "completed"],
      ["look", "completed"],
      ["after", "completed"],
    ]);
    expect(done.steps[1].retryCount).toBe(1);
    expect(done.steps[2].outputData.text).toBe("/read/once");
    expect(hits.get("/read/once")).toBe(2);

    // Twice: the retry itself is cut off, so the run fails rather than looping.
    const twice = await createWorkflow(s, "reads twice", manual(chain(["look", read("/read/twice")], ["after", text("never")])));
    const second = await startRun(s, twice);
    await until(
      async () => hits.get("/read/twice") ?? 0,
      (n) => n === 1,
      "the read started",
    );
    await Bun.sleep(300);
    s = await crashAndRestart();
    await until(
      async () => hits.get("/read/twice") ?? 0,
      (n) => n === 2,
      "the read retried",
    );
    await Bun.sleep(300);
    s = await crashAndRestart();
    const failed = await until(() => getRun(s, second), finished, "run finished after two restarts");
    expect(failed.status).toBe("failed");
    expect(failed.errorMessage).toContain('interrupted by a restart while step "look" was running');
    expect(hits.get("/read/twice")).toBe(2);
  }, 60_000);
});

describe("SIGKILL while starts are being accepted", () => {
  test("every start that got a 2xx (webhook or API) exists after the restart, and finishes", async () => {
    server ??= await startServer({ env });
    const s = server;
    const definition = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "webhook",
        pieceId: "webhook",
        actionId: "catch_webhook",
        config: {},
        nextAction: { name: "a", ...text("{{trigger.body.i}}") },
      },
      settings: {},
      variables: {},
    };
    const id = await createWorkflow(s, "burst", definition);
    const published = await json(s.fetch(`/api/workflows/${id}/publish`, { method: "POST" }));
    expect(published.status).toBe(200);
    const webhookUrl: string = (await json(s.fetch(`/api/workflows/${id}`))).body.data.webhookUrl;
    expect(webhookUrl).toStartWith(s.url);

    const TOTAL = 300;
    const accepted: Array<{ runId: string; via: string; i: number }> = [];
    let answered = 0;
    let refused = 0;
    let sent = 0;
    const killAfter = 100;
    let killed: Promise<number> | undefined;
    const unanswered: number[] = [];
    // Every start carries an Idempotency-Key, as a provider retrying deliveries would send.
    const send = (target: ServerHandle, i: number) => {
      const headers = { "content-type": "application/json", "idempotency-key": `start-${i}` };
      const body = JSON.stringify({ i });
      return i % 2 === 0
        ? fetch(webhookUrl.replace(s.url, target.url), { method: "POST", headers, body })
        : target.fetch(`/api/workflows/${id}/run?environment=production`, { method: "POST", headers, body });
    };
    const runIdOf = (i: number, body: any) => (i % 2 === 0 ? body.data.runId : body.data.id);
    const one = async (i: number) => {
      try {
        const res = await send(s, i);
        const body = (await res.json()) as any;
        answered++;
        if (res.status >= 200 && res.status < 300) accepted.push({ runId: runIdOf(i, body), via: i % 2 === 0 ? "webhook" : "api", i });
        else refused++;
      } catch {
        // The connection died with the server: no answer, no promise made.
        unanswered.push(i);
      }
      if (answered === killAfter && !killed) killed = s.stop("SIGKILL");
    };
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (sent < TOTAL) await one(sent++);
      }),
    );
    await killed;
    expect(accepted.length).toBeGreaterThanOrEqual(killAfter - refused);
    expect(accepted.some((a) => a.via === "webhook") && accepted.some((a) => a.via === "api")).toBe(true);

    server = await startServer({ dataDir: s.dataDir, env });
    const next = server;
    const missing: string[] = [];
    for (const { runId } of accepted) if ((await next.fetch(`/api/runs/${runId}`)).status !== 200) missing.push(runId);
    expect(missing).toEqual([]);
    // Retrying with the same keys: an answered start replays its run; one the crash cut off is accepted now
    // (its key, claimed by the dead process, was released at start-up) instead of 409 for a day.
    for (const { i, runId } of accepted.slice(0, 10)) {
      const again = await send(next, i);
      expect(again.headers.get("idempotency-replayed")).toBe("true");
      expect(runIdOf(i, await again.json())).toBe(runId);
    }
    expect(unanswered.length).toBeGreaterThan(0);
    for (const i of unanswered.slice(0, 40)) {
      const retried = await send(next, i);
      expect(retried.status).toBe(202);
      accepted.push({ runId: runIdOf(i, await retried.json()), via: "retry", i });
    }
    // Nothing accepted stays pending or running: every one of them finishes after the restart.
    const unfinished = async () => {
      let n = 0;
      for (const status of ["pending", "running"]) n += (await json(next.fetch(`/api/runs?workflowId=${id}&status=${status}&limit=1`))).body.pagination.total;
      return n;
    };
    await until(unfinished, (n) => n === 0, "all runs finished");
    const done = await json(next.fetch(`/api/runs?workflowId=${id}&status=completed&limit=1`));
    expect(done.body.pagination.total).toBeGreaterThanOrEqual(accepted.length);
  }, 40_000);
});

describe("a worker thread that dies", () => {
  for (const actionId of ["exit", "throw_later"]) {
    test(`(${actionId}) fails its run with the reason; the pool replaces the slot and the next run completes`, async () => {
      server ??= await startServer({ env });
      const s = server;
      const dying = await createWorkflow(s, `dies by ${actionId}`, manual(chain(["boom", crashy(actionId)])));
      const runId = await startRun(s, dying);
      const failed = await until(() => getRun(s, runId), finished, "the crashed run");
      expect(failed.status).toBe("failed");
      expect(failed.errorMessage).toContain('step "boom" failed');
      expect(failed.steps[0].errorMessage).toMatch(
        actionId === "exit"
          ? /^worker thread exited unexpectedly; the step was stopped and the worker replaced$/
          : /^worker thread crashed: fatal error outside the step; the step was stopped and the worker replaced$/,
      );

      const healthy = await createWorkflow(s, `after ${actionId}`, manual(chain(["call", get(`/count/after-${actionId}`)])));
      const next = await startRun(s, healthy);
      const done = await until(() => getRun(s, next), finished, "the next run");
      expect(done.status).toBe("completed");
      expect(hits.get(`/count/after-${actionId}`)).toBe(1);
      expect(s.proc.exitCode).toBeNull();
    }, 20_000);
  }
});
