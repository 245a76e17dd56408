/**
 * Turns an inbound webhook call into the run's triggerData `{method, headers, query, body}`.
 * The body is parsed strictly by its Content-Type and kept as data: nothing in it is ever
 * evaluated as an expression (the engine evaluates `{{ }}` only in step config).
 *
 *   JSON (application/json, *+json)          → the parsed value (invalid JSON is a 400)
 *   application/x-www-form-urlencoded        → { field: value | [values] }
 *   multipart/form-data                      → fields as above; files as { filename, contentType, size, encoding: "base64", data }
 *   text/*, application/xml, *+xml           → the text
 *   anything else with bytes (or no type)    → { encoding: "base64", contentType, size, data }
 *   no body                                  → {}
 */
import { assertSafeJson, readBodyBytes } from "../../http/body";
import { AppError } from "../../http/errors";

export interface WebhookTriggerData {
  method: string;
  headers: Record<string, string>;
  query: Record<string, string | string[]>;
  body: unknown;
}

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** The media type without parameters, lowercased: `application/json; charset=utf-8` → `application/json`. */
export function mediaType(contentType: string | null | undefined): string {
  if (!contentType) return "";
  const semicolon = contentType.indexOf(";");
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

const isJson = (type: string) => type === "application/json" || type.endsWith("+json");
const isText = (type: string) => type.startsWith("text/") || type === "application/xml" || type.endsWith("+xml") || type === "application/javascript";

/** Reads the raw body under the limit (a chunked body has no Content-Length to check up front). */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    throw new AppError("PAYLOAD_TOO_LARGE", `webhook body of ${declared} bytes exceeds the limit of ${limit} bytes (WEFT_BODY_LIMIT)`);
  }
  return readBodyBytes(request, limit);
}

/** Parses raw bytes according to the Content-Type. */
export async function parseBody(bytes: Uint8Array, contentType: string | null): Promise<unknown> {
  if (bytes.byteLength === 0) return {};
  const type = mediaType(contentType);
  if (isJson(type)) return parseJson(new TextDecoder().decode(bytes));
  if (type === "application/x-www-form-urlencoded") return fields(new URLSearchParams(new TextDecoder().decode(bytes)));
  if (type === "multipart/form-data") return parseMultipart(bytes, contentType!);
  if (isText(type)) return new TextDecoder().decode(bytes);
  return { encoding: "base64", contentType: type || "application/octet-stream", size: bytes.byteLength, data: Buffer.from(bytes).toString("base64") };
}

/** For a body another parser already read as JSON (the app-wide JSON parser): normalise empty to {}. */
export function normaliseParsedJson(value: unknown): unknown {
  return value === undefined || value === null ? {} : value;
}

export function parseJson(text: string): unknown {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError(
      "VALIDATION_FAILED",
      `webhook body is not valid JSON although Content-Type says JSON: ${(error as Error).message}; send valid JSON or another Content-Type (text/plain, application/x-www-form-urlencoded, application/octet-stream)`,
    );
  }
  assertSafeJson(value);
  return value;
}

function addField(target: Record<string, unknown>, key: string, value: unknown) {
  if (FORBIDDEN_KEYS.has(key)) {
    throw new AppError("VALIDATION_FAILED", `field name "${key}" is not allowed; the names __proto__, constructor and prototype are refused`);
  }
  const existing = target[key];
  if (existing === undefined) target[key] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else target[key] = [existing, value];
}

function fields(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of params) addField(out, key, value);
  return out;
}

async function parseMultipart(bytes: Uint8Array, contentType: string): Promise<Record<string, unknown>> {
  let form: FormData;
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": contentType } }).formData();
  } catch (error) {
    throw new AppError(
      "VALIDATION_FAILED",
      `webhook body is not valid multipart/form-data: ${(error as Error).message}; check the boundary parameter of the Content-Type`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of form) {
    if (typeof value === "string") addField(out, key, value);
    else {
      const data = new Uint8Array(await value.arrayBuffer());
      addField(out, key, {
        filename: value.name,
        contentType: value.type || "application/octet-stream",
        size: data.byteLength,
        encoding: "base64",
        data: Buffer.from(data).toString("base64"),
      });
    }
  }
  return out;
}

/** Lowercased header names; repeated headers are already joined by the Fetch API. */
export function headersOf(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  request.headers.forEach((value, key) => {
    if (!FORBIDDEN_KEYS.has(key)) out[key] = value;
  });
  return out;
}

export function queryOf(url: string): Record<string, string | string[]> {
  const question = url.indexOf("?");
  if (question === -1) return {};
  const hash = url.indexOf("#", question);
  return fields(new URLSearchParams(url.slice(question + 1, hash === -1 ? undefined : hash)));
}
