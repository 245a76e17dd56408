/**
 * Calls one piece action with its context and turns whatever happens into a plain outcome
 * (output, error message, or pause). Used on the main thread for pure steps and inside worker threads.
 */
import type { ActionDef, PauseRequest } from "../pieces-sdk/types";
import { createStepContext, isPauseRequest, type StepContextOptions, type StepEffects } from "./step-context";

export type ActionOutcome =
  | { kind: "ok"; output: unknown; effects: StepEffects }
  | { kind: "error"; message: string; effects: StepEffects }
  | { kind: "pause"; pause: PauseRequest; effects: StepEffects };

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string")
    return (error as { message: string }).message;
  return String(error);
}

/** Synchronous when the action is (most pure actions are): no promise, no extra turn of the event loop. */
export function invokeAction(action: ActionDef, options: StepContextOptions): ActionOutcome | Promise<ActionOutcome> {
  const { ctx, effects } = createStepContext(options);
  let result: unknown;
  try {
    result = action.run(ctx);
  } catch (error) {
    return { kind: "error", message: errorMessage(error), effects };
  }
  if (result !== null && typeof result === "object" && typeof (result as { then?: unknown }).then === "function") {
    return (result as Promise<unknown>).then(
      (output) => outcomeOf(output, effects),
      (error) => ({ kind: "error", message: errorMessage(error), effects }) as ActionOutcome,
    );
  }
  return outcomeOf(result, effects);
}

function outcomeOf(output: unknown, effects: StepEffects): ActionOutcome {
  if (isPauseRequest(output)) {
    const { __pause, ...pause } = output;
    return { kind: "pause", pause: { __pause, ...pause }, effects };
  }
  return { kind: "ok", output: output === undefined ? null : output, effects };
}
