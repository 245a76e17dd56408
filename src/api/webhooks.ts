/**
 * Public trigger URLs (no bearer token; `security: []` in the contract):
 *   {PUBLIC_URL}/webhook/{token}        production run of the live version
 *   {PUBLIC_URL}/webhook/{token}/test   test run of the draft; the call is recorded as the test payload
 * and, for the editor, the live trigger's state: GET /api/workflows/{id}/trigger.
 * The body is parsed strictly by Content-Type (src/core/triggers/webhook-request.ts).
 */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import type { WebhookAnswer } from "../core/triggers/webhook-intake";
import { headersOf, normaliseParsedJson, parseBody, queryOf, readBody } from "../core/triggers/webhook-request";
import { assertBodySize, parseJsonBody } from "../http/body";
import { answerBody, jsonResponse } from "../http/answer-body";
import type { BunRequest, Server } from "bun";
import { sha256 } from "../lib/ids";
import { IdParams } from "../schema/common";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

const TokenParams = t.Object({ token: t.String({ minLength: 1, maxLength: 300, description: "the workflow's webhookToken" }) });

const responses = {
  "202": {
    description: 'Run queued: {"data": {"runId", "status": "pending", "environment"}}. The run id is also in the X-Weft-Run-Id header.',
    content: { "application/json": { schema: { type: "object" } } },
  },
  "200": { description: "Synchronous reply of the workflow's webhook.respond step (its status, headers and body), or a form trigger's page on GET" },
  "404": { description: "No live workflow holds this token (unknown, paused, or no longer a webhook trigger)" },
  "413": { description: "Body larger than WEFT_BODY_LIMIT" },
  "500": { description: "Synchronous workflow failed before it replied; error.details.runId names the run" },
  "504": { description: "Synchronous workflow did not reply in time; error.details.runId names the run, which keeps running" },
} as const;

const triggerData = (request: Request, body: unknown) => ({
  method: request.method,
  headers: headersOf(request),
  query: queryOf(request.url),
  body: normaliseParsedJson(body),
});
const acceptsHtml = (request: Request) => (request.headers.get("accept") ?? "").includes("text/html");

/** An answer before it becomes a Response: the handler's value, status and headers. */
type Answer = { status: number; headers: Record<string, string>; body: unknown };

/** What the app's global hooks do for every request, for the server route below (src/app.ts owns them). */
export interface RequestBasics {
  /** The X-Request-Id every answer carries. */
  requestId(request: Request): string;
  /** The flood limiter's 429 answer for this caller, if it is over its budget (also resolves the caller: src/net/client-address.ts). */
  flooded(request: Request, server: Server<unknown> | null): Answer | undefined;
  /** The error envelope, as the app's error hook builds it (status, headers, body; logs internal errors). */
  error(phase: "parse" | "handle", error: unknown, requestId: string, request: Request): Answer;
  /** Answers through the app itself (Elysia). */
  app(request: Request): Response | Promise<Response>;
}

const TOKEN_CHARS = /^[A-Za-z0-9_-]{1,300}$/;

/**
 * The production webhook URL as a route of the server itself (Bun's router), for the common call: a JSON
 * body and no Idempotency-Key. It answers exactly as the app's route does — same request id, flood limit,
 * body limit and parser, intake, headers and envelope — without the framework's per-request work (~10 µs
 * of the main thread per call, a sixth of it at 15,000 calls/s). Every other call (another Content-Type, an
 * Idempotency-Key, a GET form page, an unusual token) goes to the app unchanged; in-process callers
 * (`app.handle`) always use the app's route.
 */
export function webhookServerRoutes(deps: AppDeps, basics: RequestBasics) {
  const limit = deps.config.bodyLimit;
  /** As the app maps a handler's value: objects as JSON, strings and bytes as they are, nothing as "" (large ones streamed: src/http/answer-body.ts). */
  const respond = (requestId: string, { status, headers, body }: Answer): Response => {
    const init = { status, headers: { "x-request-id": requestId, ...headers } };
    if (body === null || body === undefined) return new Response("", init);
    if (typeof body === "string" || body instanceof Uint8Array) return new Response(answerBody(body as string | Uint8Array<ArrayBuffer>), init);
    return jsonResponse(body, init);
  };
  const handle = async (request: BunRequest<"/webhook/:token">, server: Server<unknown>): Promise<Response> => {
    const token = request.params.token;
    if (!TOKEN_CHARS.test(token) || !request.headers.get("content-type")?.startsWith("application/json") || request.headers.has("idempotency-key")) {
      return basics.app(request); // timed there (webhooksApi)
    }
    const started = performance.now();
    const response = await answer(request, server, token);
    deps.metrics.webhookAnswered(response.status, (performance.now() - started) / 1000);
    return response;
  };
  const answer = async (request: BunRequest<"/webhook/:token">, server: Server<unknown>, token: string): Promise<Response> => {
    const requestId = basics.requestId(request);
    const flooded = basics.flooded(request, server);
    if (flooded) return respond(requestId, flooded);
    let body: unknown;
    try {
      assertBodySize(request, limit);
      body = (await parseJsonBody(request, limit)) ?? null;
    } catch (error) {
      return respond(requestId, basics.error("parse", error, requestId, request));
    }
    try {
      return respond(requestId, await deps.triggers.intake.receive(token, triggerData(request, body), false, acceptsHtml(request)));
    } catch (error) {
      return respond(requestId, basics.error("handle", error, requestId, request));
    }
  };
  return { "/webhook/:token": { POST: handle, PUT: handle, PATCH: handle, DELETE: handle } };
}

export const webhooksApi = (deps: AppDeps) => {
  const triggers = () => deps.triggers;
  const bodyLimit = deps.config.bodyLimit;

  const send = (set: { status?: number | string; headers: Record<string, any> }, answer: WebhookAnswer) => {
    set.status = answer.status;
    Object.assign(set.headers, answer.headers);
    return answer.body;
  };

  const handler =
    (test: boolean) =>
    async ({ params, request, body, set }: any) => {
      const intake = triggers().intake;
      if (request.method === "GET" && !request.headers.get("content-type")) {
        const page = await intake.page(params.token, test);
        if (page !== null) {
          set.headers["content-type"] = "text/html; charset=utf-8";
          return page;
        }
      }
      return send(set, await intake.receive(params.token, triggerData(request, body), test, acceptsHtml(request)));
    };

  // JSON bodies are parsed by the app-wide JSON parser (size limit, depth, forbidden keys); every other
  // Content-Type is parsed here, strictly by its type, so Elysia's own guessing never applies.
  const parse = async ({ request, contentType }: { request: Request; contentType: string }) =>
    parseBody(await readBody(request, bodyLimit), contentType || null);

  // Idempotency-Key records are per credential; a public URL has none, so each URL is its own scope
  // (two providers that happen to send the same key to different URLs never collide).
  // A macro, so that its transform runs after the `permission` macro's (which leaves a public route's auth empty).
  const scopes = new Elysia({ name: "webhook-idempotency-scope" }).macro({
    idempotencyPerUrl: (on: boolean) => ({
      transform(ctx: any) {
        // Only a call that carries the header needs its scope (hashing every call costs a few µs each).
        if (on && ctx.request.headers.has("idempotency-key")) ctx.auth = { credentialId: `webhook:${sha256(String(ctx.params?.token ?? ""))}` };
      },
    }),
  });

  // Elysia registers routes on the instance itself, so one route per method can be added in a loop.
  const api = new Elysia({ name: "api-webhooks" })
    .use(deps.security)
    .use(scopes)
    // Timing (weft_webhook_request_duration_seconds): onRequest runs for every request whatever the plugin (it
    // comes before routing), so it only stamps the arrival; the answer is timed for the webhook URLs alone.
    .onRequest((ctx: any) => {
      ctx.arrivedAt = performance.now();
    })
    .onAfterResponse((ctx: any) => {
      if (ctx.arrivedAt === undefined || !ctx.path.startsWith("/webhook/")) return;
      const status = ctx.responseValue instanceof Response ? ctx.responseValue.status : typeof ctx.set.status === "number" ? ctx.set.status : 200;
      deps.metrics.webhookAnswered(status, (performance.now() - ctx.arrivedAt) / 1000);
    });
  const variants = [
    {
      path: "/webhook/:token",
      test: false,
      operationId: "webhook",
      summary: "Start a production run of the live workflow",
      description:
        "Public URL of a live webhook workflow; no bearer token. The token is compared in constant time. triggerData is {method, headers, query, body} with the body parsed by its Content-Type (JSON, form, multipart, text; anything else as base64). Answers 202 with the run id, or the workflow's webhook.respond reply when it has one. A paused or unknown token answers 404. A provider retry with the same Idempotency-Key replays the first answer and starts no second run.",
    },
    {
      path: "/webhook/:token/test",
      test: true,
      operationId: "webhookTest",
      summary: "Run the draft as a test run and record the call as its test payload",
      description:
        "The editor's \"listen for a test event\": works for draft, live and paused workflows; the call is stored as the trigger's test payload (GET /api/workflows/{id}/test-payloads) and the draft runs with environment test.",
    },
  ];
  for (const method of METHODS) {
    const name = `${method[0]}${method.slice(1).toLowerCase()}`;
    for (const variant of variants) {
      api.route(method, variant.path, handler(variant.test), {
        permission: "public",
        idempotent: true,
        params: TokenParams,
        idempotencyPerUrl: true,
        parse,
        detail: {
          tags: ["Triggers"],
          summary: `${variant.summary} (${method})`,
          description: variant.description,
          operationId: `${variant.operationId}${name}`,
          responses,
        },
      });
    }
  }

  return api.get("/api/workflows/:id/trigger", async ({ auth, params }) => ({ data: await triggers().status(auth.workspaceId, params.id) }), {
    permission: "workflow:read",
    params: IdParams,
    detail: {
      tags: ["Lifecycle"],
      summary: "What the workflow's trigger is doing: webhook URLs, next scheduled instant, poll baseline and failures, provider registration",
    },
  });
};
