/**
 * The engine seen through the trigger ports: `start` inserts as part of the caller's unit of work
 * (`engine.enqueue`: a schedule's instant or a poll's baseline commits together with its run),
 * `enqueue` is the group-committed start for webhooks (`engine.startRun`), and the reply of a
 * synchronous webhook comes from `engine.waitForReply` (and a slow check for a run that paused).
 */
import type { Engine } from "../../engine/engine";
import type { RunReply, SubscriptionRuns, TriggerRunInput, TriggerRunStarter } from "./ports";

export function engineRuns(engine: () => Engine): TriggerRunStarter & SubscriptionRuns {
  const inputOf = (input: TriggerRunInput) => ({
    workspaceId: input.workspaceId,
    workflowId: input.workflowId,
    environment: input.environment,
    triggerType: input.triggerType,
    triggerData: input.triggerData as Record<string, unknown>,
    traceparent: input.traceparent,
  });
  return {
    start: async (input, unit) => (await engine().enqueue(inputOf(input), unit)).id,
    async enqueue(input, options) {
      const runId = await engine().startRunId(inputOf(input), { keepReply: options.awaitReply });
      if (!options.awaitReply) return { runId };
      return { runId, reply: replyOf(engine(), runId, options.timeoutMs) };
    },
    async recentTriggerBodies(workflowId, limit) {
      await engine().committed();
      const recent = await engine().recentTriggerData(workflowId, "subscription", limit);
      return recent.map((data) => (data as { body?: unknown }).body ?? null);
    },
  };
}

/** How often synchronous webhooks still waiting check whether their run paused. */
const PAUSE_CHECK_MS = 200;

/**
 * The first of: the respond step's reply, the run's end, the run pausing, the timeout.
 * A paused run (delay, approval) may wait for days: the caller is answered 202 rather than held. That is
 * checked on one slow timer for all waiting callers instead of subscribing to each run's events (which would
 * make the engine build an event for every step of every synchronous run) or a timer per call; fast runs
 * are answered before the first check.
 */
function replyOf(engine: Engine, runId: string, timeoutMs: number): Promise<RunReply> {
  return new Promise<RunReply>((resolve) => {
    let settled = false;
    const settle = (reply: RunReply) => {
      if (settled) return;
      settled = true;
      pauseWatch.remove(settle);
      resolve(reply);
    };
    pauseWatch.add(engine, runId, settle);
    engine.waitForReply(runId, timeoutMs).then(
      async (result) => {
        if (result.reply) return settle({ kind: "reply", status: result.reply.status, headers: result.reply.headers ?? {}, body: result.reply.body });
        const run = await result.run;
        const status = run?.status;
        if (status === "paused") return settle({ kind: "paused" });
        if (result.timedOut) return settle({ kind: "timeout" });
        if (status === "failed" || status === undefined) return settle({ kind: "failed", errorMessage: run?.errorMessage ?? null });
        settle({ kind: "finished", status });
      },
      () => settle({ kind: "failed", errorMessage: null }),
    );
  });
}

type Waiter = (reply: RunReply) => void;

/** One timer for every synchronous caller waiting on a run: it runs only while someone waits. */
const pauseWatch = {
  waiting: new Map<Waiter, { engine: Engine; runId: string }>(),
  timer: undefined as ReturnType<typeof setInterval> | undefined,
  add(engine: Engine, runId: string, waiter: Waiter) {
    this.waiting.set(waiter, { engine, runId });
    this.timer ??= setInterval(() => this.check(), PAUSE_CHECK_MS);
  },
  remove(waiter: Waiter) {
    this.waiting.delete(waiter);
    if (this.waiting.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  },
  check() {
    for (const [waiter, { engine, runId }] of [...this.waiting]) {
      engine.current(runId).then(
        (run) => run?.status === "paused" && this.waiting.has(waiter) && waiter({ kind: "paused" }),
        // The database did not answer this time; the next check, the run's end or the reply timeout answers the caller.
        () => {},
      );
    }
  },
};
