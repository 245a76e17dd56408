/**
 * What the trigger core needs from workflows and from the engine, as narrow interfaces.
 * `createTriggers` (./service.ts) adapts the real workflow store and engine to them; tests may
 * pass fakes. Keeping them narrow is what lets the scheduler run without HTTP or worker threads.
 */
import type { GuardedFetch, KeyValueStore, ResolvedAuth } from "../../pieces-sdk/types";
import type { FlowVersionT } from "../../schema/workflow";
import type { TriggerRepository } from "../../store/triggers";
import type { Storage } from "../../store/port";

export type TriggerRunType = "webhook" | "cron" | "poll" | "error" | "run_finished" | "subscription";

export interface TriggerRunInput {
  workspaceId: string;
  workflowId: string;
  environment: "production" | "test";
  triggerType: TriggerRunType;
  triggerData: unknown;
  /** The caller's W3C trace context (a webhook's valid `traceparent` header), kept by the run in memory. */
  traceparent?: string;
}

export interface TriggerRunStarter {
  /**
   * Inserts the pending run as part of the trigger's own unit of work (`unit`), so "this instant fired" /
   * "this item was seen" commit together with the run; answers its id.
   */
  start(input: TriggerRunInput, unit: Storage): Promise<string>;
}

export interface LiveWorkflow {
  id: string;
  workspaceId: string;
  versionId: string;
  webhookToken?: string | null;
}

export interface TriggerWorkflows {
  /**
   * The workflow when it is live (status active with a published version), else null. `via`: the trigger
   * repository of the unit asking (a unit awaits only its own calls).
   */
  live(workflowId: string, via?: TriggerRepository): Promise<LiveWorkflow | null>;
  /** The published snapshot of a version (immutable, so callers may cache it). */
  versionDefinition(versionId: string): Promise<FlowVersionT | null>;
}

/** What piece code run by triggers (poll, onEnable, onDisable) gets: credentials and guarded fetch. */
export interface TriggerRuntime {
  auth(input: { workspaceId: string; connectionId: string; pieceId: string }): Promise<ResolvedAuth | undefined>;
  fetch: GuardedFetch;
  /** The workspace's key-value store, for trigger code (poll, onEnable/onDisable). */
  store(workspaceId: string): KeyValueStore;
}

/** How a run answered the call that started it (webhook.respond), or why it did not. */
export type RunReply =
  | { kind: "reply"; status: number; headers: Record<string, string>; body: unknown }
  | { kind: "failed"; errorMessage: string | null }
  | { kind: "finished"; status: string }
  | { kind: "paused" }
  | { kind: "timeout" };

export interface WebhookRunStarter {
  /**
   * Queues the run with group commit and resolves once it is durable. With `awaitReply`, `reply`
   * settles with the run's webhook.respond reply (or its end) — registered before the run can
   * start, so a fast run cannot answer before anyone listens.
   */
  enqueue(
    input: TriggerRunInput & { versionId?: string },
    options: { awaitReply: boolean; timeoutMs: number },
  ): Promise<{ runId: string; reply?: Promise<RunReply> }>;
}

/** What subscriptions need besides starting runs: the newest events they started runs for, newest first (after pending writes). */
export interface SubscriptionRuns extends WebhookRunStarter {
  recentTriggerBodies(workflowId: string, limit: number): Promise<unknown[]>;
}

/** A workflow as the public webhook URL sees it. */
export interface WebhookTarget {
  id: string;
  workspaceId: string;
  status: string;
  latestVersionId: string | null;
  webhookToken: string;
}

export interface WebhookWorkflows {
  /** Looks the token up by its hash and confirms it in constant time; null when no workflow holds it. */
  byToken(token: string): Promise<WebhookTarget | null>;
  versionDefinition(versionId: string): Promise<FlowVersionT | null>;
  draftDefinition(workflowId: string, workspaceId: string): Promise<FlowVersionT | null>;
  /** Records an inbound test call as the workflow's test payload (the editor's "listen for a test event"). */
  recordTestPayload(workflowId: string, workspaceId: string, triggerName: string, payload: unknown): void | Promise<void>;
}
