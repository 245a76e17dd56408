/**
 * What every route module (src/api/*) and the MCP server (src/mcp/*) is given: the services built by the
 * composition root (src/app.ts). It lives at the routes' level so that they never import the app that
 * imports them (docs/architecture.md). It serves no route, so it declares no scope: each route declares its
 * own with `permission`, which the security macro writes into the contract as `x-permission`.
 */
import type { Config } from "../config";
import type { Audit } from "../core/audit";
import type { ClusterChanges } from "../core/cluster-changes";
import type { Connections } from "../core/connections";
import type { SecretBox } from "../core/crypto";
import type { Identity } from "../core/identity";
import type { Members } from "../core/members";
import type { SingleSignOn } from "../core/sso";
import type { SecondFactor } from "../core/second-factor";
import type { GitSync } from "../core/git/sync";
import type { Metrics } from "../core/metrics";
import type { Backups } from "../core/backups";
import type { Tracing } from "../core/tracing";
import type { LogStream } from "../core/log-stream";
import type { Fleet } from "../core/fleet";
import type { NetworkSettings } from "../core/network";
import type { Runs } from "../core/runs/runs";
import type { Templates } from "../core/templates/templates";
import type { Triggers } from "../core/triggers/service";
import type { Folders } from "../core/workflows/folders";
import type { LifecycleHooks } from "../core/workflows/hooks";
import type { WorkflowFiles } from "../core/workflows/files";
import type { Transfer } from "../core/workflows/transfer";
import type { Workflows } from "../core/workflows/workflows";
import type { Engine } from "../engine/engine";
import type { Logger } from "../http/logger";
import type { PackagesService } from "../core/pieces/packages";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { GuardedFetch, ResolvedAuth } from "../pieces-sdk/types";
import type { Db } from "../store/db";
import type { Storage } from "../store/port";
import type { Liveness } from "../core/liveness";
import type { Security } from "./middleware/security";
import type { LoginGuard } from "./middleware/login-guard";

export interface AppDeps {
  config: Config;
  /** The store, for the areas not yet on the storage port. */
  db: Db;
  /** The storage port (src/store/port.ts): both databases behind one asynchronous surface. */
  storage: Storage;
  /**
   * The port of the vital signs (src/store/storage.ts, `vitalStorageOf`): on PostgreSQL connections of their own,
   * so the heartbeat, lease renewals and /healthz never queue behind busy requests for a pooled connection.
   */
  vitalStorage: Storage;
  /** /healthz's check: the process answers, and its database did within the last second (src/core/liveness.ts). */
  liveness: Liveness;
  log: Logger;
  identity: Identity;
  /** Members and invitations of a workspace (docs/teams.md). */
  members: Members;
  /** Single sign-on with OpenID Connect (docs/teams.md): providers, sign-ins, "SSO only", RP-initiated logout. */
  sso: SingleSignOn;
  /** A second factor for password logins (docs/teams.md, "Second factor"): TOTP, recovery codes, a workspace's requirement. */
  secondFactor: SecondFactor;
  security: Security;
  /** Password guessing, per account and per address, for every password check (docs/teams.md, "Login protection"): one per app. */
  loginGuard: LoginGuard;
  contract: { document(): unknown };
  /** The piece registry: every piece the workers load (built-ins + WEFT_PIECES_DIR). */
  pieces: PieceRegistry;
  /**
   * Outbound fetch through the SSRF guard (WEFT_ALLOW_CIDRS and Settings → Network), for every piece call made on this thread:
   * dynamic options, connection checks and token requests, polls, main-thread steps. Worker threads build
   * their own from the same allow-list. Nothing that runs piece code may use the global fetch.
   */
  guardedFetch: GuardedFetch;
  /** Resolves a workspace's connection to fresh credentials for piece code run by the API (set by connections). */
  resolveConnectionAuth?: (input: { workspaceId: string; connectionId: string; pieceId: string }) => Promise<ResolvedAuth>;
  /** Encryption at rest (AES-256-GCM) with the current key and any keys being rotated out; share it, do not build another. */
  secrets: SecretBox;
  /** Connections and OAuth2; `connections.resolveConnectionAuth` and `connections.choices` serve the engine and the gate. */
  connections: Connections;
  /** Workflows: drafts, the gate, publish/unpublish, versions, `definitionForRun` for the engine (set*Provider seams). */
  workflows: Workflows;
  folders: Folders;
  templates: Templates;
  workflowTransfer: Transfer;
  /** Workflows as files: export and import of a folder (docs/workflows-as-code.md). */
  workflowFiles: WorkflowFiles;
  /** Git sync of a workspace's workflows, and managed (git-only) workspaces (docs/workflows-as-code.md). */
  gitSync: GitSync;
  /** Publish/unpublish/rotate listeners (triggers): `deps.lifecycleHooks.push({ onPublish, onUnpublish })`. */
  lifecycleHooks: LifecycleHooks[];
  /** The execution engine: `engine.startRun`/`enqueue` start runs, `waitFor`/`waitForReply` wait; `serve` calls `engine.start()`. */
  engine: Engine;
  /** The Runs API's core (list, read, cancel, retry, run a workflow). */
  runs: Runs;
  /** Installed piece packages (Activepieces pieces from npm): list, add, upgrade, remove. */
  piecePackages: PackagesService;
  /** Settings → Network: the stored allowed ranges, put in force with WEFT_ALLOW_CIDRS on every thread and piece host. */
  network: NetworkSettings;
  /** In a cluster: changes of shared settings announced to and heard from the other instances; `serve` calls `start()`. */
  clusterChanges: ClusterChanges;
  /** The fleet registry: this process's row and heartbeat (`serve` calls `fleet.start()`), and every instance's. */
  fleet: Fleet;
  /** Webhook intake, scheduler, poller, provider registrations (src/core/triggers); `serve` calls `triggers.start()`. */
  triggers: Triggers;
  /** Backups the server writes on WEFT_BACKUP_SCHEDULE and for the owner (GET/POST /api/backups); `serve` calls `start()`. */
  backups: Backups;
  /** Prometheus metrics (GET /metrics): the engine and the scheduler report to it; webhook routes call `webhookAnswered`. */
  metrics: Metrics;
  /** OpenTelemetry traces of runs and steps (told by the engine); undefined unless an OTLP endpoint is set. */
  tracing: Tracing | undefined;
  /** Run and audit events to syslog and an HTTP endpoint; `emit` does nothing when neither is configured. */
  logStream: LogStream;
  /** The audit log (docs/teams.md, "Audit log"): routes record what they did through src/api/audit.ts. */
  audit: Audit;
}
