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
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") return (error as { message: string }).message;
  return String(error);
}

export async function invokeAction(action: ActionDef, options: StepContextOptions): Promise<ActionOutcome> {
  const { ctx, effects } = createStepContext(options);
  try {
    const output = await action.run(ctx);
    if (isPauseRequest(output)) {
      const { __pause, ...pause } = output;
      return { kind: "pause", pause: { __pause, ...pause }, effects };
    }
    return { kind: "ok", output: output === undefined ? null : output, effects };
  } catch (error) {
    return { kind: "error", message: errorMessage(error), effects };
  }
}
