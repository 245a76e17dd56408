/**
 * Idempotency-Key (docs/api.md "Everything else"): opt-in per route via the `idempotent` macro. Records are
 * per credential, kept 24 h, fingerprinted over method + path + query + body. Replays carry
 * `Idempotency-Replayed: true`; a key still running answers 409 after a short wait; a different fingerprint
 * answers 422; 5xx answers are not stored. Write routes that do not opt in refuse the header. In a cluster
 * the records are shared: a key answered on one instance replays on any other, and one still running on
 * another instance answers 409 here. Middleware, not a route: it has no scope of its own (`x-permission` is
 * declared by each route).
 */
import { sha256 } from "../../lib/ids";
import type { Principal } from "../../core/identity";
import { IDEMPOTENCY_RETENTION_MS, type IdempotencyRepository } from "../../store/idempotency";
import { AppError } from "../../http/errors";

const MAX_KEY_LENGTH = 255;
const WAIT_MS = 1000;
const POLL_MS = 25;
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

interface Claimed {
  credential: string;
  key: string;
}
/**
 * What the hooks hand over, never the whole Elysia context: a hook that passes its context to a function makes
 * Elysia assume the route reads everything (cookies, query, every header copied into an object) and compile
 * that work into every route.
 */
type Ctx = {
  request: Request;
  body?: unknown;
  set: { status?: number | string; headers: Record<string, any> };
  auth?: Principal;
  acceptsIdempotencyKey?: boolean;
};

export class Idempotency {
  private sincePrune = 0;
  /** Requests that claimed a key, until their answer is stored. */
  private readonly claimed = new WeakMap<Request, Claimed>();
  /** The instances alive at the last look for abandoned claims (a cluster). */
  private lastAlive: ReadonlySet<string> | undefined;

  /** `instanceId`: this instance's fleet id in a cluster (its claims name it); null alone on SQLite. */
  constructor(
    private readonly store: IdempotencyRepository,
    private readonly instanceId: string | null = null,
  ) {}

  /**
   * Releases keys claimed but never answered by a process that died (docs/security.md "Crashes"), so a retry
   * executes instead of answering 409 for a day. Alone (no `alive`): every claim, at start-up. In a cluster:
   * the claims of instances not in `alive`, looked for at the first call and whenever an instance alive at
   * the previous call is gone — never a live instance's, which may still answer.
   */
  async releaseAbandoned(alive?: ReadonlySet<string>): Promise<number> {
    if (!alive) return await this.store.releaseRunningBefore(Date.now());
    const lost = this.lastAlive === undefined || [...this.lastAlive].some((id) => !alive.has(id));
    this.lastAlive = alive;
    if (!lost) return 0;
    let released = 0;
    // Those naming no instance were made by a version that did not record it.
    for (const owner of await this.store.runningOwners()) if (owner === null || !alive.has(owner)) released += await this.store.releaseOwnedBy(owner);
    return released;
  }

  /** Runs before the handler; returns a stored response to replay, or undefined to proceed. */
  async before(ctx: Ctx): Promise<unknown> {
    const key = ctx.request.headers.get("idempotency-key");
    if (key === null || READ_METHODS.has(ctx.request.method)) return undefined;
    const url = new URL(ctx.request.url);
    if (!ctx.acceptsIdempotencyKey) {
      throw new AppError(
        "VALIDATION_FAILED",
        `${ctx.request.method} ${url.pathname} does not accept the Idempotency-Key header; remove it (operations marked x-idempotent in GET /api/openapi.json accept it)`,
      );
    }
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new AppError("VALIDATION_FAILED", `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters; got ${key.length}`);
    }
    const credential = ctx.auth?.credentialId ?? "anonymous";
    const fingerprint = sha256(`${ctx.request.method}\n${url.pathname}\n${url.search}\n${ctx.body === undefined ? "" : JSON.stringify(ctx.body)}`);
    if (++this.sincePrune >= 1000) {
      this.sincePrune = 0;
      // Not waited for: the request goes on; what a failed prune leaves is pruned at the next one.
      void this.store.prune(Date.now() - IDEMPOTENCY_RETENTION_MS).catch(() => {});
    }
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const now = Date.now();
      if (await this.store.claim(credential, key, fingerprint, this.instanceId, now, now - IDEMPOTENCY_RETENTION_MS)) {
        this.claimed.set(ctx.request, { credential, key });
        return undefined;
      }
      const record = await this.store.get(credential, key, Date.now() - IDEMPOTENCY_RETENTION_MS);
      if (!record) continue; // expired between the two statements: claim again
      if (record.fingerprint !== fingerprint) {
        throw new AppError(
          "IDEMPOTENCY_MISMATCH",
          "this Idempotency-Key was used with a different method, path, query or body; use a new key for a different request",
        );
      }
      if (record.state === "done") {
        ctx.set.status = record.status!;
        ctx.set.headers["idempotency-replayed"] = "true";
        return JSON.parse(record.body!);
      }
      if (Date.now() >= deadline) {
        throw new AppError("IDEMPOTENCY_IN_PROGRESS", "the original request with this Idempotency-Key is still running; retry shortly to receive its result");
      }
      await Bun.sleep(POLL_MS);
    }
  }

  /** Stores the answer of a claimed request; 5xx answers release the key instead. */
  async after(request: Request, status: number, body: unknown): Promise<void> {
    const claimed = this.claimed.get(request);
    if (!claimed) return;
    this.claimed.delete(request);
    if (status >= 500) await this.store.release(claimed.credential, claimed.key);
    else await this.store.finish(claimed.credential, claimed.key, status, JSON.stringify(body ?? null));
  }
}
