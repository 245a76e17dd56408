/**
 * Self-registering webhooks: piece triggers with onEnable/onDisable that tell a provider to call the
 * workflow's public URL. Publish calls onEnable (once per distinct trigger config: an unchanged republish
 * does not register twice); unpublish calls onDisable best-effort — a provider error is logged and recorded,
 * never returned (docs/api.md "6. Unpublish and the webhook token"). The piece's durable state (e.g. the
 * provider's webhook id) lives in trigger_registrations and is handed back to onDisable. A registration the
 * provider lets expire (a trigger with `renew`) is renewed on the trigger's cron schedule while the workflow
 * is live; a failed renewal is logged and shown as the registration's lastError, and tried again at the next
 * instant. In a cluster one instance renews each registration, the holder of its lease (./ownership.ts);
 * every instance keeps the renewal timers (`sync` adds those of registrations made on another instance) and
 * the one that cannot take the lease skips the instant. A dead renewer's lease lapses and the next instant
 * goes to another.
 */
import { Cron } from "croner";
import { AppError } from "../../http/errors";
import type { Logger } from "../../http/logger";
import type { TriggerDef, TriggerLifecycleContext } from "../../pieces-sdk/types";
import type { TriggerNodeT } from "../../schema/workflow";
import type { Storage } from "../../store/port";
import type { RegistrationRow } from "../../store/triggers";
import { sha256 } from "../../lib/ids";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { Clock } from "../../lib/clock";
import { type Ownership, RENEWAL_LEASE } from "./ownership";
import type { TriggerRuntime, TriggerWorkflows } from "./ports";

export interface RegistrationsOptions {
  storage: Storage;
  pieces: PieceRegistry;
  runtime: TriggerRuntime;
  workflows: TriggerWorkflows;
  clock: Clock;
  log: Logger;
  /** Who renews which registration in a cluster (`soleOwner`: this process renews every one). */
  ownership: Ownership;
  /** `{PUBLIC_URL}/webhook/{token}` for a workflow. */
  webhookUrl(token: string): string;
}

export interface EnableInput {
  workflowId: string;
  workspaceId: string;
  versionId: string;
  webhookToken: string | null;
  trigger: TriggerNodeT;
}

export class Registrations {
  private readonly renewals = new Map<string, Cron>();
  private renewing = false;

  constructor(private readonly o: RegistrationsOptions) {}

  private get store() {
    return this.o.storage.triggers;
  }

  private def(pieceId: string | undefined, triggerId: string | undefined): TriggerDef | undefined {
    return pieceId && triggerId ? this.o.pieces.trigger(pieceId, triggerId) : undefined;
  }

  /**
   * Publish: registers the trigger with its provider when it declares onEnable. An error from the
   * provider is thrown (the caller of publish learns the workflow is live but not registered).
   */
  async enable(input: EnableInput): Promise<void> {
    const { trigger } = input;
    const def = this.def(trigger.pieceId, trigger.actionId);
    const hash = sha256(JSON.stringify([trigger.pieceId, trigger.actionId, trigger.config ?? {}, trigger.connectionId ?? null, input.webhookToken]));
    const existing = await this.store.registration(input.workflowId);
    if (existing?.enabled && existing.config_hash === hash) {
      await this.store.patchRegistration(input.workflowId, { version_id: input.versionId, updated_at: this.o.clock.now() });
      return;
    }
    // A different trigger or config than the one registered: take the old registration down first.
    if (existing) await this.disable(input.workflowId, input.webhookToken);
    if (!def?.onEnable && !def?.onDisable) return;
    const now = this.o.clock.now();
    const row: RegistrationRow = {
      workflow_id: input.workflowId,
      workspace_id: input.workspaceId,
      piece_id: trigger.pieceId!,
      trigger_id: trigger.actionId!,
      version_id: input.versionId,
      trigger: JSON.stringify(trigger),
      config_hash: hash,
      state: null,
      enabled: 0,
      last_error: null,
      updated_at: now,
    };
    await this.store.putRegistration(row);
    const ctx = await this.context(row, trigger, input.webhookToken);
    try {
      await ctx.run(() => def.onEnable?.(ctx));
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      await this.store.patchRegistration(input.workflowId, { last_error: message.slice(0, 2000), updated_at: this.o.clock.now() });
      this.o.log.warn("webhook registration failed", { workflowId: input.workflowId, piece: trigger.pieceId, trigger: trigger.actionId, error: message });
      throw new AppError(
        "UNPROCESSABLE",
        `the workflow is live, but the ${trigger.pieceId} provider refused to register its webhook: ${message}. Check the trigger's connection and config, then publish again (GET /api/workflows/${input.workflowId}/trigger shows the registration)`,
      );
    }
    await this.store.patchRegistration(input.workflowId, { enabled: 1, last_error: null, updated_at: this.o.clock.now() });
    await this.scheduleRenewal(input.workflowId);
  }

  /** `weft serve`: renewal timers for every registration whose trigger renews (`workflowIds`: those the start-up repair kept). */
  async startRenewals(workflowIds?: readonly string[]): Promise<void> {
    this.renewing = true;
    for (const workflowId of workflowIds ?? (await this.store.registrationWorkflowIds())) await this.scheduleRenewal(workflowId);
  }

  stopRenewals(): void {
    this.renewing = false;
    for (const job of this.renewals.values()) job.stop();
    this.renewals.clear();
  }

  /** In a cluster, at every lease renewal: renewal timers for registrations made on another instance, none for those gone. */
  async sync(): Promise<void> {
    if (!this.renewing || !this.o.ownership.shared) return;
    const ids = new Set(await this.store.registrationWorkflowIds());
    for (const workflowId of ids) if (!this.renewals.has(workflowId)) await this.scheduleRenewal(workflowId);
    for (const [workflowId, job] of [...this.renewals]) {
      if (ids.has(workflowId)) continue;
      job.stop();
      this.renewals.delete(workflowId);
      await this.o.ownership.release(RENEWAL_LEASE + workflowId);
    }
  }

  private async scheduleRenewal(workflowId: string): Promise<void> {
    this.renewals.get(workflowId)?.stop();
    this.renewals.delete(workflowId);
    const row = await this.store.registration(workflowId);
    // Stopped, or scheduled again, while the row was read.
    this.renewals.get(workflowId)?.stop();
    this.renewals.delete(workflowId);
    const renew = row?.enabled ? this.def(row.piece_id, row.trigger_id)?.renew : undefined;
    if (!this.renewing || !renew) return;
    try {
      this.renewals.set(workflowId, new Cron(renew.cron, { protect: true }, () => this.renewIfOwner(workflowId)));
    } catch (error) {
      this.o.log.warn("webhook renewal cannot be scheduled", { workflowId, cron: renew.cron, error: (error as Error).message });
    }
  }

  /** The renewal timer: renews unless another instance of the cluster holds this registration's renewals. */
  private async renewIfOwner(workflowId: string): Promise<void> {
    try {
      if (!(await this.o.ownership.claim(RENEWAL_LEASE + workflowId))) return;
    } catch (error) {
      this.o.log.warn("webhook renewal lease could not be taken; trying again at the next renewal time", { workflowId, error: (error as Error).message });
      return;
    }
    await this.renew(workflowId);
  }

  /** Renews one registration now (the cron job, and tests). */
  async renew(workflowId: string): Promise<void> {
    const row = await this.store.registration(workflowId);
    const live = await this.o.workflows.live(workflowId);
    const renew = row ? this.def(row.piece_id, row.trigger_id)?.renew : undefined;
    if (!row || !live || !renew) return;
    try {
      const ctx = await this.context(row, JSON.parse(row.trigger) as TriggerNodeT, live.webhookToken ?? null);
      await ctx.run(() => renew.run(ctx));
      await this.store.patchRegistration(workflowId, { last_error: null, updated_at: this.o.clock.now() });
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      await this.store.patchRegistration(workflowId, { last_error: `renewal failed: ${message}`.slice(0, 2000), updated_at: this.o.clock.now() });
      this.o.log.warn("webhook renewal failed; trying again at the next renewal time", {
        workflowId,
        piece: row.piece_id,
        trigger: row.trigger_id,
        error: message,
      });
    }
  }

  /** Registers the trigger of a stored version (after a rotate). */
  async enableFromVersion(workflowId: string, workspaceId: string, versionId: string | null, webhookToken: string | null): Promise<void> {
    const trigger = versionId ? (await this.o.workflows.versionDefinition(versionId))?.trigger : undefined;
    if (!trigger || !versionId) return;
    await this.enable({ workflowId, workspaceId, versionId, webhookToken, trigger });
  }

  /** Unpublish: de-registers best-effort. Never throws; a provider error is logged. */
  async disable(workflowId: string, webhookToken: string | null): Promise<void> {
    const row = await this.store.registration(workflowId);
    if (!row) return;
    const def = this.def(row.piece_id, row.trigger_id);
    try {
      if (def?.onDisable) {
        // onDisable sees the trigger it was registered with (stored with the row: the workflow may be gone).
        const ctx = await this.context(row, JSON.parse(row.trigger) as TriggerNodeT, webhookToken);
        await ctx.run(() => def.onDisable?.(ctx));
      }
    } catch (error) {
      this.o.log.warn("webhook de-registration failed; the provider may still call the URL (it answers 404 while paused)", {
        workflowId,
        piece: row.piece_id,
        trigger: row.trigger_id,
        error: (error as Error).message ?? String(error),
      });
    } finally {
      this.renewals.get(workflowId)?.stop();
      this.renewals.delete(workflowId);
      try {
        await this.store.deleteRegistration(workflowId);
        await this.o.ownership.drop(RENEWAL_LEASE + workflowId);
      } catch (error) {
        // Never throws (see above): the start-up repair de-registers a registration whose workflow is not live.
        this.o.log.warn("webhook registration could not be forgotten; the next start-up looks at it again", {
          workflowId,
          error: (error as Error).message ?? String(error),
        });
      }
    }
  }

  async status(workflowId: string) {
    const row = await this.store.registration(workflowId);
    if (!row) return null;
    return {
      pieceId: row.piece_id,
      triggerId: row.trigger_id,
      registered: row.enabled === 1,
      lastError: row.last_error,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  /**
   * What a hook of the trigger is called with. The piece's `state` answers synchronously: it is read when the
   * context is made and kept here, and each `set` is written in order; `run` calls the hook and then waits for
   * those writes (a failed write fails the hook's call).
   */
  private async context(
    row: RegistrationRow,
    trigger: TriggerNodeT,
    webhookToken: string | null,
  ): Promise<TriggerLifecycleContext & { run(hook: () => unknown): Promise<void> }> {
    const auth = trigger.connectionId
      ? await this.o.runtime.auth({ workspaceId: row.workspace_id, connectionId: trigger.connectionId, pieceId: row.piece_id })
      : undefined;
    const store = this.store;
    const clock = this.o.clock;
    let state = (await store.registration(row.workflow_id))?.state ?? null;
    let writes: Promise<void> = Promise.resolve();
    let failed: { error: unknown } | undefined;
    return {
      config: trigger.config ?? {},
      auth,
      webhookUrl: webhookToken ? this.o.webhookUrl(webhookToken) : "",
      workflowId: row.workflow_id,
      fetch: this.o.runtime.fetch,
      store: this.o.runtime.store(row.workspace_id),
      state: {
        get: () => (state ? (JSON.parse(state) as Record<string, unknown>) : undefined),
        set: (value) => {
          const text = value === undefined ? null : JSON.stringify(value);
          state = text;
          const at = clock.now();
          // Handled here, told by `run`: the hook may go on for a while after it set the state.
          writes = writes
            .then(() => store.setRegistrationState(row.workflow_id, text, at))
            .catch((error: unknown) => {
              failed ??= { error };
            });
        },
      },
      async run(hook) {
        try {
          await hook();
        } finally {
          await writes;
        }
        if (failed) throw failed.error;
      },
    };
  }
}
