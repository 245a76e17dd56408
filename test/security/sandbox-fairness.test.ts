/**
 * A fair sandbox, on a real server: twenty webhook calls at once, each run holding a code step that
 * busy-waits 1.5 s (of its 5 s limit) and then a 3 s delay. Every run completes: waiting for a sandbox
 * process does not count against a call's time limit, and no call is killed for another's sake. (Before,
 * 18 of 20 failed: queued calls' limits ran while they waited, and each kill took an innocent call with it.)
 */
import { BURST_DEFINITION } from "../support/burst-workflow";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../support/server";

let server: ServerHandle;
beforeAll(async () => {
  server = await startServer({ env: { WEFT_SANDBOX_PROCESSES: "2", WEFT_FLOOD_LIMIT: "0", WEFT_RATE_LIMIT: "0" } });
});
afterAll(() => server?.stop());

describe("sandbox fairness under a burst", () => {
  test("20 concurrent runs with a 1.5 s code step complete 20 of 20, none failed", async () => {
    const definition = BURST_DEFINITION;
    const created = await (
      await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Burst", definition }),
      })
    ).json();
    const published = await (await server.fetch(`/api/workflows/${created.data.id}/publish`, { method: "POST" })).json();
    expect(published.data.status).toBe("active");
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        fetch(`${server.url}/webhook/${created.data.webhookToken}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ n }),
        }).then((r) => r.status),
      ),
    );
    expect(answers).toEqual(Array(20).fill(202));

    // While most runs wait for one of the two sandbox processes, they say so: in run detail and on their stream.
    let waiting: any;
    const seenBy = Date.now() + 10_000;
    while (!waiting && Date.now() < seenBy) {
      const running = (await (await server.fetch(`/api/runs?workflowId=${created.data.id}&status=running&limit=50`)).json()).data;
      for (const run of running) {
        const detail = (await (await server.fetch(`/api/runs/${run.id}`)).json()).data;
        if (detail.waiting) {
          waiting = detail;
          break;
        }
      }
      if (!waiting) await Bun.sleep(100);
    }
    expect(waiting?.waiting).toMatchObject({ step: "busy", reason: "a sandbox" });
    const stream = await server.fetch(`/api/runs/${waiting.id}/stream`);
    const reader = stream.body!.getReader();
    let text = "";
    // Read until the wait is over: after the event showing it, the busy step's row arrives.
    while (!(text.includes('"waiting"') && text.slice(text.indexOf('"waiting"')).includes('"nodeId":"busy"'))) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    // The stream shows the run waiting, then the busy step's row once a process has run it.
    expect(text).toContain('"waiting":{"step":"busy","reason":"a sandbox"');
    expect(text.slice(text.indexOf('"waiting"'))).toContain('"nodeId":"busy"');

    // 20 × 1.5 s over 2 sandbox processes, plus the delay: ~18 s. Bounded at 75 s.
    const deadline = Date.now() + 75_000;
    let runs: any[] = [];
    for (;;) {
      runs = (await (await server.fetch(`/api/runs?workflowId=${created.data.id}&limit=50`)).json()).data;
      if (runs.length === 20 && runs.every((run) => ["completed", "failed", "cancelled"].includes(run.status))) break;
      if (Date.now() > deadline) break;
      await Bun.sleep(500);
    }
    const failed = runs.filter((run) => run.status !== "completed").map((run) => `${run.status}: ${run.errorMessage}`);
    expect(failed).toEqual([]);
    expect(runs.length).toBe(20);
  }, 90_000);
});
