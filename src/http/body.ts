/**
 * Strict JSON request bodies: size limit, nesting limit, prototype-polluting keys and text that cannot
 * be stored as sent (lone UTF-16 surrogates) refused before any handler sees the value.
 */
import { AppError } from "./errors";

export const MAX_JSON_DEPTH = 64;
/**
 * A workflow's step chain is a sequence written as nesting (`nextAction` inside `nextAction`), so
 * following a `nextAction` key adds no level. Chains get their own, much larger bound that keeps
 * the recursive validators downstream safe; the gate itself allows at most 500 steps.
 */
export const MAX_CHAIN_LENGTH = 2_000;
const CHAIN_KEY = "nextAction";
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * A JSON text that may hold a lone surrogate: one written as an escape (`\ud800`). Raw text decoded
 * from UTF-8 cannot hold one, so bodies without such an escape skip the per-string check.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
export const mayHoldLoneSurrogate = (text: string): boolean => text.includes("\\u") && SURROGATE_ESCAPE.test(text);

function loneSurrogateError(path: string): AppError {
  return new AppError(
    "VALIDATION_FAILED",
    `text at ${path || "/"} holds a lone UTF-16 surrogate (an unpaired \\ud800–\\udfff escape), which is not a character and cannot be stored as sent; send well-formed Unicode (pair the surrogate, or remove it)`,
    { path: path || "/", expected: "well-formed Unicode text" },
  );
}

/**
 * Throws VALIDATION_FAILED when `value` nests deeper than `maxDepth`, holds a forbidden key, or (with
 * `checkText`) a string or key that is not well-formed Unicode — never stored altered (SQLite would keep
 * U+FFFD in its place).
 * A `nextAction` key does not add a level (see MAX_CHAIN_LENGTH); a chain longer than that is refused.
 */
export function assertSafeJson(value: unknown, maxDepth = MAX_JSON_DEPTH, checkText = false): void {
  // Recursion is bounded by maxDepth + MAX_CHAIN_LENGTH; the path is built only when reporting.
  const keys: string[] = [];
  const pathOf = () => shorten(keys.map((k) => `/${k}`).join(""));
  const visit = (node: unknown, depth: number, chain: number): void => {
    if (node === null || typeof node !== "object") {
      if (checkText && typeof node === "string" && !node.isWellFormed()) throw loneSurrogateError(pathOf());
      return;
    }
    if (depth > maxDepth) {
      throw new AppError("VALIDATION_FAILED", `JSON nests deeper than ${maxDepth} levels at ${pathOf() || "/"}; flatten the document`);
    }
    if (chain > MAX_CHAIN_LENGTH) {
      throw new AppError(
        "VALIDATION_FAILED",
        `a chain of more than ${MAX_CHAIN_LENGTH} nested "${CHAIN_KEY}" objects at ${pathOf()}; a workflow holds at most 500 steps`,
      );
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        keys.push(String(i));
        visit(node[i], depth + 1, chain);
        keys.pop();
      }
      return;
    }
    for (const key in node) {
      if (FORBIDDEN_KEYS.has(key)) {
        throw new AppError(
          "VALIDATION_FAILED",
          `key "${key}" at ${pathOf() || "/"} is not allowed; the keys __proto__, constructor and prototype are refused everywhere`,
        );
      }
      keys.push(key);
      if (checkText && !key.isWellFormed()) throw loneSurrogateError(pathOf());
      if (key === CHAIN_KEY) visit((node as Record<string, unknown>)[key], depth, chain + 1);
      else visit((node as Record<string, unknown>)[key], depth + 1, chain);
      keys.pop();
    }
  };
  visit(value, 1, 0);
}

/** Long chain paths are summarised: `/trigger/nextAction×480/config`. */
function shorten(path: string): string {
  return path.replace(/(\/nextAction){4,}/g, (run) => `/nextAction×${run.length / "/nextAction".length}`);
}

/**
 * Operations that read no body (unpublish, oauth2/start, a backup now: docs/api.md, docs/connections.md): whatever is sent, even
 * malformed JSON, is not parsed, so it cannot turn the call into a 400.
 */
export const BODYLESS_ROUTES: ReadonlySet<string> = new Set([
  "POST /api/workflows/:id/unpublish",
  "POST /api/connections/:id/oauth2/start",
  "POST /api/backups",
  "POST /api/git/ssh-key",
]);

export function assertBodySize(request: Request, limit: number): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    throw new AppError("PAYLOAD_TOO_LARGE", `request body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
}

/**
 * The body's bytes, never more than `limit`: a declared Content-Length was checked already and frames
 * the read; a chunked body is counted as it arrives and refused the moment it passes the limit.
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  assertBodySize(request, limit);
  if (!request.body) return new Uint8Array(0);
  if (request.headers.get("content-length") !== null) return new Uint8Array(await request.arrayBuffer());
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw new AppError("PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder();

/** The body as text under the same bound as readBodyBytes; a declared length is read and decoded in one native step. */
async function readBodyText(request: Request, limit: number): Promise<string> {
  if (request.headers.get("content-length") === null) return utf8.decode(await readBodyBytes(request, limit));
  assertBodySize(request, limit);
  return request.text();
}

/** Reads and parses a JSON body under the size limit. An empty body parses to undefined. */
export async function parseJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readBodyText(request, limit);
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError("VALIDATION_FAILED", `request body is not valid JSON: ${(error as Error).message}`);
  }
  assertSafeJson(value, MAX_JSON_DEPTH, mayHoldLoneSurrogate(text));
  return value;
}
