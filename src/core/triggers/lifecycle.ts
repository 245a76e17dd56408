/**
 * The trigger side of publish / unpublish / rotate (docs/api.md sections 3 and 6), registered as workflow
 * lifecycle hooks:
 * - publish: the live version's trigger decides what runs — a schedule row (cron), a poll row
 *   (poll; an existing row keeps its baseline), a provider registration (onEnable). Whatever the
 *   previous live version needed and this one does not is removed. Webhook URLs need nothing:
 *   the intake answers for any live workflow holding the token.
 *   A subscription trigger (MQTT…) gets its long-lived subscription opened (./subscriptions.ts).
 * - unpublish: the schedule and the poll row (baseline) are deleted at once, a subscription closed; the provider
 *   registration is removed best-effort (onDisable errors are logged inside Registrations).
 * - rotate: a registered provider is re-registered with the new URL.
 */
import { AppError } from "../../http/errors";
import type { Logger } from "../../http/logger";
import type { FlowVersionT } from "../../schema/workflow";
import type { Storage } from "../../store/port";
import type { TriggerRowIds } from "../../store/triggers";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { LifecycleHooks, PublishedVersion } from "../workflows/hooks";
import type { Poller } from "./poller";
import type { Registrations } from "./registrations";
import type { Scheduler } from "./scheduler";
import type { Subscriptions } from "./subscriptions";
import { ScheduleError, scheduleOf } from "./schedule-spec";

export interface TriggerLifecycleOptions {
  scheduler: Scheduler;
  poller: Poller;
  registrations: Registrations;
  subscriptions: Subscriptions;
  pieces: PieceRegistry;
  log: Logger;
  scheduleMinIntervalSeconds: number;
  pollIntervalSeconds: number;
  pollMinIntervalSeconds: number;
  /** Called first on every publish, unpublish and rotate: cached views of the workflow are stale. */
  changed?(workflowId: string): void;
}

interface WorkflowLike {
  id: string;
  workspaceId: string;
  webhookToken?: string | null;
  status?: string;
  latestVersionId?: string | null;
}

export class TriggerLifecycle implements LifecycleHooks {
  constructor(private readonly o: TriggerLifecycleOptions) {}

  /** Seconds between polls: `config.poll_interval_seconds` if set, else WEFT_POLL_INTERVAL; never below the minimum. */
  pollInterval(config: Record<string, unknown> | undefined): number {
    const raw = config?.poll_interval_seconds;
    const wanted = raw === undefined || raw === null || raw === "" ? this.o.pollIntervalSeconds : Number(raw);
    if (!Number.isFinite(wanted) || wanted <= 0) return this.o.pollIntervalSeconds;
    return Math.max(this.o.pollMinIntervalSeconds, Math.round(wanted));
  }

  /** Makes the trigger rows match a live version. Synchronous parts first, so a failing provider cannot leave a stale schedule. */
  async onPublish(workflow: WorkflowLike, version: PublishedVersion): Promise<void> {
    this.o.changed?.(workflow.id);
    await this.syncRows(workflow, version.id, version.definition);
    await this.syncSubscription(workflow, version.id, version.definition);
    await this.o.registrations.enable({
      workflowId: workflow.id,
      workspaceId: workflow.workspaceId,
      versionId: version.id,
      webhookToken: workflow.webhookToken ?? null,
      trigger: version.definition.trigger,
    });
  }

  /**
   * Schedule and poll rows for a live version (also used at start-up to repair missing rows). `rows`, when
   * given, says which workflows have rows (start-up: one look for all, not a delete per workflow and kind);
   * `unit`, the unit they are written in (start-up: one for all).
   */
  async syncRows(workflow: WorkflowLike, versionId: string, definition: FlowVersionT, rows?: TriggerRowIds, unit?: Storage): Promise<void> {
    const trigger = definition.trigger;
    if (trigger.type === "cron") {
      let spec: ReturnType<typeof scheduleOf>;
      try {
        spec = scheduleOf(trigger, this.o.pieces, this.o.scheduleMinIntervalSeconds);
      } catch (error) {
        if (!(error instanceof ScheduleError)) throw error;
        await this.o.scheduler.disable(workflow.id, unit);
        throw new AppError("NOT_PUBLISHABLE", `the workflow is live but its schedule cannot run: ${error.message}. Fix trigger.config and publish again`);
      }
      await this.o.scheduler.enable(workflow.id, workflow.workspaceId, versionId, spec, unit);
    } else if (!rows || rows.schedules.has(workflow.id)) await this.o.scheduler.disable(workflow.id, unit);

    if (trigger.type === "poll" && trigger.pieceId && trigger.actionId) {
      await this.o.poller.enable(workflow.id, workflow.workspaceId, versionId, trigger.pieceId, trigger.actionId, this.pollInterval(trigger.config), unit);
    } else if (!rows || rows.polls.has(workflow.id)) await this.o.poller.disable(workflow.id, unit);
  }

  /** The subscription a live version wants open, or none (outside any unit: a disable drops its lease). */
  async syncSubscription(workflow: WorkflowLike, versionId: string, definition: FlowVersionT): Promise<void> {
    const trigger = definition.trigger;
    if (trigger.type === "subscription" && trigger.pieceId && trigger.actionId) {
      this.o.subscriptions.enable({ workflowId: workflow.id, workspaceId: workflow.workspaceId, versionId, trigger });
    } else await this.o.subscriptions.disable(workflow.id);
  }

  async onUnpublish(workflow: WorkflowLike): Promise<void> {
    this.o.changed?.(workflow.id);
    await this.o.scheduler.disable(workflow.id);
    await this.o.poller.disable(workflow.id);
    await this.o.subscriptions.disable(workflow.id);
    await this.o.registrations.disable(workflow.id, workflow.webhookToken ?? null);
  }

  async onWebhookRotated(workflow: WorkflowLike, previousToken: string | null): Promise<void> {
    this.o.changed?.(workflow.id);
    const registered = await this.o.registrations.status(workflow.id);
    if (!registered || workflow.status !== "active") return;
    // The provider still calls the old URL: take it down (with the old URL) and register the new one.
    await this.o.registrations.disable(workflow.id, previousToken);
    this.o.log.info("re-registering webhook after rotate", { workflowId: workflow.id });
    await this.o.registrations.enableFromVersion(workflow.id, workflow.workspaceId, workflow.latestVersionId ?? null, workflow.webhookToken ?? null);
  }
}
