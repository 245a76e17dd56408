/**
 * Nothing left in between, through five crashes: a real `weft serve` runs a mix of workflows — pure steps
 * only, a busy code step, a delay, an approval wait, a loop, a parent waiting on a sub-flow, a synchronous
 * webhook waiting for its reply — and is SIGKILLed at a random moment, restarted on the same data
 * directory, five times in one test. After each restart, within 15 s:
 * - every run is finished (completed, failed or cancelled) or legitimately paused (an approval, or a delay
 *   whose time has not come); none stays running or pending;
 * - every failed run says why (errorMessage);
 * - no step with a side effect that committed ran twice: each run's steps call a local HTTP sink under a
 *   path of their own, and no path is hit twice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../support/server";

const hits = new Map<string, number>();
let sink: ReturnType<typeof Bun.serve>;
let server: ServerHandle | undefined;
const env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0", WEFT_SANDBOX_PROCESSES: "2" };

beforeAll(() => {
  sink = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      await Bun.sleep(50); // a side effect takes a moment: kills land inside steps too
      return Response.json({ path });
    },
  });
});
afterAll(async () => {
  await server?.stop("SIGKILL");
  sink.stop(true);
});

/** One side effect whose path names the run (by its trigger input) and the step. */
const effect = (name: string, what: string) => ({
  name,
  type: "PIECE",
  pieceId: "http",
  actionId: "send_request",
  config: { method: "GET", url: `http://127.0.0.1:{{variables.sinkPort}}/{{trigger.body.tag}}/${what}`, timeout_ms: 10_000 },
});
const step = (name: string, pieceId: string, actionId: string, config: Record<string, unknown>) => ({ name, type: "PIECE", pieceId, actionId, config });

function chain(...steps: Array<Record<string, unknown>>): Record<string, unknown> | undefined {
  let next: Record<string, unknown> | undefined;
  for (const s of steps.reverse()) next = { ...s, ...(next ? { nextAction: next } : {}) };
  return next;
}
const flow = (trigger: Record<string, unknown>, ...steps: Array<Record<string, unknown>>) => ({
  schemaVersion: 2,
  trigger: { name: "trigger", config: {}, ...trigger, nextAction: chain(...steps) },
});
const manual = { type: "manual" };
const webhook = { type: "webhook", pieceId: "webhook", actionId: "catch_webhook" };

const BUSY = "const t = Date.now(); while (Date.now() - t < 300) {} return { busy: input.tag };";

function definitions(childId: string): Record<string, unknown> {
  return {
    pure: flow(
      manual,
      step("shape", "data", "set_fields", { fields: { tag: "{{trigger.body.tag}}" } }),
      step("say", "text", "template", { template: "hi {{shape.output.tag}}" }),
    ),
    code: flow(manual, step("busy", "code", "run_code", { code: BUSY, input: { tag: "{{trigger.body.tag}}" } }), effect("after", "after-code")),
    delay: flow(manual, effect("before", "before-delay"), step("wait", "delay", "delay_for", { seconds: 1 }), effect("after", "after-delay")),
    approval: flow(manual, effect("before", "before-approval"), step("ask", "approval", "wait_for_approval", {})),
    loop: flow(
      manual,
      {
        name: "each",
        type: "LOOP_ON_ITEMS",
        config: { items: "{{trigger.body.items}}" },
        firstLoopAction: { ...effect("visit", "item-{{each.index}}") },
      },
      effect("done", "loop-done"),
    ),
    parent: flow(
      manual,
      step("call", "subflows", "call_workflow", { workflow_id: childId, payload: { tag: "{{trigger.body.tag}}-child" }, wait: true }),
      effect("after", "after-child"),
    ),
    sync: flow(webhook, effect("work", "sync-work"), step("reply", "webhook", "respond", { status: 200, body: { ok: true } })),
  };
}
const child = flow(
  { type: "callable", pieceId: "subflows", actionId: "callable", config: { fields: [{ name: "tag", type: "text", required: true }] } },
  effect("work", "child-work"),
  step("wait", "delay", "delay_for", { seconds: 1 }),
  step("answer", "subflows", "return_response", { value: "done" }),
);

async function call(s: ServerHandle, method: string, path: string, body?: unknown): Promise<any> {
  const res = await s.fetch(path, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as any;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function create(s: ServerHandle, name: string, definition: unknown): Promise<{ id: string; webhookToken: string | null }> {
  const made = await call(s, "POST", "/api/workflows", { name, definition: { ...(definition as object), variables: { sinkPort: String(sink.port) } } });
  await call(s, "POST", `/api/workflows/${made.data.id}/publish`);
  return { id: made.data.id, webhookToken: made.data.webhookToken };
}

const FINISHED = new Set(["completed", "failed", "cancelled"]);

/** Every run of the workspace, all pages, tests included. */
async function allRuns(s: ServerHandle): Promise<any[]> {
  const runs: any[] = [];
  for (let page = 1; ; page++) {
    const res = await call(s, "GET", `/api/runs?environment=all&limit=100&page=${page}`);
    runs.push(...res.data);
    if (page >= res.pagination.totalPages) return runs;
  }
}

/** A run that may still stand unfinished: waiting for its approval, or for a delay whose time has not come. */
function legitimatelyPaused(run: any): boolean {
  if (run.status !== "paused") return false;
  if (run.resumeMode === "webhook") return true;
  return run.resumeAt !== null && Date.parse(run.resumeAt) > Date.now() - 2_000;
}

describe("SIGKILL at a random moment, five times", () => {
  test("after every restart, within 15 s: runs finished or legitimately paused, failures explained, no side effect twice", async () => {
    server = await startServer({ env });
    const childFlow = await create(server, "child", child);
    const flows: Record<string, { id: string; webhookToken: string | null }> = {};
    for (const [name, definition] of Object.entries(definitions(childFlow.id))) flows[name] = await create(server, name, definition);

    let tag = 0;
    const report: string[] = [];
    for (let cycle = 1; cycle <= 5; cycle++) {
      const s = server!;
      // 8 runs of each of the 7 kinds: 56 started per cycle.
      const starts: Array<Promise<unknown>> = [];
      for (let i = 0; i < 8; i++) {
        for (const [name, wf] of Object.entries(flows)) {
          const body = { tag: `c${cycle}-${name}-${tag++}`, items: [1, 2, 3, 4] };
          if (name === "sync") {
            // The caller waits for the reply; a kill cuts it off, which is fine: the run must still end.
            starts.push(
              fetch(`${s.url}/webhook/${wf.webhookToken}`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify(body),
              }).catch(() => undefined),
            );
          } else {
            starts.push(call(s, "POST", `/api/workflows/${wf.id}/run?environment=production`, body).catch(() => undefined));
          }
        }
      }
      await Bun.sleep(200 + Math.floor(Math.random() * 1_300));
      expect(await s.stop("SIGKILL")).not.toBe(0);
      await Promise.all(starts);
      server = await startServer({ dataDir: s.dataDir, env });

      const deadline = Date.now() + 15_000;
      let unsettled: any[] = [];
      for (;;) {
        const runs = await allRuns(server);
        unsettled = runs.filter((run) => !FINISHED.has(run.status) && !legitimatelyPaused(run));
        if (unsettled.length === 0 || Date.now() > deadline) {
          const failedWithoutReason = runs.filter((run) => run.status === "failed" && !run.errorMessage);
          expect(failedWithoutReason.map((run) => run.id)).toEqual([]);
          const counts: Record<string, number> = {};
          for (const run of runs) counts[run.status] = (counts[run.status] ?? 0) + 1;
          const reasons = new Set(
            runs
              .filter((run) => run.status === "failed")
              .map((run) =>
                String(run.errorMessage)
                  .replace(/[0-9a-f-]{36}/g, "…")
                  .replace(/c\d+-\w+-\d+/g, "…"),
              ),
          );
          report.push(`cycle ${cycle}: ${JSON.stringify(counts)}; failures: ${[...reasons].join(" | ")}`);
          break;
        }
        await Bun.sleep(250);
      }
      expect(unsettled.map((run) => `${run.workflowName} ${run.status} ${run.errorMessage ?? ""} waiting=${JSON.stringify(run.waiting ?? null)}`)).toEqual([]);
      const twice = [...hits].filter(([, n]) => n > 1).map(([path, n]) => `${path} ×${n}`);
      expect(twice).toEqual([]);
    }
    // The cycles did reach the sink and finish work (a test of nothing would pass too).
    expect(hits.size).toBeGreaterThan(50);
    console.log(report.join("\n"));
  }, 180_000);
});
