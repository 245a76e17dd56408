/**
 * Composition root: builds the Elysia app from the parts below and never listens (main.ts does).
 * Tests call `createApp(deps).app.handle(request)`.
 */
import { Elysia } from "elysia";
import packageJson from "../package.json" with { type: "json" };
import { identityApi } from "./api/identity";
import { serviceApi } from "./api/service";
import type { Config } from "./config";
import { Identity } from "./core/identity";
import { builtinRegistry, type PieceRegistry } from "./core/pieces/registry";
import { parseJsonBody, assertBodySize } from "./http/body";
import { toErrorResponse } from "./http/error-handler";
import { Idempotency } from "./http/idempotency";
import { createLogger, type Logger } from "./http/logger";
import { buildOpenApi, renderDocsPage } from "./http/openapi";
import { TokenBuckets } from "./http/rate-limit";
import { createSecurity, type Security } from "./http/security";
import type { Db } from "./store/db";
import { IdempotencyStore } from "./store/idempotency";

export const VERSION: string = packageJson.version;

export interface AppDeps {
  config: Config;
  db: Db;
  log: Logger;
  identity: Identity;
  security: Security;
  contract: { document(): unknown; docsPage(): string };
  /** The fleet: every piece the workers load (built-ins + WEFT_PIECES_DIR). */
  pieces: PieceRegistry;
}

export interface CreateAppOptions {
  config: Config;
  db: Db;
  log?: Logger;
  /** Defaults to the built-ins; `serve` passes `await loadRegistry(config)`. */
  pieces?: PieceRegistry;
}

export function createApp(options: CreateAppOptions) {
  const { config, db } = options;
  const log = options.log ?? createLogger(config.logLevel);
  const identity = new Identity(db);
  const security = createSecurity({ identity, rateLimitPerSecond: config.rateLimitPerSecond, rateLimitBurst: config.rateLimitBurst });
  const idempotency = new Idempotency(new IdempotencyStore(db));
  const flood = new TokenBuckets(config.floodPerSecond, config.floodPerSecond * 2);

  let document: ReturnType<typeof buildOpenApi> | undefined;
  let docsPage: string | undefined;
  const contract = {
    document: () => (document ??= buildOpenApi(app, { version: VERSION, serverUrl: config.publicUrl })),
    docsPage: () => (docsPage ??= renderDocsPage(contract.document())),
  };
  const pieces = options.pieces ?? builtinRegistry();
  const deps: AppDeps = { config, db, log, identity, security, contract, pieces };

  const app = new Elysia({ normalize: false })
    .onRequest(({ request, set, server }) => {
      set.headers["x-request-id"] = request.headers.get("x-request-id")?.slice(0, 100) || crypto.randomUUID();
      if (flood.enabled) {
        const address = server?.requestIP(request)?.address ?? "in-process";
        const state = flood.take(address);
        if (!state.allowed) {
          set.status = 429;
          set.headers["retry-after"] = String(state.retryAfterSeconds);
          return { error: { code: "RATE_LIMITED", message: `too many requests from this address; retry after ${state.retryAfterSeconds} s` } };
        }
      }
    })
    .onParse(async ({ request, contentType }) => {
      assertBodySize(request, config.bodyLimit);
      if (contentType?.startsWith("application/json")) return (await parseJsonBody(request, config.bodyLimit)) ?? null;
    })
    .onBeforeHandle((ctx) => idempotency.before(ctx as any))
    .onAfterHandle((ctx) => {
      const status = typeof ctx.set.status === "number" ? ctx.set.status : 200;
      idempotency.after(ctx as any, status, (ctx as any).responseValue ?? (ctx as any).response);
    })
    .onError((ctx) => {
      const { code, error, set, request, path } = ctx;
      const requestId = String(set.headers["x-request-id"] ?? "");
      const answer = toErrorResponse(code, error, requestId, request.method, path);
      idempotency.after(ctx as any, answer.status, answer.body);
      if (answer.internal) log.error("unhandled error", { requestId, method: request.method, path, error: (error as Error)?.stack ?? String(error) });
      set.status = answer.status;
      if (answer.headers) Object.assign(set.headers, answer.headers);
      set.headers["content-type"] = "application/json";
      return answer.body;
    })
    .use(serviceApi(deps))
    .use(identityApi(deps));

  return { app, deps };
}

export type App = ReturnType<typeof createApp>["app"];
