/**
 * Composition root: builds the Elysia app from the parts below and never listens (cli.ts does).
 * Tests call `createApp(deps).app.handle(request)`.
 */
import { join } from "node:path";
import { Elysia } from "elysia";
import packageJson from "../package.json" with { type: "json" };
import { connectionsApi } from "./api/connections";
import { editorApi } from "./api/editor";
import { foldersApi } from "./api/folders";
import { identityApi } from "./api/identity";
import { LoginGuard } from "./api/middleware/login-guard";
import { membersApi } from "./api/members";
import { auditApi } from "./api/audit";
import { Audit } from "./core/audit";
import { ssoApi } from "./api/sso";
import { secondFactorApi } from "./api/second-factor";
import { gitApi } from "./api/git";
import { lifecycleApi } from "./api/lifecycle";
import { mcpApi } from "./api/mcp";
import { piecesApi } from "./api/pieces";
import { piecePackagesApi } from "./api/piece-packages";
import { oauth2CallbackApi } from "./api/oauth2-callback";
import { serviceApi } from "./api/service";
import { backupsApi } from "./api/backups";
import { fleetApi } from "./api/fleet";
import { settingsApi } from "./api/settings";
import { templatesApi } from "./api/templates";
import { uiApi } from "./api/ui";
import { apiDocsApi } from "./api/api-docs";
import { webhookServerRoutes, webhooksApi, type RequestBasics } from "./api/webhooks";
import { runsApi } from "./api/runs";
import { workflowsApi } from "./api/workflows";
import type { AppDeps } from "./api/deps";
import type { Config } from "./config";
import { Connections, ManagedApps, stateKeyFrom } from "./core/connections";
import { keyringOptions } from "./core/connections/key-rotation";
import { ClusterChanges } from "./core/cluster-changes";
import { secretBox } from "./core/crypto";
import { Identity } from "./core/identity";
import { Backups } from "./core/backups";
import { Members, smtpInvitationMailer } from "./core/members";
import { SingleSignOn } from "./core/sso";
import { SecondFactor } from "./core/second-factor";
import { GitSync, planCounts } from "./core/git/sync";
import { Fleet } from "./core/fleet";
import { ClusterPieces } from "./core/cluster-pieces";
import { Metrics } from "./core/metrics";
import { NetworkSettings } from "./core/network";
import { loadCatalogIndex, PieceCatalog, PiecePackages } from "./pieces-runtime/activepieces";
import { builtinRegistry, type PieceRegistry } from "./pieces-runtime/registry";
import { PackagesService } from "./core/pieces/packages";
import { Templates } from "./core/templates/templates";
import { type Clock, systemClock } from "./lib/clock";
import { engineRuns } from "./core/triggers/engine-runs";
import { Runs } from "./core/runs/runs";
import { Engine } from "./engine/engine";
import { FollowUps } from "./engine/follow-ups";
import { observeAll } from "./engine/engine-observer";
import { createTracing } from "./core/tracing";
import { createLogStream } from "./core/log-stream";
import { workflowSourceFrom } from "./core/workflows/workflow-source";
import { createTriggers } from "./core/triggers/service";
import { Folders } from "./core/workflows/folders";
import { WorkflowFiles } from "./core/workflows/files";
import { Transfer } from "./core/workflows/transfer";
import { Workflows } from "./core/workflows/workflows";
import { jsonAnswer } from "./http/answer-body";
import { parseJsonBody, readBodyBytes, assertBodySize, BODYLESS_ROUTES } from "./http/body";
import { toErrorResponse } from "./http/error-handler";
import { AppError } from "./http/errors";
import { Idempotency } from "./api/middleware/idempotency";
import { createLogger, type Logger } from "./http/logger";
import { buildOpenApi } from "./api/middleware/openapi";
import { TokenBuckets } from "./api/middleware/rate-limit";
import { createSecurity } from "./api/middleware/security";
import type { Db } from "./store/db";
import { databaseBackups, sharedStore, sqliteFile, storeAddress } from "./store/open";
import { storageError } from "./store/storage-errors";
import { storageOf, vitalStorageOf } from "./store/storage";
import { Liveness } from "./core/liveness";
import { newId } from "./lib/ids";
import { sandboxProcessCounts } from "./sandbox";
import { AddressPolicy } from "./net/address-policy";
import { ClientAddresses } from "./net/client-address";
import { createGuardedFetch, wrapGuardedFetch } from "./net/guarded-fetch";

export const VERSION: string = packageJson.version;
export type { AppDeps };

export interface CreateAppOptions {
  config: Config;
  db: Db;
  log?: Logger;
  /** Defaults to the built-ins; `serve` passes `await loadRegistry(config)`. */
  pieces?: PieceRegistry;
  /** Test hook for connections: the refresh margin. */
  connections?: { refreshMarginMs?: number };
  /**
   * The one clock of the engine and the core (docs/architecture.md, "Time"); default the system clock. A test
   * gives a FakeClock and advances it: schedules and polls (`triggers.scheduler.tick()`), resumes, retention,
   * expiries and leases then follow it.
   */
  clock?: Clock;
}

export function createApp(options: CreateAppOptions) {
  const { config, db } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  // In a cluster, what one instance changes of the shared settings the others hear of (alone: nothing happens).
  const clusterChanges = new ClusterChanges({ db, log });
  // The storage port (src/store/port.ts): the areas already on it; the others still take `db`.
  const storage = storageOf(db, { pool: config.databasePool });
  // Run and audit events to syslog and an HTTP endpoint (WEFT_LOG_SYSLOG, WEFT_LOG_HTTP_URL); without either, emit does nothing.
  const logStream = createLogStream(config.logStream, { log });
  const identity = new Identity(storage, clusterChanges, clock);
  // Who did what, when, from where: stored and forwarded to the log stream, each action once (docs/teams.md).
  const audit = new Audit({ storage, sink: logStream, retentionDays: config.auditRetentionDays });
  const security = createSecurity({
    identity,
    rateLimitPerSecond: config.rateLimitPerSecond,
    rateLimitBurst: config.rateLimitBurst,
    clock,
    // Read at each call: deps is built below. A workflow's variables stay editable in a managed workspace: secret
    // values are each environment's own and never in git (docs/workflows-as-code.md, "Environments").
    editGuard: async (principal, request) => {
      if (!/^\/api\/workflows\/[^/]+\/variables$/.test(new URL(request.url).pathname)) await deps.gitSync.assertEditable(principal.workspaceId);
    },
  });
  const instanceId = newId();
  // In a cluster each claim of an Idempotency-Key names the instance executing it (released below if it dies).
  const idempotency = new Idempotency(storage.idempotency, sharedStore(db) ? instanceId : null);
  const flood = new TokenBuckets(config.floodPerSecond, config.floodPerSecond * 2, undefined, clock);
  // Who each request comes from, believing forwarding headers only from WEFT_TRUSTED_PROXIES (docs/configuration.md).
  const clients = new ClientAddresses(config.trustedProxies);

  let document: ReturnType<typeof buildOpenApi> | undefined;
  const contract = {
    document: () => (document ??= buildOpenApi(app, { version: VERSION, serverUrl: config.publicUrl })),
  };
  const pieces = options.pieces ?? builtinRegistry();
  const secrets = secretBox(keyringOptions(config));
  // One allow-list for this thread's steps and piece calls; Settings → Network changes it (NetworkSettings below).
  const addressPolicy = new AddressPolicy(config.allowedCidrs);
  const guardedFetch = createGuardedFetch({ policy: addressPolicy });
  const deps = {
    config,
    db,
    storage,
    vitalStorage: vitalStorageOf(db),
    liveness: new Liveness({ storage: vitalStorageOf(db), clock }),
    log,
    identity,
    security,
    // Password guessing, per account and per address (docs/teams.md, "Login protection"): logins, password changes, invitations.
    loginGuard: new LoginGuard({
      perAccount: { burst: config.loginAttempts, perMinute: 1 },
      perAddress: { burst: config.loginAttempts * 3, perMinute: 6 },
      clock,
    }),
    contract,
    pieces,
    secrets,
    guardedFetch,
    clusterChanges,
    logStream,
    audit,
  } as AppDeps;
  deps.members = new Members({
    storage,
    identity,
    publicUrl: config.publicUrl,
    mailer: config.smtpUrl ? smtpInvitationMailer(config.smtpUrl, config.smtpFrom) : undefined,
    onMailError: (error) => log.warn("an invitation e-mail could not be sent; its link was shown to the inviter", { error: error.message }),
  });
  deps.sso = new SingleSignOn({ storage, identity, secrets, publicUrl: config.publicUrl, fromEnvironment: config.oidcProviders, events: logStream, clock });
  deps.secondFactor = new SecondFactor({ storage, identity, secrets });
  deps.connections = new Connections({
    storage,
    box: secrets,
    stateKey: stateKeyFrom(config),
    stateLifetimeMs: config.oauthStateTtlSeconds * 1000,
    pieces,
    log,
    publicUrl: config.publicUrl,
    managedApps: ManagedApps.load(config.oauthAppsFile),
    clock,
    // Resolved per call, so a test may swap deps.guardedFetch.
    fetch: wrapGuardedFetch(
      (url, init) => deps.guardedFetch(url, init),
      () => deps.guardedFetch,
    ),
    ...options.connections,
  });
  deps.resolveConnectionAuth = deps.connections.resolveConnectionAuth;
  deps.lifecycleHooks = logStream.active ? [logStream.lifecycleHooks()] : [];
  const clusterPieces = new ClusterPieces(
    () => deps.pieces,
    () => deps.fleet.executingPeers(),
  );
  deps.workflows = new Workflows({
    storage,
    log,
    // In a cluster a run may execute on any instance: the gate counts only pieces every one of them serves.
    pieces: sharedStore(db) ? () => clusterPieces : () => deps.pieces,
    secrets,
    publicUrl: config.publicUrl,
    hooks: deps.lifecycleHooks,
    scheduleMinIntervalSeconds: config.triggers.scheduleMinIntervalSeconds,
    clock,
  });
  deps.workflows.setConnectionDirectory(deps.connections.choices);
  deps.folders = new Folders(deps.workflows);
  deps.templates = new Templates(deps.workflows);
  deps.workflowTransfer = new Transfer(deps.workflows);
  deps.workflowFiles = new WorkflowFiles(deps.workflows, deps.connections);
  deps.gitSync = new GitSync({
    storage,
    secrets,
    workflows: deps.workflows,
    files: deps.workflowFiles,
    dataDir: config.dataDir,
    log,
    instanceId,
    clock,
    fetch: () => deps.guardedFetch,
    changes: clusterChanges,
    onPull: async (workspaceId, how, outcome) => {
      // A scheduled pull that found nothing new is not an event (a schedule of every minute would fill the log).
      if (!(outcome instanceof Error) && outcome.upToDate && outcome.published.length === 0) return;
      const actor = { type: "anonymous" as const, id: null, name: `git ${how}` };
      const details =
        outcome instanceof Error ? { error: outcome.message } : { commit: outcome.commit, upToDate: outcome.upToDate, plan: planCounts(outcome.plan) };
      await audit.record({ actor, workspaceId, ip: null, userAgent: null }, outcome instanceof Error ? "git.pull_failed" : "git.pulled", null, details);
    },
  });
  const workflowSource = workflowSourceFrom(deps.workflows);
  // Told by the engine, the scheduler and the webhook routes as things happen; the gauges read at each scrape.
  deps.metrics = new Metrics({
    workflowLabels: config.metrics.workflowLabels,
    version: VERSION,
    gauges: {
      runs: () => {
        const load = deps.engine.load;
        return { queued: load.pending, running: load.active };
      },
      sandbox: sandboxProcessCounts,
      pieceHosts: () => packages.runningHosts,
      logStreamDropped: () => Object.fromEntries(Object.entries(logStream.stats).map(([destination, stats]) => [destination, stats.dropped])),
    },
  });
  // Off (no OTLP endpoint) it is undefined and the OpenTelemetry SDK is never loaded.
  deps.tracing = createTracing(config.traces, { version: VERSION, log, clock });
  deps.engine = new Engine({
    db,
    config,
    log,
    pieces,
    workflows: () => workflowSource,
    resolveAuth: () => deps.resolveConnectionAuth,
    fetch: () => deps.guardedFetch,
    addressPolicy,
    dbPath: sqliteFile(db),
    storeAddress: storeAddress(db),
    // Instances sharing a PostgreSQL database form a cluster: the fleet's heartbeat is each one's lease on its runs.
    cluster: sharedStore(db) ? { instanceId, role: config.role, aliveIds: () => deps.fleet.aliveIds() } : undefined,
    observer: observeAll(deps.metrics, deps.tracing, logStream.active ? logStream : undefined),
    clock,
  });
  deps.runs = new Runs(deps.engine);
  // Installed Activepieces packages join the piece registry now; their code loads only when a step first uses them.
  const packages = new PiecePackages({
    dir: join(config.dataDir, "pieces"),
    registryUrl: config.npmRegistry,
    allowCidrs: config.allowedCidrs,
    publicUrl: config.publicUrl,
    registry: pieces,
    memoryMb: config.pieceMemoryMb,
  });
  for (const failure of packages.load()) log.warn("an installed piece package could not be loaded", failure);
  deps.network = new NetworkSettings({
    storage,
    log,
    identity,
    environmentCidrs: config.allowedCidrs,
    apply: (cidrs) => {
      deps.engine.setAllowedCidrs(cidrs);
      packages.setAllowCidrs(cidrs);
    },
    changes: clusterChanges,
  });
  const catalog = new PieceCatalog({
    registryUrl: config.npmRegistry,
    index: loadCatalogIndex(),
    installed: () => packages.installed(),
    now: () => clock.now(),
    ttlMs: config.catalogTtlSeconds * 1000,
  });
  deps.piecePackages = new PackagesService({ packages, catalog, registry: pieces, workflows: deps.workflows, log });
  deps.fleet = new Fleet({
    // The heartbeat is not held up by slow work: an instance working hard is not taken for a dead one.
    storage: deps.vitalStorage,
    // In a cluster the workflow gate asks which pieces the other instances serve: read once a second.
    lookEveryMs: sharedStore(db) ? 1000 : undefined,
    log,
    pieces,
    version: VERSION,
    heartbeatSeconds: config.heartbeatSeconds,
    leaseSeconds: config.leaseSeconds,
    id: instanceId,
    role: config.role,
    clock,
  });
  deps.fleet.onBeat(() => deps.engine.claimOrphans());
  // The app's clock names the files, so a test's fake clock names them too.
  deps.backups = new Backups({ ...config.backups, write: databaseBackups(db), log, identity, clock });
  // Keys a killed process had claimed but never answered (docs/security.md "Crashes"): alone, every claim at
  // start-up; in a cluster, those of instances no longer alive, looked for again when one stops being alive.
  const releaseAbandonedKeys = () =>
    idempotency.releaseAbandoned(sharedStore(db) ? deps.fleet.aliveIds() : undefined).catch((error) => {
      log.warn("could not release abandoned Idempotency-Key claims", { error: String((error as Error)?.message ?? error) });
    });
  if (sharedStore(db)) {
    // Once the registry is read (refresh never rejects): an instance starting sees the others alive.
    void deps.fleet.refresh().then(releaseAbandonedKeys);
    deps.fleet.onBeat(releaseAbandonedKeys);
  } else void releaseAbandonedKeys();
  const followUps = new FollowUps(deps.engine, () => workflowSource, pieces, log);
  deps.lifecycleHooks.push({
    // Announced first: a trigger hook below may throw, and what the others keep of the workflow is stale already.
    onPublish: (workflow, version) => {
      workflowSource.invalidate(workflow.id);
      deps.engine.settingsChanged(workflow.id, "production", version.definition.settings);
      followUps.invalidate();
      clusterChanges.announce({ what: "workflow", id: workflow.id });
    },
    onUnpublish: (workflow) => {
      workflowSource.invalidate(workflow.id);
      followUps.invalidate();
      clusterChanges.announce({ what: "workflow", id: workflow.id });
    },
    onWebhookRotated: (workflow) => clusterChanges.announce({ what: "workflow", id: workflow.id }),
  });
  deps.triggers = createTriggers({
    db,
    storage,
    vitalStorage: deps.vitalStorage,
    log,
    config,
    pieces,
    workflows: deps.workflows,
    clock,
    scheduleObserver: deps.metrics,
    runs: engineRuns(() => {
      const engine = deps.engine as Engine | undefined;
      if (!engine) throw new Error("the engine is not available");
      return engine;
    }),
    fetch: () => deps.guardedFetch,
    resolveConnectionAuth: () => deps.resolveConnectionAuth,
    // In a cluster each poll, subscription and webhook renewal is held by one instance, under its fleet id.
    owner: sharedStore(db) ? deps.fleet.id : undefined,
  });
  deps.lifecycleHooks.push(deps.triggers.lifecycle);
  // A workflow published, unpublished or rotated on another instance: its webhook target, production definition,
  // the live event-triggered workflows and the settings of its lane here are read again.
  const liveSettingsToLane = (workflowId: string) => {
    // Not waited for (a notice from the bus): a failed read leaves the lane's settings until the next change.
    void deps.workflows.liveSettings(workflowId).then(
      (settings) => settings && deps.engine.settingsChanged(workflowId, "production", settings),
      (error) => log.warn("live settings could not be read", { workflowId, error: (error as Error).message }),
    );
  };
  clusterChanges.follow(
    "workflow",
    ({ id }) => {
      if (!id) return;
      workflowSource.invalidate(id);
      deps.triggers.forget(id);
      followUps.invalidate();
      if (deps.engine.dispatcher.hasLane(id, "production")) liveSettingsToLane(id);
    },
    () => {
      workflowSource.invalidate();
      deps.triggers.forget();
      followUps.invalidate();
      for (const id of deps.engine.dispatcher.waitingWorkflows("production")) liveSettingsToLane(id);
    },
  );

  const basics: RequestBasics = {
    requestId: (request) => request.headers.get("x-request-id")?.slice(0, 100) || crypto.randomUUID(),
    flooded(request, server) {
      // Every request passes here first: the client is resolved once, for the audit log, sessions and rate limits.
      const client = clients.remember(request, server?.requestIP(request)?.address);
      if (!flood.enabled) return undefined;
      const state = flood.take(client.address ?? "in-process");
      if (state.allowed) return undefined;
      return {
        status: 429,
        headers: { "retry-after": String(state.retryAfterSeconds) },
        body: { error: { code: "RATE_LIMITED", message: `too many requests from this address; retry after ${state.retryAfterSeconds} s` } },
      };
    },
    // As the onError hook below answers an error thrown while parsing (Elysia wraps it) or while handling.
    error(phase, error, requestId, request) {
      const thrown = phase === "parse" ? { cause: error, message: (error as Error)?.message ?? String(error) } : error;
      return errorAnswer(phase === "parse" ? "PARSE" : "UNKNOWN", thrown, requestId, request, new URL(request.url).pathname);
    },
    app: (request) => app.fetch(request),
  };
  const errorAnswer = (code: string | number, error: unknown, requestId: string, request: Request, path: string) => {
    const answer = toErrorResponse(code, error, requestId, request.method, path, storageError);
    // Not waited for (an error's answer is made synchronously): a retry meanwhile finds the key running and waits.
    void idempotency
      .after(request, answer.status, answer.body)
      .catch((error) => log.warn("could not store or release an Idempotency-Key's answer", { error: String((error as Error)?.message ?? error) }));
    if (answer.internal) log.error("unhandled error", { requestId, method: request.method, path, error: (error as Error)?.stack ?? String(error) });
    return { status: answer.status, headers: { ...answer.headers, "content-type": "application/json" }, body: answer.body };
  };

  // `serve.routes` are routes of the server itself (used by `listen`, never by `app.handle`): see webhookServerRoutes.
  const cluster = sharedStore(db);
  const app = new Elysia({ normalize: false, serve: { routes: webhookServerRoutes(deps, basics) } as never })
    .onRequest(({ request, set, server }) => {
      set.headers["x-request-id"] = basics.requestId(request);
      const flooded = basics.flooded(request, server);
      if (flooded) {
        set.status = flooded.status;
        Object.assign(set.headers, flooded.headers);
        return flooded.body;
      }
    })
    .onParse(async ({ request, contentType, route }) => {
      assertBodySize(request, config.bodyLimit);
      if (BODYLESS_ROUTES.has(`${request.method} ${route}`)) return null;
      // The git host's push webhook checks its signature over the body's bytes: the route reads them itself.
      if (route.startsWith("/api/git/webhook/")) return;
      if (contentType?.startsWith("application/json")) return (await parseJsonBody(request, config.bodyLimit)) ?? null;
      // Public webhook URLs parse every other Content-Type themselves (bounded, strict by type).
      if (route.startsWith("/webhook/")) return;
      const bytes = await readBodyBytes(request, config.bodyLimit);
      if (bytes.byteLength === 0) return null;
      throw new AppError("VALIDATION_FAILED", `request bodies are JSON: send Content-Type: application/json (got ${contentType || "none"})`);
    })
    // Hooks destructure what they use: passing the whole context on would make Elysia parse cookies, the
    // query and every header into objects for every route (see idempotency.ts).
    .onBeforeHandle(({ request, body, set, auth, acceptsIdempotencyKey }: any) => idempotency.before({ request, body, set, auth, acceptsIdempotencyKey }))
    // In a cluster the workflow gate (save, publish, restore, import) counts the pieces every executing instance
    // serves, from the registry as last read: a change of workflows reads it first (one query, never failing).
    .onBeforeHandle(async ({ request }: any) => {
      if (cluster && request.method !== "GET" && request.url.includes("/api/workflows")) await deps.fleet.refresh();
    })
    .onAfterHandle(async ({ request, set, responseValue, response }: any) => {
      await idempotency.after(request, typeof set.status === "number" ? set.status : 200, responseValue ?? response);
    })
    // Objects and arrays are serialised here so that a large one leaves in two sends, not ~19 (src/http/answer-body.ts).
    .mapResponse(({ responseValue, set }: any) => jsonAnswer(responseValue, set))
    .onError(({ code, error, set, request, path }) => {
      const answer = errorAnswer(code, error, String(set.headers["x-request-id"] ?? ""), request, path);
      set.status = answer.status;
      Object.assign(set.headers, answer.headers);
      return answer.body;
    })
    .use(serviceApi(deps))
    .use(uiApi(deps))
    .use(apiDocsApi(deps))
    .use(identityApi(deps))
    .use(membersApi(deps))
    .use(auditApi(deps))
    .use(ssoApi(deps))
    .use(secondFactorApi(deps))
    .use(settingsApi(deps))
    .use(fleetApi(deps))
    .use(backupsApi(deps))
    .use(gitApi(deps))
    .use(workflowsApi(deps))
    .use(lifecycleApi(deps))
    .use(foldersApi(deps))
    .use(templatesApi(deps))
    .use(editorApi(deps))
    .use(piecePackagesApi(deps))
    .use(piecesApi(deps))
    .use(connectionsApi(deps))
    .use(oauth2CallbackApi(deps))
    .use(runsApi(deps))
    .use(mcpApi(deps))
    .use(webhooksApi(deps));

  return { app, deps };
}

export type App = ReturnType<typeof createApp>["app"];
