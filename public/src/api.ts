/**
 * The only way the UI talks to the server: the public HTTP API with the session cookie, the
 * X-CSRF-Token header on writes, and the JSON envelope unwrapped (failures become ApiError with
 * the server's code and message, which screens show as they are).
 */
import { signal } from "@preact/signals";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export interface Envelope<T> {
  data: T;
  total?: number;
  pagination?: { page: number; limit: number; total: number; totalPages: number };
}

let csrfToken: string | undefined;
export const setCsrfToken = (token: string | undefined) => {
  csrfToken = token;
};

/** Set when the server says the session is gone; the app shell then shows the login form. */
export const sessionExpired = signal(false);

const SAFE = new Set(["GET", "HEAD"]);
/**
 * Calls whose 401 means "that password or code is wrong", not "your session is gone": every other 401 sends the
 * app to the login screen, /api/auth/* ones too (a session ended elsewhere, docs/teams.md, "Sessions").
 */
const CREDENTIAL_CHECKS = new Set(["/api/auth/login", "/api/auth/login/second-factor", "/api/auth/setup", "/api/invitations/accept"]);

export type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  options: { query?: Query; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (!SAFE.has(method) && csrfToken) headers["x-csrf-token"] = csrfToken;
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: "same-origin",
      signal: options.signal,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "NETWORK", `the server cannot be reached (${(error as Error).message}); check that weft is running`);
  }
  const text = await response.text();
  /** The envelope on success; on failure the server's `error` (code, message, details), when it sent JSON. */
  let parsed: (Envelope<T> & { error?: { code?: string; message?: string; details?: unknown } }) | undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = parsed?.error;
    if (response.status === 401 && !CREDENTIAL_CHECKS.has(path.split("?")[0]!)) sessionExpired.value = true;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? `${method} ${path} answered ${response.status}`,
      error?.details,
    );
  }
  return parsed as Envelope<T>;
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>("GET", path, undefined, { query, signal }),
  post: <T>(path: string, body?: unknown, query?: Query) => request<T>("POST", path, body, { query }),
  put: <T>(path: string, body?: unknown) => request<T>("PUT", path, body),
  patch: <T>(path: string, body?: unknown) => request<T>("PATCH", path, body),
  del: <T>(path: string, query?: Query) => request<T>("DELETE", path, undefined, { query }),
};

/** A message fit for a person: the server's own message, with its code for the curious. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.code.startsWith("HTTP_") || error.code === "NETWORK" ? error.message : `${error.message} (${error.code})`;
  return (error as Error)?.message ?? String(error);
}
