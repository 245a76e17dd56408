/**
 * Public trigger URLs (no bearer token; `security: []` in the contract):
 *   {PUBLIC_URL}/webhook/{token}        production run of the live version
 *   {PUBLIC_URL}/webhook/{token}/test   test run of the draft; the call is recorded as the test payload
 * and, for the editor, the live trigger's state: GET /api/workflows/{id}/trigger.
 * The body is parsed strictly by Content-Type (src/core/triggers/webhook-request.ts).
 */
import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import type { WebhookAnswer } from "../core/triggers/webhook-intake";
import { headersOf, normaliseParsedJson, parseBody, queryOf, readBody } from "../core/triggers/webhook-request";
import { sha256 } from "../core/ids";
import { IdParams } from "../schema/common";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

const TokenParams = t.Object({ token: t.String({ minLength: 1, maxLength: 300, description: "the workflow's webhookToken" }) });

const responses = {
  "202": { description: "Run queued: {\"data\": {\"runId\", \"status\": \"pending\", \"environment\"}}. The run id is also in the X-Weft-Run-Id header.", content: { "application/json": { schema: { type: "object" } } } },
  "200": { description: "Synchronous reply of the workflow's webhook.respond step (its status, headers and body), or a form trigger's page on GET" },
  "404": { description: "No live workflow holds this token (unknown, paused, or no longer a webhook trigger)" },
  "413": { description: "Body larger than WEFT_BODY_LIMIT" },
  "500": { description: "Synchronous workflow failed before it replied; error.details.runId names the run" },
  "504": { description: "Synchronous workflow did not reply in time; error.details.runId names the run, which keeps running" },
} as const;

export const webhooksApi = (deps: AppDeps) => {
  const triggers = () => deps.triggers;
  const bodyLimit = deps.config.bodyLimit;

  const send = (set: { status?: number | string; headers: Record<string, any> }, answer: WebhookAnswer) => {
    set.status = answer.status;
    Object.assign(set.headers, answer.headers);
    return answer.body;
  };

  const handler = (test: boolean) => async ({ params, request, body, set }: any) => {
    const intake = triggers().intake;
    if (request.method === "GET" && !request.headers.get("content-type")) {
      const page = intake.page(params.token, test);
      if (page !== null) {
        set.headers["content-type"] = "text/html; charset=utf-8";
        return page;
      }
    }
    const data = { method: request.method, headers: headersOf(request), query: queryOf(request.url), body: normaliseParsedJson(body) };
    const acceptsHtml = (request.headers.get("accept") ?? "").includes("text/html");
    return send(set, await intake.receive(params.token, data, test, acceptsHtml));
  };

  // JSON bodies are parsed by the app-wide JSON parser (size limit, depth, forbidden keys); every other
  // Content-Type is parsed here, strictly by its type, so Elysia's own guessing never applies.
  const parse = async ({ request, contentType }: { request: Request; contentType: string }) => parseBody(await readBody(request, bodyLimit), contentType || null);

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
  const api = new Elysia({ name: "api-webhooks" }).use(deps.security).use(scopes);
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
      description: "The editor's \"listen for a test event\": works for draft, live and paused workflows; the call is stored as the trigger's test payload (GET /api/workflows/{id}/test-payloads) and the draft runs with environment test.",
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
        detail: { tags: ["Triggers"], summary: `${variant.summary} (${method})`, description: variant.description, operationId: `${variant.operationId}${name}`, responses },
      });
    }
  }

  return api.get("/api/workflows/:id/trigger", ({ auth, params }) => ({ data: triggers().status(auth.workspaceId, params.id) }), {
    permission: "workflow:read",
    params: IdParams,
    detail: {
      tags: ["Lifecycle"],
      summary: "What the workflow's trigger is doing: webhook URLs, next scheduled instant, poll baseline and failures, provider registration",
    },
  });
};
