/**
 * The HTTP call pieces share (docs/pieces.md, "HTTP from a piece"): one request through the context's
 * guarded fetch (`ctx.fetch`, the SSRF guard — never the global fetch), its answer read as JSON or text,
 * a refusal thrown as an `HttpStatusError` that names the status and the service's own reason (or a short
 * excerpt of the body), and a bounded retry of idempotent requests that met a 502, 503 or 504.
 *
 *   const issues = await httpRequest(ctx.fetch, `${API}/repos/${repo}/issues`, { service: "GitHub", signal: ctx.signal });
 *   // a 404 throws: GitHub answered 404 to GET /repos/x/y/issues: Not Found
 */
import type { GuardedFetch } from "./types";

/** Methods a repeated request does no more harm than a single one (RFC 9110, "Idempotent Methods"). */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** Answers of a proxy or an overloaded server, worth one more try a moment later. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** The most characters of a body a message quotes. */
export const EXCERPT_CHARS = 200;

/** The longest wait between two attempts; a longer Retry-After ends the retries instead. */
export const MAX_RETRY_WAIT_MS = 10_000;

export interface HttpRetry {
  /** Attempts in all, the first included (1: no retry); 1 to 5. */
  attempts: number;
  /** The wait before the second attempt, doubled before each next (as an action's `retry.backoffMs`). */
  backoffMs: number;
  /** Waits `ms`, or rejects when `signal` aborts first; tests pass one that records and does not wait. */
  wait: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Waits on a timer, ended early (rejecting with the signal's reason) when the signal aborts. */
export function waitOrAbort(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

export const DEFAULT_RETRY: HttpRetry = { attempts: 3, backoffMs: 500, wait: waitOrAbort };

export interface HttpCall {
  /** Who answers, as the subject of messages: "GitHub", "the LLM server", "ntfy". */
  service: string;
  /** GET unless said. */
  method?: string;
  headers?: Record<string, string>;
  /** A body sent as JSON (with content-type application/json unless `headers` set one). */
  json?: unknown;
  /** A body sent as it is (give its content-type in `headers`). */
  body?: string;
  signal?: AbortSignal;
  /** What the request was, in messages after "answered 404 to": e.g. "GET /api/states". None by default. */
  label?: string;
  /** The service's own reason in a refusal's body; `commonReason` by default, and a body excerpt when neither finds one. */
  reason?: (body: unknown) => unknown;
  /** A piece's own message for a refusal it can explain (a 401: which credential to check); undefined keeps the default. */
  explain?: (refusal: HttpStatusError) => string | undefined;
  /** Retries of an idempotent request that met a 502, 503 or 504; false for none. A POST is never retried. */
  retry?: Partial<HttpRetry> | false;
}

/** A non-2xx answer: its status, body (parsed when it is JSON) and the request it answered. */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly method: string;
  readonly url: string;
  /** The body, parsed when it is JSON. */
  readonly body: unknown;
  readonly text: string;
  /** The service's reason (HttpCall.reason) or an excerpt of the body; "" when it sent none. */
  readonly reason: string;
  constructor(message: string, answer: { status: number; method: string; url: string; body: unknown; text: string; reason: string }) {
    super(message);
    this.status = answer.status;
    this.method = answer.method;
    this.url = answer.url;
    this.body = answer.body;
    this.text = answer.text;
    this.reason = answer.reason;
  }
}

/**
 * A base URL as a user typed it into a connection or a step: trimmed and without trailing slashes, so
 * `${base}/path` joins cleanly. Throws when it is not an http:// or https:// URL; `name` says which field
 * ("the InfluxDB URL", "server_url") and `example` shows a good value.
 */
export function baseUrlOf(value: unknown, name: string, example: string): string {
  const text = String(value ?? "")
    .trim()
    .replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${name} "${text}" is not a URL; use e.g. ${example}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must start with http:// or https://; got ${url.protocol}`);
  return text;
}

/** `text` folded onto one line and cut to `max` characters (with an ellipsis when cut). */
export function bodyExcerpt(text: string, max = EXCERPT_CHARS): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** The body as JSON when it parses, else the text itself; null when empty. */
export function parseMaybeJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The reason an error body gives in the fields services use: Telegram's `description`, Gotify's
 * `errorDescription`, OpenAI's `error.message`, ntfy's and InfluxDB's `error`, GitHub's and Home Assistant's `message`.
 */
export function commonReason(body: unknown): string | undefined {
  if (!body || typeof body !== "object") return undefined;
  const fields = body as { description?: unknown; errorDescription?: unknown; error?: unknown; message?: unknown };
  const nested = fields.error && typeof fields.error === "object" ? (fields.error as { message?: unknown }).message : undefined;
  for (const value of [fields.description, fields.errorDescription, nested, fields.error, fields.message])
    if (typeof value === "string" && value.trim()) return value;
  return undefined;
}

function reasonOf(call: HttpCall, body: unknown, text: string): string {
  const given = (call.reason ?? commonReason)(body);
  if (typeof given === "string" && given.trim()) return bodyExcerpt(given);
  if (given !== undefined && given !== null && typeof given !== "string") return bodyExcerpt(JSON.stringify(given));
  return bodyExcerpt(text);
}

/** Seconds of a Retry-After header (the delay form; a date is not waited for). */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get("retry-after");
  if (!value || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value) * 1000;
}

/**
 * Sends the request through `fetch` and answers the response when its status is 2xx, its body unread
 * (for a piece that streams it). Throws an `HttpStatusError` for any other status, and an Error saying
 * the service could not be reached for a network failure or a refusal of the SSRF guard (not retried).
 */
export async function httpFetch(fetch: GuardedFetch, url: string | URL, call: HttpCall): Promise<Response> {
  const method = (call.method ?? "GET").toUpperCase();
  const target = new URL(String(url));
  const headers: Record<string, string> = { ...call.headers };
  let body = call.body;
  if (call.json !== undefined) {
    body = JSON.stringify(call.json);
    if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  }
  const policy = { ...DEFAULT_RETRY, ...(call.retry || {}) };
  const attempts = call.retry === false || !IDEMPOTENT_METHODS.has(method) ? 1 : Math.max(1, Math.min(5, Math.floor(policy.attempts)));
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(target.href, { method, headers, body, signal: call.signal });
    } catch (error) {
      throw new Error(`could not reach ${call.service} at ${target.origin}: ${(error as Error)?.message ?? error}`, { cause: error });
    }
    if (response.ok) return response;
    const wait = Math.max(retryAfterMs(response) ?? 0, policy.backoffMs * 2 ** (attempt - 1));
    if (attempt < attempts && RETRY_STATUSES.has(response.status) && wait <= MAX_RETRY_WAIT_MS) {
      await response.body?.cancel().catch(() => {});
      try {
        await policy.wait(wait, call.signal);
      } catch (error) {
        throw new Error(`${call.service} answered ${response.status} and the step stopped before trying again: ${(error as Error)?.message ?? error}`, {
          cause: error,
        });
      }
      continue;
    }
    const text = method === "HEAD" ? "" : await response.text();
    const parsed = parseMaybeJson(text);
    const reason = reasonOf(call, parsed, text);
    const tries = attempt > 1 ? ` (after ${attempt} attempts)` : "";
    const message = `${call.service} answered ${response.status}${call.label ? ` to ${call.label}` : ""}${reason ? `: ${reason}` : ""}${tries}`;
    const refusal = new HttpStatusError(message, { status: response.status, method, url: target.href, body: parsed, text, reason });
    const explained = call.explain?.(refusal);
    if (explained) refusal.message = explained;
    throw refusal;
  }
}

/**
 * `httpFetch`, then the body read: "auto" (JSON when it parses, else the text; null when empty), "json"
 * (it must be JSON, or an Error quotes what came) or "text".
 */
export async function httpRequest<T = unknown>(fetch: GuardedFetch, url: string | URL, call: HttpCall & { read?: "auto" | "json" | "text" }): Promise<T> {
  const response = await httpFetch(fetch, url, call);
  const text = await response.text();
  const read = call.read ?? "auto";
  if (read === "text") return text as T;
  if (read === "auto") return parseMaybeJson(text) as T;
  if (!text) return null as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${call.service} answered ${response.status} with something that is not JSON: ${bodyExcerpt(text)}`);
  }
}
