/**
 * Public webhooks: `{PUBLIC_URL}/webhook/{token}` starts a production run of the live version,
 * `{PUBLIC_URL}/webhook/{token}/test` a test run of the draft (and records the call as the
 * workflow's test payload).
 *
 * - The token is found by its SHA-256 (an index lookup on a hash reveals nothing usable about the
 *   token) and then compared with the stored token in constant time (`safeEqual`).
 * - Unknown token, paused workflow, or a live version that is not a webhook trigger: 404 in the
 *   envelope (the same answer for all three, so a probe learns nothing). Re-publishing makes the
 *   same URL work again; only rotate changes it.
 * - Asynchronous: 202 `{"data": {"runId", "status": "pending"}}` once the run is durably queued.
 * - Synchronous when the version contains a `webhook.respond` step: the step's status, headers and
 *   body; 504 with the run id when no reply came within the timeout (WEFT_WEBHOOK_REPLY_TIMEOUT or
 *   the workflow's settings.timeoutSeconds, whichever is smaller); 500 with the run id when the run
 *   failed first; 200 with the run id when it finished without replying; 202 when it paused.
 * - A trigger that reads the call itself (`receive`: an Activepieces webhook trigger, a provider's
 *   handshake) decides how many runs it starts, each with its own trigger output, and may give the
 *   answer: no run → its reply or 200 `{"data": {"runIds": []}}`; one → as above; several → 202 with
 *   `runIds`.
 */
import { AppError } from "../../http/errors";
import type { TriggerDef, WebhookReceived } from "../../pieces-sdk/types";
import type { FlowVersionT } from "../../schema/workflow";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import { walk } from "../workflows/tree";
import type { RunReply, TriggerRuntime, WebhookRunStarter, WebhookTarget, WebhookWorkflows } from "./ports";
import type { WebhookTriggerData } from "./webhook-request";
import { escapeHtml } from "../../lib/html";
import { validTraceparent } from "../../lib/traceparent";

export interface WebhookAnswer {
  status: number;
  headers: Record<string, string>;
  /** JSON value (sent as JSON), a string (sent as is) or bytes. */
  body: unknown;
}

export interface WebhookIntakeOptions {
  workflows: WebhookWorkflows;
  runs: WebhookRunStarter;
  pieces: PieceRegistry;
  /** Default and ceiling of the synchronous reply wait, ms. */
  replyTimeoutMs: number;
  publicUrl: string;
  /** Credentials, guarded fetch and store for triggers that read the call themselves (`receive`). */
  runtime: TriggerRuntime;
}

/** What the intake needs to know about a definition, computed once per immutable version. */
interface Plan {
  isWebhook: boolean;
  triggerName: string;
  triggerDef: TriggerDef | undefined;
  pieceId?: string;
  connectionId?: string;
  config: Record<string, unknown>;
  replies: boolean;
  timeoutMs: number;
}

const NOT_FOUND_MESSAGE =
  "no live workflow answers at this webhook URL; check the URL (GET /api/workflows/{id} shows webhookUrl), publish the workflow, or use the URL's /test variant to run the draft";
const DROPPED_REPLY_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade"]);

export class WebhookIntake {
  private readonly plans = new Map<string, Plan>();

  constructor(private readonly o: WebhookIntakeOptions) {}

  /** Drops cached plans (tests that replace pieces; versions themselves are immutable). */
  clear(): void {
    this.plans.clear();
  }

  async resolve(token: string, test: boolean): Promise<{ target: WebhookTarget; plan: Plan; versionId?: string }> {
    const target = await this.o.workflows.byToken(token);
    if (!target) throw new AppError("NOT_FOUND", NOT_FOUND_MESSAGE);
    if (test) {
      const definition = await this.o.workflows.draftDefinition(target.id, target.workspaceId);
      const plan = definition ? this.planOf(definition) : undefined;
      if (!plan?.isWebhook) throw new AppError("NOT_FOUND", NOT_FOUND_MESSAGE);
      return { target, plan };
    }
    if (target.status !== "active" || !target.latestVersionId) throw new AppError("NOT_FOUND", NOT_FOUND_MESSAGE);
    const versionId = target.latestVersionId;
    let plan = this.plans.get(versionId);
    if (!plan) {
      const definition = await this.o.workflows.versionDefinition(versionId);
      if (!definition) throw new AppError("NOT_FOUND", NOT_FOUND_MESSAGE);
      plan = this.planOf(definition);
      if (this.plans.size > 5000) this.plans.clear();
      this.plans.set(versionId, plan);
    }
    if (!plan.isWebhook) throw new AppError("NOT_FOUND", NOT_FOUND_MESSAGE);
    return { target, plan, versionId };
  }

  /** The hosted page of a form-like trigger (GET on its URL), or null when the trigger has none. */
  async page(token: string, test: boolean): Promise<string | null> {
    const { plan } = await this.resolve(token, test);
    if (!plan.triggerDef?.page) return null;
    return plan.triggerDef.page({ config: plan.config, submitUrl: `${this.o.publicUrl}/webhook/${encodeURIComponent(token)}${test ? "/test" : ""}` });
  }

  async receive(token: string, data: WebhookTriggerData, test: boolean, acceptsHtml = false): Promise<WebhookAnswer> {
    const { target, plan, versionId } = await this.resolve(token, test);
    const allowed = String(plan.config.method ?? "ANY").toUpperCase();
    if (allowed !== "ANY" && allowed !== data.method) {
      throw new AppError(
        "VALIDATION_FAILED",
        `this webhook accepts only ${allowed} requests, not ${data.method}; send ${allowed} or set the trigger's method to ANY`,
        undefined,
        405,
        { allow: allowed },
      );
    }
    if (test) await this.o.workflows.recordTestPayload(target.id, target.workspaceId, plan.triggerName, data);
    if (plan.triggerDef?.receive) return this.receiveItems(token, target, plan, versionId, data, test);
    const { runId, reply } = await this.o.runs.enqueue(
      {
        workspaceId: target.workspaceId,
        workflowId: target.id,
        environment: test ? "test" : "production",
        triggerType: "webhook",
        triggerData: data,
        versionId,
        traceparent: validTraceparent(data.headers.traceparent),
      },
      { awaitReply: plan.replies, timeoutMs: plan.timeoutMs },
    );
    const runHeader = { "x-weft-run-id": runId };
    if (!reply) {
      if (acceptsHtml && plan.triggerDef?.page)
        return { status: 200, headers: { ...runHeader, "content-type": "text/html; charset=utf-8" }, body: thanksPage(plan.config) };
      return { status: 202, headers: runHeader, body: { data: { runId, status: "pending", environment: test ? "test" : "production" } } };
    }
    return answerOf(await reply, runId, plan.timeoutMs);
  }

  /** A trigger that reads the call itself: as many runs as it returns items, and its reply when it gives one. */
  private async receiveItems(token: string, target: WebhookTarget, plan: Plan, versionId: string | undefined, data: WebhookTriggerData, test: boolean) {
    const { runtime } = this.o;
    let received: WebhookReceived;
    try {
      const auth =
        plan.connectionId && plan.pieceId
          ? await runtime.auth({ workspaceId: target.workspaceId, connectionId: plan.connectionId, pieceId: plan.pieceId })
          : undefined;
      received = await plan.triggerDef!.receive!({
        config: plan.config,
        auth,
        workflowId: target.id,
        webhookUrl: `${this.o.publicUrl}/webhook/${token}`,
        fetch: runtime.fetch,
        store: runtime.store(target.workspaceId),
        request: data,
      });
    } catch (error) {
      throw new AppError("INTERNAL", `the ${plan.pieceId} trigger could not read this call: ${(error as Error).message ?? String(error)}`);
    }
    const items = Array.isArray(received?.items) ? received.items : [];
    const environment = test ? "test" : "production";
    const awaitReply = plan.replies && items.length === 1 && !received.reply;
    const started = await Promise.all(
      items.map((item) =>
        this.o.runs.enqueue(
          {
            workspaceId: target.workspaceId,
            workflowId: target.id,
            environment,
            triggerType: "webhook",
            triggerData: { body: item, headers: {}, query: {} },
            versionId,
            traceparent: validTraceparent(data.headers.traceparent),
          },
          { awaitReply, timeoutMs: plan.timeoutMs },
        ),
      ),
    );
    const runIds = started.map((run) => run.runId);
    const headers: Record<string, string> = runIds.length === 1 ? { "x-weft-run-id": runIds[0]! } : {};
    if (received.reply) {
      const { status, headers: given, body } = received.reply;
      return answerOf({ kind: "reply", status, headers: { ...given }, body }, runIds[0] ?? "", plan.timeoutMs, headers);
    }
    if (runIds.length === 1) {
      const reply = started[0]!.reply;
      if (reply) return answerOf(await reply, runIds[0]!, plan.timeoutMs);
      return { status: 202, headers, body: { data: { runId: runIds[0], status: "pending", environment } } };
    }
    return { status: runIds.length === 0 ? 200 : 202, headers, body: { data: { runIds, status: runIds.length === 0 ? "ignored" : "pending", environment } } };
  }

  private planOf(definition: FlowVersionT): Plan {
    const trigger = definition.trigger;
    let replies = trigger.config?.reply === "respond_action";
    if (!replies) {
      for (const { node, isTrigger } of walk(definition)) {
        if (!isTrigger && node.pieceId === "webhook" && node.actionId === "respond") {
          replies = true;
          break;
        }
      }
    }
    const settingsTimeout = definition.settings?.timeoutSeconds;
    const timeoutMs = settingsTimeout ? Math.min(this.o.replyTimeoutMs, settingsTimeout * 1000) : this.o.replyTimeoutMs;
    return {
      isWebhook: trigger.type === "webhook",
      triggerName: trigger.name,
      triggerDef: trigger.pieceId && trigger.actionId ? this.o.pieces.trigger(trigger.pieceId, trigger.actionId) : undefined,
      pieceId: trigger.pieceId,
      connectionId: trigger.connectionId,
      config: trigger.config ?? {},
      replies,
      timeoutMs,
    };
  }
}

export function answerOf(reply: RunReply, runId: string, timeoutMs: number, runHeader: Record<string, string> = { "x-weft-run-id": runId }): WebhookAnswer {
  switch (reply.kind) {
    case "reply": {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(reply.headers ?? {})) {
        const key = name.toLowerCase();
        if (!DROPPED_REPLY_HEADERS.has(key)) headers[key] = String(value);
      }
      Object.assign(headers, runHeader);
      let body = reply.body;
      if (body === null || body === undefined) body = "";
      else if (typeof body !== "string" && !(body instanceof Uint8Array)) {
        headers["content-type"] ??= "application/json";
        body = JSON.stringify(body);
      } else if (typeof body === "string") headers["content-type"] ??= "text/plain; charset=utf-8";
      return { status: reply.status, headers, body };
    }
    case "timeout":
      return envelope(
        504,
        "GATEWAY_TIMEOUT",
        `the workflow did not reply within ${timeoutMs / 1000} s; it keeps running as run ${runId} (GET /api/runs/${runId})`,
        runId,
      );
    case "failed":
      return envelope(500, "RUN_FAILED", `the run failed before it replied; see run ${runId} (GET /api/runs/${runId}) for the failing step`, runId);
    case "paused":
      return { status: 202, headers: runHeader, body: { data: { runId, status: "paused" } } };
    case "finished":
      return { status: 200, headers: runHeader, body: { data: { runId, status: reply.status } } };
  }
}

function envelope(status: number, code: string, message: string, runId: string): WebhookAnswer {
  return { status, headers: { "x-weft-run-id": runId, "content-type": "application/json" }, body: { error: { code, message, details: { runId } } } };
}

function thanksPage(config: Record<string, unknown>): string {
  const text = escapeHtml(config.success_message || "Thank you!");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${text}</title></head><body style="font:16px system-ui,sans-serif;max-width:36rem;margin:2rem auto"><p>${text}</p></body></html>`;
}
