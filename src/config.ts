/**
 * Every environment variable Weft reads, parsed and typed in one place.
 * A bad value stops start-up with a message naming the variable and what it accepts.
 */
import { availableParallelism, cpus } from "node:os";
import { join, resolve } from "node:path";
import { Cron } from "croner";
import { AddressRanges } from "./net/address-ranges";
import { ClientAddresses } from "./net/client-address";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type Synchronous = "FULL" | "NORMAL";

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  publicUrl: string;
  encryptionKey: string | undefined;
  bootstrapToken: string | undefined;
  workers: number;
  logLevel: LogLevel;
  /** SQLite `synchronous`: FULL survives power loss; NORMAL only a process crash. */
  dbSynchronous: Synchronous;
  /** Largest accepted request body, bytes. */
  bodyLimit: number;
  /** Per-credential token bucket: sustained requests per second and burst size. 0 disables. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** Per-address flood ceiling applied before authentication, requests per second. 0 disables. */
  floodPerSecond: number;
  /** WEFT_LOGIN_ATTEMPTS: failed password checks an account may have before it waits (one more a minute); an address may have three times as many. */
  loginAttempts: number;
  piecesDir: string | undefined;
  /** The npm registry Activepieces packages are installed from (docs/activepieces.md); unset: Bun's default, the public registry. */
  npmRegistry: string | undefined;
  /** WEFT_CATALOG_TTL_SECONDS: how long a page of the registry's search is kept for the piece catalog (docs/activepieces.md). */
  catalogTtlSeconds: number;
  /** WEFT_HEARTBEAT_SECONDS: how often a server renews its row in the fleet registry (GET /api/fleet). */
  heartbeatSeconds: number;
  /**
   * WEFT_LEASE_SECONDS: how long an instance of a cluster may stay silent before the others take over its runs
   * and its polls (default three heartbeats); at least twice the heartbeat.
   */
  leaseSeconds: number;
  /**
   * WEFT_ROLE (or `weft serve --role`): `all` takes requests and executes runs; `api` takes requests and leaves
   * runs to the cluster's workers; `worker` executes runs and serves only /healthz, /readyz and /metrics. Not `all` needs PostgreSQL.
   */
  role: ServerRole;
  /** WEFT_PIECE_MEMORY_MB: a piece host process (one per installed package in use) using more is stopped. */
  pieceMemoryMb: number;
  /** WEFT_DATABASE_URL: a postgres:// URL stores everything in PostgreSQL; unset keeps SQLite in the data dir. */
  databaseUrl: string | undefined;
  runRetentionDays: number;
  runRetentionMax: number;
  /** WEFT_AUDIT_RETENTION_DAYS: audit events older are pruned at each retention sweep; 0 keeps them all (docs/teams.md). */
  auditRetentionDays: number;
  /** Seconds between retention sweeps. */
  runRetentionIntervalSeconds: number;
  /** A run's time limit when its settings.timeoutSeconds is unset, seconds. */
  runTimeoutSeconds: number;
  /** Largest step input/output stored on a step row, characters of JSON; larger ones keep a truncation marker. */
  stepOutputLimit: number;
  /** Per-run memory budget for step outputs and loop results, MB; exceeding it fails that run only. */
  runMemoryMb: number;
  /** Largest output one step may produce, MB of JSON; a larger one fails the step (and its run). */
  stepMaxOutputMb: number;
  /** Most items one LOOP_ON_ITEMS may iterate; a longer list fails the loop before it starts. */
  loopMaxItems: number;
  /** Most steps one run may execute (loop iterations count each step); the next one fails the run. */
  runMaxSteps: number;
  /** Where run and step rows are committed: auto (default: the main thread while it has time to spare, a dedicated writer thread under load), the thread, or the main thread (least CPU in total). */
  runWriter: "auto" | "thread" | "inline";
  /** WEFT_DATABASE_POOL: connections the run writer may commit on at once (PostgreSQL; more open only while writes wait for one). */
  databasePool: number;
  /** WEFT_READER_THREADS: threads that read run lists and run details off the serving thread (store/run-reads.ts); 0 reads on it. */
  readerThreads: number;
  oauthAppsFile: string | undefined;
  /**
   * WEFT_OIDC_PROVIDERS: single sign-on providers for headless installs (docs/teams.md, "Single sign-on"), a JSON
   * array of { name, issuer, clientId, clientSecret?, scopes?, roleClaim?, roleMapping?, defaultRole?, ssoOnly? }.
   */
  oidcProviders: OidcProviderSetting[];
  /**
   * Backups the server writes itself (docs/operations.md, "Scheduled backups"): WEFT_BACKUP_SCHEDULE (a cron
   * pattern; unset, none), the newest WEFT_BACKUP_KEEP kept, in WEFT_BACKUP_DIR (default <data dir>/backups).
   */
  backups: { schedule: string | undefined; keep: number; dir: string };
  /** WEFT_SMTP_URL: where invitation e-mails are sent (smtp:// or smtps://, credentials in the URL); unset: none are sent, the link is only shown. */
  smtpUrl: string | undefined;
  /** WEFT_SMTP_FROM: the From of those e-mails. */
  smtpFrom: string;
  /** How long an OAuth2 authorize URL (its signed state) stays valid, seconds. */
  oauthStateTtlSeconds: number;
  /** CIDRs outbound HTTP may reach although private (SSRF allow-list). */
  allowedCidrs: string[];
  /** WEFT_TRUSTED_PROXIES: reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed; none by default. */
  trustedProxies: string[];
  /** Directories the `sql` piece may open SQLite files in (none: SQLite connections are refused). */
  sqliteDirs: string[];
  /** Limits of the `code` piece's sandbox (docs/security.md). */
  sandbox: SandboxConfig;
  /** Webhooks, schedules and polling (docs/triggers.md). */
  triggers: TriggersConfig;
  /** GET /metrics (docs/operations.md, "Metrics"). */
  metrics: MetricsConfig;
  /** OpenTelemetry traces (docs/operations.md, "Traces"): off unless an OTLP endpoint is set. */
  traces: TracesConfig;
  /** Run and audit events sent to syslog and to an HTTP endpoint (docs/operations.md, "Log streaming"). */
  logStream: LogStreamConfig;
}

export interface TracesConfig {
  /**
   * Where spans are POSTed (OTLP/HTTP, JSON): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
   * OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`; undefined (the default) turns tracing off. OTEL_SDK_DISABLED=true
   * or OTEL_TRACES_EXPORTER=none turn it off too. OTEL_EXPORTER_OTLP_HEADERS and the other OTEL_* variables
   * are read by the SDK itself.
   */
  endpoint: string | undefined;
  /** OTEL_SERVICE_NAME: the `service.name` of every span; default `weft`. */
  serviceName: string;
}

export interface LogStreamConfig {
  /** WEFT_LOG_SYSLOG: `udp://host:port`, `tcp://host:port` or `tls://host:port` (RFC 5424; TCP and TLS octet-counted); unset: off. */
  syslog: { protocol: "udp" | "tcp" | "tls"; host: string; port: number } | undefined;
  /** WEFT_LOG_SYSLOG_FACILITY: the syslog facility, 0–23 or a name (`local0`, the default, … `local7`, `user`, `daemon`, `auth`). */
  syslogFacility: number;
  /** WEFT_LOG_SYSLOG_CA: a PEM file of the CA that signed the TLS syslog server's certificate; unset: the system's CAs. */
  syslogCaFile: string | undefined;
  /** WEFT_LOG_HTTP_URL: events are POSTed here as JSON arrays, in batches; unset: off. */
  httpUrl: string | undefined;
  /** WEFT_LOG_HTTP_HEADERS: extra request headers, `name=value` pairs separated by commas (e.g. an Authorization). */
  httpHeaders: Record<string, string>;
  /** WEFT_LOG_HTTP_BATCH: most events in one POST (default 100). */
  httpBatch: number;
  /** WEFT_LOG_QUEUE: events a destination holds while it is slow or down (default 10,000); past it the newest are dropped and counted. */
  queue: number;
}

export interface MetricsConfig {
  /** WEFT_METRICS_ALLOW_CIDRS: addresses that may read /metrics without a token; none by default. */
  allowCidrs: string[];
  /** WEFT_METRICS_WORKFLOW_LABELS: how many workflows get a `workflow` label of their own on the run counters; 0 (default): none. */
  workflowLabels: number;
}

export interface TriggersConfig {
  /** Longest wait for a synchronous webhook reply (webhook.respond) before 504, ms. */
  webhookReplyTimeoutMs: number;
  /** Shortest gap a schedule may fire at, seconds. */
  scheduleMinIntervalSeconds: number;
  /** Poll interval when the trigger's config sets none (`poll_interval_seconds`), and its minimum, seconds. */
  pollIntervalSeconds: number;
  pollMinIntervalSeconds: number;
}

export interface SandboxConfig {
  timeoutMs: number;
  memoryBytes: number;
  isolation: "process" | "inline";
  processes: number;
  /** Calls that may wait for a free sandbox process before new ones are refused. */
  queue: number;
  /** Largest result of a call, characters of JSON (the step output limit). */
  maxOutputBytes: number;
}

export class ConfigError extends Error {}

export interface OidcProviderSetting {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scopes?: string;
  roleClaim?: string;
  roleMapping?: { value: string; role: "admin" | "editor" | "operator" | "viewer"; workspaceId?: string }[];
  defaultRole?: string;
  ssoOnly?: boolean;
}

function oidcProviders(env: Env): OidcProviderSetting[] {
  const raw = env.WEFT_OIDC_PROVIDERS;
  if (raw === undefined || raw.trim() === "") return [];
  const example = 'e.g. [{"name":"Authelia","issuer":"https://auth.example.com","clientId":"weft","clientSecret":"…"}]';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(`WEFT_OIDC_PROVIDERS is not JSON (${(error as Error).message}); use ${example}`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(`WEFT_OIDC_PROVIDERS is not a JSON array; use ${example}`);
  return parsed.map((entry, i) => {
    for (const key of ["name", "issuer", "clientId"]) {
      if (typeof entry?.[key] !== "string" || entry[key] === "")
        throw new ConfigError(`WEFT_OIDC_PROVIDERS[${i}] lacks "${key}" (a string); each entry needs name, issuer and clientId: ${example}`);
    }
    return entry as OidcProviderSetting;
  });
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name}="${raw}" is not a whole number; use an integer from ${min} to ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name}=${value} is out of range; use an integer from ${min} to ${max}`);
  return value;
}

function leaseSeconds(env: Env): number {
  const heartbeat = integer(env, "WEFT_HEARTBEAT_SECONDS", 10, 1, 3600);
  const lease = integer(env, "WEFT_LEASE_SECONDS", 3 * heartbeat, 1, 86_400);
  if (lease < 2 * heartbeat) {
    throw new ConfigError(
      `WEFT_LEASE_SECONDS=${lease} is shorter than two heartbeats (WEFT_HEARTBEAT_SECONDS=${heartbeat}): an instance that is alive would lose its runs; use at least ${2 * heartbeat}`,
    );
  }
  return lease;
}

export const SERVER_ROLES = ["all", "api", "worker"] as const;
export type ServerRole = (typeof SERVER_ROLES)[number];

function serverRole(env: Env): ServerRole {
  const role = oneOf(env, "WEFT_ROLE", "all", SERVER_ROLES);
  if (role !== "all" && !databaseUrl(env)) {
    throw new ConfigError(
      `WEFT_ROLE=${role} needs a cluster on PostgreSQL (WEFT_DATABASE_URL): on SQLite one process takes the requests and executes the runs; use all`,
    );
  }
  return role;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = raw.trim() as T;
  const match = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!match) throw new ConfigError(`${name}="${raw}" is not allowed; use one of: ${allowed.join(", ")}`);
  return match;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
  } catch {
    throw new ConfigError(`${name}="${raw}" is not an http(s) URL; use e.g. https://weft.example.com`);
  }
  return raw.replace(/\/+$/, "");
}

/** The scheme of a URL ("smtp:"), or undefined when `raw` is no URL. */
function protocolOf(raw: string): string | undefined {
  try {
    return new URL(raw).protocol;
  } catch {
    return undefined;
  }
}

/** An optional URL setting whose scheme must be one of `protocols`; `refusal` says what is wrong with `raw` otherwise. */
function schemeUrl(env: Env, name: string, protocols: string[], refusal: (raw: string) => string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const protocol = protocolOf(raw);
  if (protocol === undefined || !protocols.includes(protocol)) throw new ConfigError(refusal(raw));
  return raw;
}

function smtpUrl(env: Env): string | undefined {
  return schemeUrl(
    env,
    "WEFT_SMTP_URL",
    ["smtp:", "smtps:"],
    () => "WEFT_SMTP_URL is not an smtp:// or smtps:// URL; use e.g. smtps://user:password@mail.example.com:465",
  );
}

function databaseUrl(env: Env): string | undefined {
  // The URL may hold a password: name only what is wrong with it.
  return schemeUrl(
    env,
    "WEFT_DATABASE_URL",
    ["postgres:", "postgresql:"],
    (raw) =>
      `WEFT_DATABASE_URL is not a postgres:// URL (it starts "${raw.slice(0, raw.indexOf(":") + 1 || 10)}"); use postgres://user:password@host:5432/database, or unset it to keep SQLite in the data directory`,
  );
}

/** WEFT_SQLITE_DIRS: comma-separated absolute directories (also read by the sql piece where it runs). */
export function sqliteDirsFrom(env: Env = process.env): string[] {
  return (env.WEFT_SQLITE_DIRS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((dir) => resolve(dir));
}

/**
 * Sandbox processes per calling thread when WEFT_SANDBOX_PROCESSES is unset: two per core, at least 4, at
 * most 16. More than one per core keeps a quick call from queueing behind slow ones (a time limit counts CPU
 * time, so sharing a core costs a call nothing but latency); 16 bounds the memory a burst can take (~55 MiB
 * a process). Extra processes start only while calls are slow and leave after an idle while.
 */
export function defaultSandboxProcesses(cores = availableParallelism()): number {
  return Math.min(16, Math.max(4, 2 * cores));
}

/** The sandbox's part of the config; also read on its own by Worker threads (src/sandbox/limits.ts). */
export function loadSandboxConfig(env: Env = process.env): SandboxConfig {
  return {
    timeoutMs: integer(env, "WEFT_SANDBOX_TIMEOUT_MS", 5_000, 10, 600_000),
    memoryBytes: integer(env, "WEFT_SANDBOX_MEMORY_MB", 64, 8, 4_000) * 1024 * 1024,
    isolation: oneOf(env, "WEFT_SANDBOX_ISOLATION", "inline", ["inline", "process"] as const),
    processes: integer(env, "WEFT_SANDBOX_PROCESSES", defaultSandboxProcesses(), 1, 64),
    queue: integer(env, "WEFT_SANDBOX_QUEUE", 1_000, 1, 1_000_000),
    maxOutputBytes: integer(env, "WEFT_STEP_MAX_OUTPUT_MB", 10, 1, 4_096) * 1024 * 1024,
  };
}

/** The comma-separated entries of the variable `name`, checked now by `check` (it throws) so a typo stops the start. */
function checkedList(env: Env, name: string, check: (entries: string[]) => unknown): string[] {
  const entries = (env[name] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    check(entries);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
  return entries;
}

/** WEFT_METRICS_ALLOW_CIDRS: comma-separated CIDR ranges, each checked now so a typo stops the start. */
const metricsAllowCidrs = (env: Env) => checkedList(env, "WEFT_METRICS_ALLOW_CIDRS", (cidrs) => new AddressRanges(cidrs));

/** WEFT_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges, each checked now so a typo stops the start. */
const trustedProxies = (env: Env) => checkedList(env, "WEFT_TRUSTED_PROXIES", (entries) => new ClientAddresses(entries));

/** WEFT_BACKUP_SCHEDULE: a cron pattern of 5 or 6 fields, read by croner (the schedule trigger's parser). */
function backupSchedule(env: Env): string | undefined {
  const pattern = env.WEFT_BACKUP_SCHEDULE?.trim();
  if (!pattern) return undefined;
  try {
    new Cron(pattern, { paused: true, mode: "5-or-6-parts" }).stop();
  } catch (error) {
    throw new ConfigError(
      `WEFT_BACKUP_SCHEDULE="${pattern}" is not a cron pattern (${(error as Error).message.replace(/^CronPattern:\s*/, "")}); use 5 or 6 fields, e.g. "0 3 * * *" for 03:00 every day`,
    );
  }
  return pattern;
}

/** The OTLP/HTTP traces URL the standard variables name (docs/operations.md, "Traces"), or undefined: tracing is off. */
function tracesEndpoint(env: Env): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return undefined;
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const name = own ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const raw = own || base;
  if (!raw) return undefined;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
  } catch {
    throw new ConfigError(`${name}="${raw}" is not an http(s) URL; use e.g. http://otel-collector:4318`);
  }
  return own ? own : `${base!.replace(/\/+$/, "")}/v1/traces`;
}

/** WEFT_LOG_SYSLOG: where run and audit events go as syslog messages. */
function syslogTarget(env: Env): LogStreamConfig["syslog"] {
  const raw = env.WEFT_LOG_SYSLOG?.trim();
  if (!raw) return undefined;
  const match = /^(udp|tcp|tls):\/\/(\[[0-9a-fA-F:.]+\]|[^:/[\]]+):(\d{1,5})\/?$/.exec(raw);
  const port = match ? Number(match[3]) : 0;
  if (!match || port < 1 || port > 65535) {
    throw new ConfigError(`WEFT_LOG_SYSLOG="${raw}" is not a syslog address; use udp://host:514, tcp://host:514 or tls://host:6514`);
  }
  return { protocol: match[1] as "udp" | "tcp" | "tls", host: match[2]!.replace(/^\[|\]$/g, ""), port };
}

/** RFC 5424's facility numbers of the names an operator is likely to pick. */
const FACILITIES: Record<string, number> = { kern: 0, user: 1, daemon: 3, auth: 4, syslog: 5, authpriv: 10 };
for (let i = 0; i < 8; i++) FACILITIES[`local${i}`] = 16 + i;

function syslogFacility(env: Env): number {
  const raw = env.WEFT_LOG_SYSLOG_FACILITY?.trim().toLowerCase();
  if (!raw) return FACILITIES.local0!;
  if (/^\d+$/.test(raw) && Number(raw) <= 23) return Number(raw);
  const named = FACILITIES[raw];
  if (named === undefined)
    throw new ConfigError(`WEFT_LOG_SYSLOG_FACILITY="${raw}" is not a facility; use 0–23 or one of ${Object.keys(FACILITIES).join(", ")}`);
  return named;
}

/** `name=value,name=value` (the form of OTEL_EXPORTER_OTLP_HEADERS); values may be percent-encoded. */
function headerPairs(env: Env, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (env[name] ?? "").split(",")) {
    if (!pair.trim()) continue;
    const at = pair.indexOf("=");
    const key = at > 0 ? pair.slice(0, at).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) throw new ConfigError(`${name}: "${pair.trim()}" is not name=value; use e.g. authorization=Bearer%20abc`);
    headers[key.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, "WEFT_PORT", 8080, 0, 65535);
  const encryptionKey = env.WEFT_ENCRYPTION_KEY || undefined;
  if (encryptionKey !== undefined && encryptionKey.length < 32) {
    throw new ConfigError("WEFT_ENCRYPTION_KEY is too short; use at least 32 characters (e.g. `openssl rand -base64 32`)");
  }
  const bootstrapToken = env.WEFT_BOOTSTRAP_TOKEN || undefined;
  if (bootstrapToken !== undefined && bootstrapToken.length < 16) {
    throw new ConfigError("WEFT_BOOTSTRAP_TOKEN is too short; use at least 16 characters");
  }
  const cidrs = (env.WEFT_ALLOW_CIDRS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const cidr of cidrs) {
    if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(cidr)) throw new ConfigError(`WEFT_ALLOW_CIDRS entry "${cidr}" is not a CIDR; use e.g. 127.0.0.0/8,10.0.0.0/8`);
  }
  return {
    host: env.WEFT_HOST || "127.0.0.1",
    port,
    dataDir: resolve(env.WEFT_DATA_DIR || "./weft-data"),
    publicUrl: url(env, "WEFT_PUBLIC_URL", `http://localhost:${port}`),
    encryptionKey,
    bootstrapToken,
    workers: integer(env, "WEFT_WORKERS", Math.max(1, cpus().length), 1, 256),
    logLevel: oneOf(env, "WEFT_LOG_LEVEL", "info", ["debug", "info", "warn", "error", "silent"] as const),
    dbSynchronous: oneOf(env, "WEFT_DB_SYNCHRONOUS", "FULL", ["FULL", "NORMAL"] as const),
    bodyLimit: integer(env, "WEFT_BODY_LIMIT", 2 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    rateLimitPerSecond: integer(env, "WEFT_RATE_LIMIT", 50, 0, 1_000_000),
    rateLimitBurst: integer(env, "WEFT_RATE_BURST", 200, 1, 10_000_000),
    floodPerSecond: integer(env, "WEFT_FLOOD_LIMIT", 500, 0, 10_000_000),
    loginAttempts: integer(env, "WEFT_LOGIN_ATTEMPTS", 10, 1, 1_000),
    piecesDir: env.WEFT_PIECES_DIR ? resolve(env.WEFT_PIECES_DIR) : undefined,
    npmRegistry: env.WEFT_NPM_REGISTRY ? env.WEFT_NPM_REGISTRY.replace(/\/+$/, "") : undefined,
    catalogTtlSeconds: integer(env, "WEFT_CATALOG_TTL_SECONDS", 900, 1, 86_400),
    pieceMemoryMb: integer(env, "WEFT_PIECE_MEMORY_MB", 1024, 64, 1024 * 1024),
    heartbeatSeconds: integer(env, "WEFT_HEARTBEAT_SECONDS", 10, 1, 3600),
    leaseSeconds: leaseSeconds(env),
    role: serverRole(env),
    databaseUrl: databaseUrl(env),
    runRetentionDays: integer(env, "WEFT_RUN_RETENTION_DAYS", 30, 0, 36500),
    runRetentionMax: integer(env, "WEFT_RUN_RETENTION_MAX", 100_000, 0, 1_000_000_000),
    auditRetentionDays: integer(env, "WEFT_AUDIT_RETENTION_DAYS", 365, 0, 36500),
    runRetentionIntervalSeconds: integer(env, "WEFT_RUN_RETENTION_INTERVAL", 600, 1, 86_400),
    runTimeoutSeconds: integer(env, "WEFT_RUN_TIMEOUT_SECONDS", 3600, 1, 86_400 * 7),
    stepOutputLimit: integer(env, "WEFT_STEP_OUTPUT_LIMIT", 256 * 1024, 1024, 64 * 1024 * 1024),
    runMemoryMb: integer(env, "WEFT_RUN_MEMORY_MB", 64, 1, 16_384),
    stepMaxOutputMb: integer(env, "WEFT_STEP_MAX_OUTPUT_MB", 10, 1, 4_096),
    loopMaxItems: integer(env, "WEFT_LOOP_MAX_ITEMS", 100_000, 1, 100_000_000),
    runMaxSteps: integer(env, "WEFT_RUN_MAX_STEPS", 250_000, 1, 1_000_000_000),
    runWriter: oneOf(env, "WEFT_RUN_WRITER", "auto", ["auto", "thread", "inline"] as const),
    readerThreads: integer(env, "WEFT_READER_THREADS", 2, 0, 64),
    databasePool: integer(env, "WEFT_DATABASE_POOL", 8, 1, 1_000),
    oauthAppsFile: env.WEFT_OAUTH_APPS || undefined,
    oidcProviders: oidcProviders(env),
    backups: {
      schedule: backupSchedule(env),
      keep: integer(env, "WEFT_BACKUP_KEEP", 7, 1, 10_000),
      dir: resolve(env.WEFT_BACKUP_DIR || join(resolve(env.WEFT_DATA_DIR || "./weft-data"), "backups")),
    },
    smtpUrl: smtpUrl(env),
    smtpFrom: env.WEFT_SMTP_FROM || "Weft <weft@localhost>",
    oauthStateTtlSeconds: integer(env, "WEFT_OAUTH_STATE_TTL_SECONDS", 600, 1, 86_400),
    allowedCidrs: cidrs,
    trustedProxies: trustedProxies(env),
    sqliteDirs: sqliteDirsFrom(env),
    sandbox: loadSandboxConfig(env),
    triggers: {
      webhookReplyTimeoutMs: integer(env, "WEFT_WEBHOOK_REPLY_TIMEOUT", 30, 1, 3600) * 1000,
      scheduleMinIntervalSeconds: integer(env, "WEFT_SCHEDULE_MIN_INTERVAL", 60, 1, 86_400),
      pollIntervalSeconds: integer(env, "WEFT_POLL_INTERVAL", 300, 1, 86_400),
      pollMinIntervalSeconds: integer(env, "WEFT_POLL_MIN_INTERVAL", 60, 1, 86_400),
    },
    metrics: {
      allowCidrs: metricsAllowCidrs(env),
      workflowLabels: integer(env, "WEFT_METRICS_WORKFLOW_LABELS", 0, 0, 10_000),
    },
    traces: { endpoint: tracesEndpoint(env), serviceName: env.OTEL_SERVICE_NAME?.trim() || "weft" },
    logStream: {
      syslog: syslogTarget(env),
      syslogFacility: syslogFacility(env),
      syslogCaFile: env.WEFT_LOG_SYSLOG_CA ? resolve(env.WEFT_LOG_SYSLOG_CA) : undefined,
      httpUrl: env.WEFT_LOG_HTTP_URL ? url(env, "WEFT_LOG_HTTP_URL", "") : undefined,
      httpHeaders: headerPairs(env, "WEFT_LOG_HTTP_HEADERS"),
      httpBatch: integer(env, "WEFT_LOG_HTTP_BATCH", 100, 1, 10_000),
      queue: integer(env, "WEFT_LOG_QUEUE", 10_000, 1, 10_000_000),
    },
  };
}
