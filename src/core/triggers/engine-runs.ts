/**
 * The engine seen through the trigger ports: `start` inserts inside the caller's transaction
 * (`engine.enqueue`: a schedule's instant or a poll's baseline commits together with its run),
 * `enqueue` is the group-committed start for webhooks (`engine.startRun`), and the reply of a
 * synchronous webhook comes from `engine.waitForReply` (and a slow check for a run that paused).
 */
import type { Engine } from "../../engine/engine";
import type { RunReply, TriggerRunInput, TriggerRunStarter, WebhookRunStarter } from "./ports";

export function engineRuns(engine: () => Engine): TriggerRunStarter & WebhookRunStarter {
  const inputOf = (input: TriggerRunInput) => ({
    workspaceId: input.workspaceId,
    workflowId: input.workflowId,
    environment: input.environment,
    triggerType: input.triggerType,
    triggerData: input.triggerData as Record<string, unknown>,
  });
  return {
    start: (input) => engine().enqueue(inputOf(input)).id,
    async enqueue(input, options) {
      const runId = await engine().startRunId(inputOf(input));
      if (!options.awaitReply) return { runId };
      return { runId, reply: replyOf(engine(), runId, options.timeoutMs) };
    },
  };
}

/** How often a synchronous webhook still waiting checks whether its run paused. */
const PAUSE_CHECK_MS = 200;

/** The first of: the respond step's reply, the run's end, the run pausing, the timeout. */
function replyOf(engine: Engine, runId: string, timeoutMs: number): Promise<RunReply> {
  return new Promise<RunReply>((resolve) => {
    let settled = false;
    const settle = (reply: RunReply) => {
      if (settled) return;
      settled = true;
      clearInterval(pauseCheck);
      resolve(reply);
    };
    // A paused run (delay, approval) may wait for days: answer 202 rather than hold the connection.
    // Checked on a slow timer instead of subscribing to the run's events, which would make the engine
    // build an event for every step of every synchronous run; fast runs never reach the first check.
    const pauseCheck = setInterval(() => {
      if (engine.current(runId)?.status === "paused") settle({ kind: "paused" });
    }, PAUSE_CHECK_MS);
    engine.waitForReply(runId, timeoutMs).then((result) => {
      if (result.reply) return settle({ kind: "reply", status: result.reply.status, headers: result.reply.headers ?? {}, body: result.reply.body });
      const status = result.run?.status;
      if (status === "paused") return settle({ kind: "paused" });
      if (result.timedOut) return settle({ kind: "timeout" });
      if (status === "failed" || status === undefined) return settle({ kind: "failed", errorMessage: result.run?.errorMessage ?? null });
      settle({ kind: "finished", status });
    }, () => settle({ kind: "failed", errorMessage: null }));
  });
}
