/**
 * Strict JSON request bodies: size limit, nesting limit and prototype-polluting keys refused
 * before any handler sees the value.
 */
import { AppError } from "./errors";

export const MAX_JSON_DEPTH = 64;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Throws VALIDATION_FAILED when `value` nests deeper than `maxDepth` or holds a forbidden key. */
export function assertSafeJson(value: unknown, maxDepth = MAX_JSON_DEPTH): void {
  const stack: Array<[unknown, number, string]> = [[value, 1, ""]];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > maxDepth) {
      throw new AppError("VALIDATION_FAILED", `JSON nests deeper than ${maxDepth} levels at ${path || "/"}; flatten the document`);
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) stack.push([node[i], depth + 1, `${path}/${i}`]);
      continue;
    }
    for (const key of Object.keys(node)) {
      if (FORBIDDEN_KEYS.has(key)) {
        throw new AppError("VALIDATION_FAILED", `key "${key}" at ${path || "/"} is not allowed; the keys __proto__, constructor and prototype are refused everywhere`);
      }
      stack.push([(node as Record<string, unknown>)[key], depth + 1, `${path}/${key}`]);
    }
  }
}

export function assertBodySize(request: Request, limit: number): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    throw new AppError("PAYLOAD_TOO_LARGE", `request body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
}

/** Reads and parses a JSON body under the size limit. An empty body parses to undefined. */
export async function parseJsonBody(request: Request, limit: number): Promise<unknown> {
  assertBodySize(request, limit);
  const text = await request.text();
  if (text.length > limit && Buffer.byteLength(text) > limit) {
    throw new AppError("PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${limit} bytes`);
  }
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError("VALIDATION_FAILED", `request body is not valid JSON: ${(error as Error).message}`);
  }
  assertSafeJson(value);
  return value;
}
