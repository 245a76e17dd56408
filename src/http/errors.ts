/**
 * The one error type. Core code throws it; the HTTP layer turns it into the envelope
 * `{"error": {"code", "message"}}` (plus `details` when the refusal carries data such as diagnostics).
 */
export const ErrorStatus = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION_FAILED: 400,
  UNKNOWN_FIELD: 400,
  PAYLOAD_TOO_LARGE: 413,
  REVISION_CONFLICT: 409,
  CONFLICT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  IDEMPOTENCY_MISMATCH: 422,
  PIECE_UNAVAILABLE: 422,
  NOT_PUBLISHABLE: 422,
  NOT_PUBLISHED: 422,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  /** A stored secret was encrypted with a key this server does not hold (details.keyId names it). */
  ENCRYPTION_KEY_MISSING: 500,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
  /** Git sync (docs/workflows-as-code.md): the branch has commits this workspace has not pulled. */
  NOT_FAST_FORWARD: 409,
  /** Git sync: a pull would overwrite workflow changes not pushed yet. */
  LOCAL_CHANGES: 409,
  /** Git sync: the workspace is managed by git; its workflows change only by a pull. */
  MANAGED_BY_GIT: 409,
  /** Git sync: the remote could not be reached, or refused the credentials. */
  GIT_REMOTE_FAILED: 502,
  /** Git sync: the remote needs the system git, which is not installed. */
  GIT_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ErrorStatus;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    status?: number,
    /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = status ?? ErrorStatus[code];
  }
}

export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);

export function errorBody(code: string, message: string, details?: unknown) {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}
