/**
 * Composition of the trigger side: webhook intake, scheduler, poller, provider registrations and
 * the lifecycle hooks that keep them in step with publish / unpublish / rotate.
 *
 *   const triggers = createTriggers({ ... });
 *   workflows hooks.push(triggers.lifecycle);   // publish → schedule/poll/register
 *   await triggers.start();                     // `weft serve`: timers; tests call tick() instead
 *
 * Given an `owner` (instances sharing a PostgreSQL database), each poll, subscription and webhook renewal is
 * done by one instance of the cluster, the holder of its lease (./ownership.ts), renewed every third of the
 * lease while the service runs.
 */
import { BoundedMap } from "../../lib/bounded-map";
import type { TriggersConfig } from "../../config";
import type { Logger } from "../../http/logger";
import { createGuardedFetch, wrapGuardedFetch } from "../../net/guarded-fetch";
import type { GuardedFetch, ResolvedAuth } from "../../pieces-sdk/types";
import type { FlowVersionT } from "../../schema/workflow";
import type { Db } from "../../store/db";
import type { Storage } from "../../store/port";
import { safeEqual, sha256 } from "../../lib/ids";
import { workspaceKv } from "../../store/kv";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { Workflows } from "../workflows/workflows";
import { systemClock, type Clock } from "../../lib/clock";
import { TriggerLifecycle } from "./lifecycle";
import { Poller } from "./poller";
import type { SubscriptionRuns, TriggerRunStarter, TriggerWorkflows, WebhookTarget, WebhookWorkflows } from "./ports";
import { Registrations } from "./registrations";
import { LeaseOwnership, soleOwner } from "./ownership";
import { Subscriptions } from "./subscriptions";
import { Scheduler, type ScheduleObserver } from "./scheduler";
import { WebhookIntake } from "./webhook-intake";

export interface TriggersDeps {
  /** For the pieces' key-value store, still synchronous (src/store/kv.ts). */
  db: Db;
  /** The storage port: the trigger rows and the leases. */
  storage: Storage;
  /** The port lease renewals go through (src/store/storage.ts, `vitalStorageOf`); default `storage`. */
  vitalStorage?: Storage;
  log: Logger;
  /** `leaseSeconds` (WEFT_LEASE_SECONDS): how long a cluster instance's trigger work stays its own unrenewed. */
  config: { publicUrl: string; leaseSeconds: number; triggers: TriggersConfig };
  pieces: PieceRegistry;
  workflows: Workflows;
  /** The engine, seen through the two narrow starters the trigger code needs. */
  runs: TriggerRunStarter & SubscriptionRuns;
  fetch?: () => GuardedFetch;
  resolveConnectionAuth?: () => ((input: { workspaceId: string; connectionId: string; pieceId: string }) => Promise<ResolvedAuth>) | undefined;
  clock?: Clock;
  /** Told how late each schedule fired (/metrics). */
  scheduleObserver?: ScheduleObserver;
  /**
   * This instance's fleet id when other instances may share the database: polls, subscriptions and renewals
   * then go by leases held in its name. Without it this process owns all of them and no lease is stored.
   */
  owner?: string;
}

export type Triggers = ReturnType<typeof createTriggers>;

/** Longest accepted token: anything longer cannot be one of ours and is not even hashed. */
const MAX_TOKEN_LENGTH = 200;

export function createTriggers(deps: TriggersDeps) {
  const clock = deps.clock ?? systemClock;
  const { storage, workflows } = deps;
  const store = storage.triggers;

  const versionDefinition = async (versionId: string): Promise<FlowVersionT | null> => {
    const row = await workflows.versionById(versionId);
    return row ? workflows.snapshot(row) : null;
  };

  const triggerWorkflows: TriggerWorkflows = {
    live: async (workflowId, via = store) => {
      const row = await via.liveWorkflow(workflowId);
      return row ? { id: row.id, workspaceId: row.workspace_id, versionId: row.latest_version_id, webhookToken: row.webhook_token } : null;
    },
    versionDefinition,
  };

  // Known tokens, by hash: the public URL is the hot path, and a read under heavy run writes costs more
  // than the whole rest of the intake. Entries change only through publish, unpublish, rotate and
  // delete, which all pass through the lifecycle hooks below and drop the workflow's entry. Unknown
  // tokens are never cached (a probe cannot fill memory).
  const targets = new BoundedMap<string, WebhookTarget>(10_000);
  const hashByWorkflow = new Map<string, string>();
  const forget = (workflowId: string) => {
    const hash = hashByWorkflow.get(workflowId);
    if (hash !== undefined) targets.delete(hash);
    hashByWorkflow.delete(workflowId);
  };

  const webhookWorkflows: WebhookWorkflows = {
    byToken: async (token) => {
      if (!token || token.length > MAX_TOKEN_LENGTH) return null;
      const hash = sha256(token);
      let target = targets.recall(hash);
      if (!target) {
        const row = await store.webhookTarget(hash);
        if (!row?.webhook_token) return null;
        target = { id: row.id, workspaceId: row.workspace_id, status: row.status, latestVersionId: row.latest_version_id, webhookToken: row.webhook_token };
        forget(row.id);
        targets.set(hash, target);
        hashByWorkflow.set(row.id, hash);
      }
      // The lookup is by hash; the token itself is only ever compared in constant time.
      return safeEqual(target.webhookToken, token) ? target : null;
    },
    versionDefinition,
    draftDefinition: async (workflowId, workspaceId) => {
      const row = await storage.workflows.get(workspaceId, workflowId);
      return row ? workflows.draft(row) : null;
    },
    recordTestPayload: (workflowId, _workspaceId, name, payload) => workflows.editor.recordTestPayload(workflowId, name, payload),
  };

  let ownFetch: GuardedFetch | undefined;
  const currentFetch = (): GuardedFetch => {
    const given = deps.fetch?.();
    if (given) return given;
    ownFetch ??= createGuardedFetch();
    return ownFetch;
  };
  const runtime = {
    auth: async (input: { workspaceId: string; connectionId: string; pieceId: string }) => {
      const resolve = deps.resolveConnectionAuth?.();
      if (!resolve) throw new Error(`connection ${input.connectionId} cannot be resolved: connections are not available`);
      return resolve(input);
    },
    // Never the global fetch: without the app's guard, a guard with no allow-list.
    fetch: wrapGuardedFetch(
      (url, init) => currentFetch()(url, init),
      () => currentFetch(),
    ),
    store: (workspaceId: string) => workspaceKv(storage, workspaceId),
  };

  const webhookUrl = (token: string) => `${deps.config.publicUrl}/webhook/${token}`;
  const ownership = deps.owner
    ? new LeaseOwnership({ storage, vital: deps.vitalStorage, owner: deps.owner, leaseMs: deps.config.leaseSeconds * 1000, clock })
    : soleOwner;
  const scheduler = new Scheduler({ storage, clock, workflows: triggerWorkflows, runs: deps.runs, log: deps.log, observer: deps.scheduleObserver });
  const poller = new Poller({
    storage,
    clock,
    workflows: triggerWorkflows,
    runs: deps.runs,
    pieces: deps.pieces,
    log: deps.log,
    runtime,
    ownership,
  });
  const subscriptions = new Subscriptions({ pieces: deps.pieces, runs: deps.runs, runtime, log: deps.log, ownership, workflows: triggerWorkflows });
  const registrations = new Registrations({ storage, pieces: deps.pieces, runtime, workflows: triggerWorkflows, clock, log: deps.log, webhookUrl, ownership });
  const lifecycle = new TriggerLifecycle({
    scheduler,
    poller,
    registrations,
    subscriptions,
    pieces: deps.pieces,
    log: deps.log,
    scheduleMinIntervalSeconds: deps.config.triggers.scheduleMinIntervalSeconds,
    pollIntervalSeconds: deps.config.triggers.pollIntervalSeconds,
    pollMinIntervalSeconds: deps.config.triggers.pollMinIntervalSeconds,
    changed: forget,
  });
  const intake = new WebhookIntake({
    workflows: webhookWorkflows,
    runs: deps.runs,
    pieces: deps.pieces,
    replyTimeoutMs: deps.config.triggers.webhookReplyTimeoutMs,
    publicUrl: deps.config.publicUrl,
    runtime,
  });

  /**
   * Start-up repair: every live workflow has the schedule / poll row its version needs (existing rows
   * and their stored instants and baselines are kept), and no row outlives its workflow's liveness.
   * Returns the workflows with a registration that stays (their renewals are started next).
   */
  async function reconcile(): Promise<string[]> {
    const live = new Set<string>();
    const subscribed: Array<() => Promise<void>> = [];
    // One unit: instances of a cluster starting together repair in turn, and a publish or unpublish on another
    // instance lands before or after the repair, never between its look at the live workflows and its deletes.
    await storage.atomically(async (unit) => {
      // Which workflows have trigger rows, looked up once: only those need rows deleted.
      const rows = await unit.triggers.triggerRowIds();
      // Read in the unit: a publish or unpublish (a unit too) lands before or after, never in between.
      for (const { workflow, version } of await workflows.liveWorkflows(0, unit)) {
        live.add(workflow.id);
        try {
          await lifecycle.syncRows(workflow, version.id, version.definition, rows, unit);
        } catch (error) {
          deps.log.warn("live workflow's trigger cannot run", { workflowId: workflow.id, error: (error as Error).message });
          continue;
        }
        subscribed.push(() => lifecycle.syncSubscription(workflow, version.id, version.definition));
      }
      await unit.triggers.deleteTriggerRowsExcept(live, rows);
    });
    for (const subscribe of subscribed) await subscribe();
    // A registration whose workflow is no longer live (its unpublish hook did not finish): de-register, best-effort.
    const registered = await store.registrationWorkflowIds();
    for (const workflowId of registered) {
      // Never throws (Registrations.disable logs what fails).
      if (!live.has(workflowId)) void registrations.disable(workflowId, null);
    }
    return registered.filter((workflowId) => live.has(workflowId));
  }

  /** What the live trigger of a workflow is doing (GET /api/workflows/{id}/trigger). */
  async function status(workspaceId: string, workflowId: string) {
    const row = await workflows.row(workspaceId, workflowId);
    return {
      workflowId: row.id,
      status: row.status,
      triggerType: row.trigger_type,
      webhook: row.webhook_token
        ? { url: webhookUrl(row.webhook_token), testUrl: `${webhookUrl(row.webhook_token)}/test`, live: row.status === "active" }
        : null,
      schedule: await scheduler.status(row.id),
      poll: await poller.status(row.id),
      registration: await registrations.status(row.id),
      subscription: await subscriptions.status(row.id),
    };
  }

  /**
   * Cluster only: renew the leases held, then follow what other instances changed and take what lapsed. The
   * renewal has its own timer: it never waits for the following-up of the renewal before (which opens
   * subscriptions, reads workflows), only for the renewal before itself.
   */
  let renewing: Promise<void> | undefined;
  let following: Promise<void> | undefined;
  function keepLeases(): void {
    if (renewing) return; // the one before is still under way: it renews to a later expiry anyway
    renewing = (async () => {
      try {
        await ownership.renew();
      } catch (error) {
        deps.log.warn("trigger leases could not be renewed; trying again at the next renewal", { error: (error as Error).message });
        return;
      }
      if (following) return; // still following up the renewal before: the next renewal follows up
      following = (async () => {
        for (const sync of [() => subscriptions.sync(), () => registrations.sync()]) {
          try {
            await sync();
          } catch (error) {
            deps.log.warn("trigger ownership could not be brought up to date; trying again at the next renewal", { error: (error as Error).message });
          }
        }
      })().finally(() => {
        following = undefined;
      });
    })().finally(() => {
      renewing = undefined;
    });
  }

  let started = false;
  let starting: Promise<void> | undefined;
  let leaseTimer: ReturnType<typeof setInterval> | undefined;
  return {
    store,
    scheduler,
    poller,
    registrations,
    subscriptions,
    lifecycle,
    intake,
    clock,
    ownership,
    reconcile,
    status,
    /** A workflow changed on another instance of the cluster (all of them: undefined): its webhook target is read again. */
    forget(workflowId?: string) {
      if (workflowId !== undefined) return forget(workflowId);
      targets.clear();
      hashByWorkflow.clear();
    },
    /** `weft serve`: repair rows, then run the scheduler and the poller on timers. */
    start(): Promise<void> {
      if (started) return starting ?? Promise.resolve();
      started = true;
      starting = (async () => {
        const registered = await reconcile();
        if (!started) return; // stopped meanwhile
        scheduler.start();
        poller.start();
        subscriptions.start();
        await registrations.startRenewals(registered);
        if (ownership.shared && started) {
          leaseTimer = setInterval(keepLeases, ownership.renewEveryMs);
          leaseTimer.unref();
        }
      })();
      return starting;
    },
    async stop() {
      started = false;
      await starting?.catch(() => undefined);
      starting = undefined;
      if (leaseTimer) clearInterval(leaseTimer);
      leaseTimer = undefined;
      registrations.stopRenewals();
      await Promise.all([scheduler.stop(), poller.stop(), subscriptions.stop()]);
      await renewing;
      await following;
      // Handed over at once: the other instances take the polls and subscriptions at their next look.
      try {
        await ownership.releaseAll();
      } catch (error) {
        deps.log.warn("trigger leases could not be released; the other instances take them when they lapse", { error: (error as Error).message });
      }
    },
  };
}
