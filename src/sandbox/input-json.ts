/**
 * JSON in: the input crosses into the sandbox as JSON text. Nesting is measured first, without
 * recursion, because a 100k-deep value would overflow the host's own stack in JSON.stringify and
 * the sandbox's JSON.parse recurses too.
 */
import { MAX_INPUT_DEPTH } from "./limits";

export type InputJson = { ok: true; json: string } | { ok: false; error: string };

/** Depth of the deepest array/object, counting the outer value as 1; stops counting past `limit`. */
export function jsonDepth(value: unknown, limit: number): number {
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  const stack: Array<[object, number]> = [[value as object, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return deepest;
}

export function inputToJson(input: unknown): InputJson {
  if (input === undefined) return { ok: true, json: "null" };
  if (jsonDepth(input, MAX_INPUT_DEPTH) > MAX_INPUT_DEPTH) {
    return { ok: false, error: `input is nested more than ${MAX_INPUT_DEPTH} levels deep; flatten it or pass the part the code needs` };
  }
  try {
    return { ok: true, json: JSON.stringify(input) ?? "null" };
  } catch (error) {
    return { ok: false, error: `input is not JSON (${(error as Error).message}); pass plain objects, arrays, strings, numbers, booleans and null` };
  }
}
