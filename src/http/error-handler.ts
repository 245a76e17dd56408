/**
 * Turns anything thrown into the envelope `{"error": {"code", "message"}}` with the right status.
 * Validation messages name the path and the expected type or values; unknown keys name the allowed keys.
 */
import { ValueErrorType } from "@sinclair/typebox/errors";
import { StorageError } from "../lib/storage-error";
import { AppError, errorBody } from "./errors";

export interface ErrorResponse {
  status: number;
  body: ReturnType<typeof errorBody>;
  headers?: Record<string, string>;
  /** True when the error is the server's fault and worth logging with its stack. */
  internal?: boolean;
}

interface ValueErrorLike {
  type: number;
  path: string;
  message: string;
  schema: SchemaLike;
  value?: unknown;
}

/** The parts of a JSON Schema that messages describe. */
export interface SchemaLike {
  type?: string;
  format?: string;
  anyOf?: SchemaLike[];
  enum?: unknown[];
  const?: unknown;
  items?: SchemaLike;
  properties?: Record<string, SchemaLike>;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

const where = (on: string, path: string) => `${on}${path || ""}`.replace(/^body\//, "body.").replace(/\//g, ".");

/** Describes what a schema accepts, for messages: enum values, const, type and bounds. */
export function describeExpected(schema: SchemaLike | undefined): string {
  if (!schema || typeof schema !== "object") return "a valid value";
  const literals = (schema.anyOf ?? []).filter((s) => s.const !== undefined).map((s) => JSON.stringify(s.const));
  if (literals.length > 0 && literals.length === schema.anyOf?.length) return `one of ${literals.join(", ")}`;
  if (schema.enum) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf) return schema.anyOf.map((s) => describeExpected(s)).join(" or ");
  if (schema.type === "array" && schema.items) return `array of ${describeExpected(schema.items)}`;
  const parts = [schema.format ? `${schema.type} (${schema.format})` : String(schema.type ?? "a value")];
  if (schema.minLength !== undefined) parts.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined) parts.push(`>= ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`<= ${schema.maximum}`);
  if (schema.pattern !== undefined) parts.push(`matching ${schema.pattern}`);
  return parts.join(", ");
}

export function validationResponse(on: string, errors: ValueErrorLike[]): ErrorResponse {
  const unknown = errors.find((e) => e.type === ValueErrorType.ObjectAdditionalProperties);
  if (unknown) {
    const allowed = Object.keys(unknown.schema?.properties ?? {});
    const key = unknown.path.split("/").pop();
    return {
      status: 400,
      body: errorBody("UNKNOWN_FIELD", `unknown field "${key}" at ${where(on, unknown.path)}; allowed keys: ${allowed.join(", ") || "none"}`, {
        path: where(on, unknown.path),
        allowed,
      }),
    };
  }
  // Prefer the most specific error: a missing required property or a leaf type mismatch.
  const first = errors.find((e) => e.type !== ValueErrorType.Union && e.type !== ValueErrorType.Object) ?? errors[0];
  if (!first) return { status: 400, body: errorBody("VALIDATION_FAILED", `invalid ${on}`) };
  const path = where(on, first.path);
  const message =
    first.type === ValueErrorType.ObjectRequiredProperty
      ? `${path} is required (${describeExpected(first.schema)})`
      : `${path}: ${first.message.toLowerCase()}; expected ${describeExpected(first.schema)}${first.value !== undefined ? `, got ${JSON.stringify(first.value)?.slice(0, 80)}` : ""}`;
  return { status: 400, body: errorBody("VALIDATION_FAILED", message, { path, expected: describeExpected(first.schema) }) };
}

/**
 * Tells a storage error thrown untranslated (a store method's driver error) as Weft's, by its kind. The
 * composition root hands it in from the store (src/http knows no database's codes); errors the store
 * translated already are StorageErrors.
 */
export type StorageErrorClassifier = (error: unknown) => StorageError | undefined;

export function toErrorResponse(
  code: string | number,
  error: any,
  requestId: string,
  method: string,
  path: string,
  classifyStorageError: StorageErrorClassifier,
): ErrorResponse {
  // Elysia wraps what a parser throws; our parser throws AppErrors.
  if (code === "PARSE" && error?.cause instanceof AppError) error = error.cause;
  if (error instanceof AppError) {
    return { status: error.status, body: errorBody(error.code, error.message, error.details), headers: error.headers };
  }
  switch (code) {
    case "NOT_FOUND":
      return { status: 404, body: errorBody("NOT_FOUND", `no route for ${method} ${path}; the routes are listed in GET /api/openapi.json`) };
    case "VALIDATION":
      return validationResponse(String(error.type ?? "request"), (error.all ?? []) as ValueErrorLike[]);
    case "PARSE":
      return {
        status: 400,
        body: errorBody("VALIDATION_FAILED", `request body could not be parsed for its Content-Type: ${error?.cause?.message ?? error.message}`),
      };
    case "INVALID_COOKIE_SIGNATURE":
      return { status: 400, body: errorBody("VALIDATION_FAILED", "cookie signature is invalid") };
  }
  if (typeof error?.status === "number" && error.status >= 400 && error.status < 500) {
    return { status: error.status, body: errorBody(error.status === 413 ? "PAYLOAD_TOO_LARGE" : "VALIDATION_FAILED", String(error.message)) };
  }
  const stored = error instanceof StorageError ? error : classifyStorageError(error);
  if (stored?.kind === "not_storable") {
    return {
      status: 400,
      body: errorBody(
        "VALIDATION_FAILED",
        "the request holds a NUL character (U+0000, written \\u0000 in JSON), which this server's PostgreSQL storage cannot store; nothing was written. Remove it, or run Weft on SQLite, which keeps it",
      ),
    };
  }
  if (stored?.kind === "full") {
    return {
      status: 503,
      body: errorBody("SERVICE_UNAVAILABLE", `storage is full; nothing was written. Free disk space and retry (request ${requestId})`),
      headers: { "retry-after": "30" },
    };
  }
  return { status: 500, body: errorBody("INTERNAL", `internal error; quote request id ${requestId} when reporting it`), internal: true };
}
