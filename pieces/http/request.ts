/**
 * The HTTP request both `http.send_request` and `oauth2.request` make: body kinds, query, timeout and
 * response parsing. Always through the context's guarded fetch, never the global one. Not the SDK's
 * `httpRequest` (src/pieces-sdk/http.ts): the user's request is sent once, as given, and a 4xx/5xx may be the
 * step's output (fail_on_error false); it shares only the way a refusal quotes the body.
 */
import type { GuardedFetch } from "../../src/pieces-sdk/types";
import { bodyExcerpt, labelled, Property, Show } from "../../src/pieces-sdk";

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];
export const BODY_TYPES = ["none", "json", "form", "raw"];

/** The request properties shared by the HTTP-calling actions (body fields gated by body_type). */
export const requestProps = () => ({
  method: Property.staticDropdown({ displayName: "Method", required: true, default: "GET", options: METHODS }),
  url: Property.shortText({ displayName: "URL", required: true, format: "uri" }),
  headers: Property.keyValue({ displayName: "Headers" }),
  query: Property.keyValue({ displayName: "Query parameters" }),
  body_type: Property.staticDropdown({
    displayName: "Body type",
    default: "none",
    options: labelled({ none: "None", json: "JSON", form: "Form (urlencoded)", raw: "Raw text" }),
  }),
  body_json: Property.json({ displayName: "JSON body", required: true, displayConditions: [Show.eq("body_type", "json")] }),
  body_form: Property.keyValue({ displayName: "Form fields", required: true, displayConditions: [Show.eq("body_type", "form")] }),
  body_raw: Property.longText({ displayName: "Raw body", required: true, displayConditions: [Show.eq("body_type", "raw")] }),
  content_type: Property.shortText({ displayName: "Content type", default: "text/plain", displayConditions: [Show.eq("body_type", "raw")] }),
});

export const responseProps = () => ({
  timeout_ms: Property.integer({ displayName: "Timeout (ms)", default: 30000, min: 100, max: 300000 }),
  fail_on_error: Property.checkbox({ displayName: "Fail on 4xx/5xx", description: "Fail the step when the status is 400 or above", default: true }),
  response_type: Property.staticDropdown({ displayName: "Parse response as", default: "auto", options: ["auto", "json", "text"] }),
});

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

const record = (value: unknown, name: string): Record<string, unknown> => {
  if (value === undefined || value === null || value === "") return {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Error(`${name} must be an object of name → value`);
    }
  }
  if (typeof value !== "object" || Array.isArray(value)) throw new Error(`${name} must be an object of name → value`);
  return value as Record<string, unknown>;
};

const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

export async function sendRequest(
  ctx: { fetch: GuardedFetch; signal: AbortSignal },
  config: Record<string, unknown>,
  extraHeaders: Record<string, string> = {},
  defaultHeaders: Record<string, string> = {},
): Promise<HttpResult> {
  const method = String(config.method ?? "GET").toUpperCase();
  if (!METHODS.includes(method)) throw new Error(`method "${config.method}" is not supported; use one of ${METHODS.join(", ")}`);
  let url: URL;
  try {
    url = new URL(String(config.url ?? ""));
  } catch {
    throw new Error(`url "${config.url ?? ""}" is not an absolute URL; use e.g. https://api.example.com/items`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`url must use http or https, not ${url.protocol}`);
  for (const [k, v] of Object.entries(record(config.query, "query"))) if (v !== undefined && v !== null) url.searchParams.append(k, text(v));

  const headers = new Headers();
  for (const [k, v] of Object.entries(record(config.headers, "headers"))) if (v !== undefined && v !== null) headers.set(k, text(v));
  for (const [k, v] of Object.entries(extraHeaders)) headers.set(k, v);
  // Sent unless the step sets the header itself (the run's trace context).
  for (const [k, v] of Object.entries(defaultHeaders)) if (!headers.has(k)) headers.set(k, v);

  let body: string | undefined;
  const bodyType = String(config.body_type ?? "none");
  if (!BODY_TYPES.includes(bodyType)) throw new Error(`body_type "${bodyType}" is unknown; use one of ${BODY_TYPES.join(", ")}`);
  if (bodyType !== "none" && (method === "GET" || method === "HEAD"))
    throw new Error(`a ${method} request cannot carry a body; use body_type none or another method`);
  if (bodyType === "json") {
    body = JSON.stringify(config.body_json ?? null);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  } else if (bodyType === "form") {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(record(config.body_form, "body_form"))) form.append(k, v === undefined || v === null ? "" : text(v));
    body = form.toString();
    if (!headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded");
  } else if (bodyType === "raw") {
    body = config.body_raw === undefined || config.body_raw === null ? "" : text(config.body_raw);
    if (!headers.has("content-type")) headers.set("content-type", String(config.content_type || "text/plain"));
  }

  const timeoutMs = Number(config.timeout_ms ?? 30000);
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 30000)]);
  let response: Response;
  try {
    response = await ctx.fetch(url, { method, headers, body, signal, redirect: "follow" });
  } catch (error) {
    const e = error as Error;
    if (e?.name === "TimeoutError") throw new Error(`${method} ${url.origin}${url.pathname} timed out after ${timeoutMs} ms`);
    throw new Error(`${method} ${url.origin}${url.pathname} failed: ${e?.message ?? e}`);
  }
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    responseHeaders[k] = v;
  });
  const raw = method === "HEAD" ? "" : await response.text();
  const mode = String(config.response_type ?? "auto");
  let parsed: unknown = raw;
  if (mode === "json" || (mode === "auto" && /[/+]json\b/i.test(response.headers.get("content-type") ?? ""))) {
    try {
      parsed = raw === "" ? null : JSON.parse(raw);
    } catch {
      if (mode === "json") throw new Error(`${method} ${url.origin}${url.pathname} answered ${response.status} with a body that is not JSON`);
    }
  }
  if (config.fail_on_error !== false && response.status >= 400) {
    const snippet = bodyExcerpt(raw, 300);
    throw new Error(`${method} ${url.origin}${url.pathname} answered ${response.status}${snippet ? `: ${snippet}` : ""}`);
  }
  return { status: response.status, headers: responseHeaders, body: parsed };
}
