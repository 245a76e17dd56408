/**
 * The `ActionContext` a piece action receives (src/pieces-sdk/types.ts). Built the same way on the main
 * thread (pure steps) and inside a worker thread; what the action asks of the run (tags, a webhook reply,
 * a sub-flow response, a pause with resume links) is collected as effects and applied by the executor.
 */
import type { ActionContext, GuardedFetch, KeyValueStore, PauseRequest, ResolvedAuth, RunInfo } from "../pieces-sdk/types";

export interface WebhookReply {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface StepEffects {
  tags: string[];
  reply?: WebhookReply;
  /** Set when the action called returnResponse (a value of `undefined` is stored as null). */
  response?: { value: unknown };
  /** Secret of the resume links minted by resumeUrls (only its hash is stored). */
  resumeToken?: string;
}

export interface SubflowCall {
  workflowId: string;
  payload: Record<string, unknown>;
  wait: boolean;
}

export interface SubflowResult {
  runId: string;
  status: string;
  response?: unknown;
}

export interface StepContextOptions {
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  run: RunInfo;
  /** The run's abort signal, or a function that creates it on first use (most steps never read it). */
  signal: AbortSignal | (() => AbortSignal);
  fetch: GuardedFetch;
  /** Created on first use: most steps never touch the store. */
  store: () => KeyValueStore;
  log: (message: string, fields?: Record<string, unknown>) => void;
  resumePayload?: Record<string, unknown>;
  publicUrl: string;
  callWorkflow: (call: SubflowCall) => Promise<SubflowResult>;
  /** Called as soon as the action replies, so a waiting webhook caller is answered before the run ends. */
  onReply: (reply: WebhookReply) => void;
  /** The step waits for something it does not control (a reason), or goes on (null). */
  onWaiting?: (reason: string | null) => void;
}

const TOKEN_BYTES = 24;

function newResumeToken(): string {
  const bytes = new Uint8Array(TOKEN_BYTES);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64url");
}

/** The links that resume a paused run with a decision; GET or POST, no bearer token (the token is the credential). */
export function resumeUrl(publicUrl: string, runId: string, token: string, decision: string): string {
  return `${publicUrl}/api/runs/${runId}/resume/${token}?decision=${encodeURIComponent(decision)}`;
}

export function createStepContext(o: StepContextOptions): { ctx: ActionContext; effects: StepEffects } {
  const effects: StepEffects = { tags: [] };
  let store: KeyValueStore | undefined;
  const ctx: ActionContext = {
    config: o.config,
    auth: o.auth,
    run: o.run,
    get signal() {
      return typeof o.signal === "function" ? o.signal() : o.signal;
    },
    fetch: o.fetch,
    get store() {
      store ??= o.store();
      return store;
    },
    log: o.log,
    resumePayload: o.resumePayload,
    pause(request): PauseRequest {
      if (request.mode !== "time" && request.mode !== "webhook") throw new Error(`pause mode "${String(request.mode)}" is unknown; use "time" or "webhook"`);
      if (request.mode === "time" && (!request.resumeAt || Number.isNaN(Date.parse(request.resumeAt)))) {
        throw new Error(`pause mode "time" needs resumeAt as an ISO date-time; got ${JSON.stringify(request.resumeAt)}`);
      }
      return { __pause: true, ...request };
    },
    resumeUrls(decisions) {
      effects.resumeToken ??= newResumeToken();
      const urls: Record<string, string> = {};
      for (const decision of decisions) urls[decision] = resumeUrl(o.publicUrl, o.run.id, effects.resumeToken, decision);
      return urls;
    },
    addTags(tags) {
      for (const tag of Array.isArray(tags) ? tags : [tags]) {
        const text = String(tag).trim();
        if (text !== "" && !effects.tags.includes(text)) effects.tags.push(text.slice(0, 100));
      }
    },
    respond(reply) {
      const status = Number(reply?.status ?? 200);
      const value: WebhookReply = {
        status: Number.isInteger(status) && status >= 100 && status <= 599 ? status : 200,
        headers: reply?.headers ?? {},
        body: reply?.body ?? null,
      };
      if (effects.reply) return; // the first reply wins: the caller has been answered
      effects.reply = value;
      o.onReply(value);
    },
    callWorkflow: (call) => o.callWorkflow({ workflowId: String(call.workflowId), payload: call.payload ?? {}, wait: call.wait !== false }),
    returnResponse(value) {
      effects.response = { value: value === undefined ? null : value };
    },
    waiting(reason) {
      o.onWaiting?.(typeof reason === "string" && reason !== "" ? reason.slice(0, 200) : null);
    },
  };
  return { ctx, effects };
}

export function isPauseRequest(value: unknown): value is PauseRequest {
  return typeof value === "object" && value !== null && (value as { __pause?: unknown }).__pause === true;
}
