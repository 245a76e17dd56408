/**
 * The engine seen through the trigger ports: `start` inserts inside the caller's transaction
 * (`engine.enqueue`: a schedule's instant or a poll's baseline commits together with its run),
 * `enqueue` is the group-committed start for webhooks (`engine.startRun`), and the reply of a
 * synchronous webhook comes from `engine.waitForReply` plus the run's `paused` event.
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
      const run = await engine().startRun(inputOf(input));
      if (!options.awaitReply) return { runId: run.id };
      return { runId: run.id, reply: replyOf(engine(), run.id, options.timeoutMs) };
    },
  };
}

/** The first of: the respond step's reply, the run's end, the run pausing, the timeout. */
function replyOf(engine: Engine, runId: string, timeoutMs: number): Promise<RunReply> {
  return new Promise<RunReply>((resolve) => {
    let settled = false;
    const settle = (reply: RunReply) => {
      if (settled) return;
      settled = true;
      unsubscribe();
      resolve(reply);
    };
    // A paused run (delay, approval) may wait for days: answer 202 rather than hold the connection.
    const unsubscribe = engine.events.subscribe(runId, (event) => {
      if (event.type === "run" && event.run.status === "paused") settle({ kind: "paused" });
    });
    engine.waitForReply(runId, timeoutMs).then((result) => {
      if (result.reply) return settle({ kind: "reply", status: result.reply.status, headers: result.reply.headers ?? {}, body: result.reply.body });
      if (result.timedOut) return settle({ kind: "timeout" });
      const status = result.run?.status ?? "failed";
      if (status === "failed") return settle({ kind: "failed", errorMessage: result.run?.errorMessage ?? null });
      if (status === "paused") return settle({ kind: "paused" });
      settle({ kind: "finished", status });
    }, () => settle({ kind: "failed", errorMessage: null }));
    // The run may have paused before anyone listened.
    if (engine.current(runId)?.status === "paused") settle({ kind: "paused" });
  });
}
