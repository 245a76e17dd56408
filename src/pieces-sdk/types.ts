/**
 * The contract between pieces, the registry (the pieces served), the gate and the engine.
 * Pieces are authored with the builders in ./index.ts; everything here is plain data + functions.
 */

// ---------- properties (docs/pieces.md "Properties") ----------

export type PropertyKind = "string" | "number" | "integer" | "boolean" | "object" | "array" | "json" | "code";

export type DisplayOperator = "eq" | "neq" | "contains_any" | "exists" | "not_exists";

export interface DisplayCondition {
  field: string;
  operator: DisplayOperator;
  value?: unknown;
  values?: unknown[];
}

export interface DynamicOptionsContext {
  /** The step's current config as the editor holds it. */
  config: Record<string, unknown>;
  /** Resolved credentials of the step's connection, when it has one. */
  auth?: ResolvedAuth;
  fetch: GuardedFetch;
  signal: AbortSignal;
}

export interface DynamicOptions {
  options: Array<{ label: string; value: unknown }>;
  placeholder?: string;
  /**
   * For a property of fields that depend on other settings (an object whose shape the config decides):
   * those fields, for the config given. The property's value is an object keyed by them.
   */
  properties?: Record<string, PropertyDef>;
}

export interface PropertyDef {
  type: PropertyKind;
  displayName?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  enumLabels?: Record<string, string>;
  format?: string;
  properties?: Record<string, PropertyDef>;
  items?: PropertyDef;
  /** Editor hint: "short_text", "long_text", "dropdown", "static_dropdown", "checkbox", "json", "code", ... */
  propertyType?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  pattern?: string;
  /** Properties whose change invalidates the dynamic options; "auth" means the connection. */
  refreshers?: string[];
  /** For code properties: the language, e.g. "javascript". */
  language?: string;
  displayConditions?: DisplayCondition[];
  /** When present, legal values come from POST .../options/{propertyName}. */
  options?: (ctx: DynamicOptionsContext) => Promise<DynamicOptions> | DynamicOptions;
}

// ---------- auth ----------

export interface OAuth2AuthDef {
  kind: "oauth2";
  authorizeUrl: string;
  tokenUrl: string;
  scopes: string[];
  /** Extra authorize-URL parameters, e.g. { prompt: "consent" }. */
  extraAuthorizeParams?: Record<string, string>;
  /** The generic `oauth2` piece takes URLs and scope from the connection's config instead. */
  fromConnectionConfig?: boolean;
  /** Grant types the piece supports; default ["authorization_code"]. */
  grantTypes?: Array<"authorization_code" | "client_credentials">;
  /** Fields a connection's `config` holds for this piece (the generic piece: authUrl, tokenUrl, scope). */
  connectionConfig?: Record<string, PropertyDef>;
}
export interface ApiKeyAuthDef {
  kind: "api_key";
  header?: string;
  description?: string;
}
export interface BasicAuthDef {
  kind: "basic";
  description?: string;
}
export interface CustomAuthDef {
  kind: "custom";
  props: Record<string, PropertyDef>;
}
export type AuthDef = OAuth2AuthDef | ApiKeyAuthDef | BasicAuthDef | CustomAuthDef;

/** What a step receives from its connection at run time (secrets decrypted, tokens fresh). */
export type ResolvedAuth =
  | { kind: "oauth2"; accessToken: string; tokenType?: string; scope?: string; data?: Record<string, unknown> }
  | { kind: "api_key"; apiKey: string }
  | { kind: "basic"; username: string; password: string }
  | { kind: "custom"; values: Record<string, unknown> };

// ---------- run-time context ----------

/**
 * Outbound HTTP through the SSRF guard. `resolveHost` applies the same address policy to connections
 * that are not HTTP (MQTT, IMAP, SMTP, database drivers): it resolves a host name, refuses it when
 * any address is blocked, and returns the address to connect to. Pieces call it through the SDK's
 * `allowedAddress(ctx.fetch, host)`.
 */
export type GuardedFetch = ((url: string | URL, init?: RequestInit) => Promise<Response>) & {
  resolveHost?: (host: string) => Promise<string>;
};

/**
 * The workspace's key-value store (`ctx.store`), as Activepieces' `context.store`: every call answers a
 * promise (the database may be on another host). Values are JSON; a key is at most 256 characters, a value
 * at most 1 MiB as JSON.
 */
export interface KeyValueStore {
  /** The value at `key`, undefined when there is none. */
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  /** False when there was no value. */
  delete(key: string): Promise<boolean>;
  /** Appends to the list at key (creating it); returns the new list length. Concurrent appends lose no item. */
  append(key: string, value: unknown): Promise<number>;
}

export interface RunInfo {
  id: string;
  workflowId: string;
  workspaceId: string;
  environment: "production" | "test";
  stepName: string;
  /** Nesting depth of sub-flow calls; 0 for a top-level run. */
  depth: number;
  /**
   * The W3C `traceparent` this step's outgoing calls should carry (docs/operations.md, "Traces"): the step's
   * span when traces are on, else the context the run was started with; absent when there is neither.
   */
  traceparent?: string;
}

/** Returned by an action to pause the run; the engine frees the worker and resumes later. */
export interface PauseRequest {
  readonly __pause: true;
  mode: "time" | "webhook";
  resumeAt?: string;
  /** Data stored with the paused step and shown to the user (e.g. approval links). */
  data?: Record<string, unknown>;
}

export interface ActionContext<C = Record<string, unknown>> {
  /** The step's config with every `{{ }}` expression already evaluated. */
  config: C;
  auth?: ResolvedAuth;
  run: RunInfo;
  signal: AbortSignal;
  /** Outbound HTTP through the SSRF guard. Pieces must use this, never the global fetch. */
  fetch: GuardedFetch;
  store: KeyValueStore;
  log: (message: string, fields?: Record<string, unknown>) => void;
  /** Pause the run: `return ctx.pause({ mode: "time", resumeAt })`. */
  pause(request: Omit<PauseRequest, "__pause">): PauseRequest;
  /** Links that resume a run paused with mode "webhook" (approval): one per decision. */
  resumeUrls(decisions: string[]): Record<string, string>;
  /** When resuming a paused step: the payload it was resumed with; undefined on first execution. */
  resumePayload?: Record<string, unknown>;
  /** Attach tags to the run (Tags piece). */
  addTags(tags: string[]): void;
  /** Synchronous webhook reply (webhook.respond). */
  respond(reply: { status: number; headers?: Record<string, string>; body: unknown }): void;
  /** Start another workflow as a sub-flow (triggerType "subflow"); with wait, resolves with its return_response value. */
  callWorkflow(input: { workflowId: string; payload: Record<string, unknown>; wait: boolean }): Promise<{ runId: string; status: string; response?: unknown }>;
  /** Set the value a callable workflow returns to its caller (subflows.return_response). */
  returnResponse(value: unknown): void;
  /**
   * Say the step is waiting for something it does not control ("a sandbox"), so the run shows it
   * (`waiting` in run detail and its event stream); `null` when it goes on. Optional to call.
   */
  waiting(reason: string | null): void;
}

export interface RetryPolicy {
  /** Total attempts including the first; 1 means no retry. */
  maxAttempts: number;
  /** First backoff; doubled on each further attempt. */
  backoffMs: number;
}

export type SideEffects = "pure" | "read" | "write" | "external";

export interface ActionDef<C = any> {
  id: string;
  name: string;
  description: string;
  sideEffects: SideEffects;
  props: Record<string, PropertyDef>;
  outputSchema?: PropertyDef;
  sampleData?: unknown;
  retry?: RetryPolicy;
  /** Does this action need a connection (piece auth) to run? Default: true when the piece declares auth. */
  requiresAuth?: boolean;
  run(ctx: ActionContext<C>): Promise<unknown> | unknown;
}

// ---------- triggers ----------

export type TriggerKind = "webhook" | "cron" | "poll" | "error" | "run_finished" | "callable" | "subscription";

/**
 * What a long-lived subscription (type "subscription": MQTT, IMAP IDLE…) receives. Weft keeps one open per
 * published workflow, closes it on unpublish and shutdown, and opens it again with back-off when it fails.
 */
export interface SubscriptionContext {
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  fetch: GuardedFetch;
  workflowId: string;
  /**
   * Starts a run with `payload` as its trigger output; resolves once the run is stored durably (so a broker
   * may be acknowledged then), rejects when it could not be stored.
   */
  emit(payload: Record<string, unknown>): Promise<string>;
  /**
   * The payload of the newest run this trigger started (stored before this call), or null: a broker that
   * redelivers the message in flight when Weft stopped can tell whether its run already exists.
   */
  lastEvent(): Promise<Record<string, unknown> | null>;
  /**
   * The payloads of the newest `limit` runs this trigger started, newest first: a subscription that stores
   * several messages at once tells a redelivery of any of them from a new message.
   */
  recentEvents(limit: number): Promise<Record<string, unknown>[]>;
  /** The subscription broke (connection lost for good, auth refused): Weft closes it and opens it again later. */
  fail(error: Error): void;
  log: (message: string, fields?: Record<string, unknown>) => void;
}

export interface Subscription {
  close(): Promise<void> | void;
}

export interface TriggerLifecycleContext {
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  /** The public URL the provider should call. */
  webhookUrl: string;
  workflowId: string;
  fetch: GuardedFetch;
  /** The workspace's key-value store (as ctx.store of actions); keys are the piece's to choose. */
  store: KeyValueStore;
  /** Durable per-workflow state for the trigger (e.g. the provider's webhook id). */
  state: { get(): Record<string, unknown> | undefined; set(value: Record<string, unknown> | undefined): void };
}

export interface WebhookReceiveContext {
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  workflowId: string;
  /** The workflow's public URL (what onEnable registered). */
  webhookUrl: string;
  fetch: GuardedFetch;
  /** The workspace's key-value store (as ctx.store of actions). */
  store: KeyValueStore;
  /** The call: method, headers (lowercase names), query and the body parsed by its Content-Type. */
  request: { method: string; headers: Record<string, string>; query: Record<string, string | string[]>; body: unknown };
}

export interface WebhookReceived {
  /** Each item starts one run with the item as its `trigger.body`; none: the call starts nothing. */
  items: unknown[];
  /** The answer the provider expects; absent: Weft's usual answer (the run id, or the workflow's reply). */
  reply?: { status: number; headers?: Record<string, string>; body?: unknown };
}

export interface PollContext {
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  fetch: GuardedFetch;
  workflowId: string;
  /** The workspace's key-value store (as ctx.store of actions); keys are the piece's to choose. */
  store: KeyValueStore;
  /** Time of the previous successful poll (ISO), undefined on the first poll. */
  lastPollAt?: string;
}

export interface PollDedupe {
  /** "id": items with an id already seen are dropped; "time": items older than the last poll are dropped. */
  strategy: "id" | "time";
  /** For "id": the item's identity. For "time": the item's timestamp (ISO or epoch ms). */
  key(item: any, config: Record<string, unknown>): string | number;
}

export interface TriggerDef {
  id: string;
  name: string;
  description: string;
  type: TriggerKind;
  props: Record<string, PropertyDef>;
  /** The declared example payload (generic for configuration-dependent triggers). */
  sampleData?: unknown;
  /** Derived sample from a supplied config (Form, Schedule, Callable). */
  sample?(config: Record<string, unknown>): unknown;
  onEnable?(ctx: TriggerLifecycleContext): Promise<void> | void;
  onDisable?(ctx: TriggerLifecycleContext): Promise<void> | void;
  /** For type "poll": returns the current items; the engine dedupes them with `dedupe`. */
  poll?(ctx: PollContext): Promise<unknown[]>;
  dedupe?: PollDedupe;
  /** For types "error" and "run_finished": does this trigger's config accept the finished run (e.g. filtered by workflows/statuses)? Absent = accepts all. */
  matches?(config: Record<string, unknown>, event: { workflowId: string; status: string; [key: string]: unknown }): boolean;
  /** For hosted-form webhook triggers: the HTML page served on GET of the public URL; it posts to `submitUrl`. */
  page?(ctx: { config: Record<string, unknown>; submitUrl: string }): string;
  /**
   * For type "webhook": reads a call of the workflow's URL and says what it starts — one run per returned
   * item, the item being that run's `trigger.body` (as a poll's items are) — and, when the provider expects a particular answer
   * (a subscription handshake, a challenge), the reply. Absent: the call itself (method, headers, query,
   * body) is the one run's trigger output.
   */
  receive?(ctx: WebhookReceiveContext): Promise<WebhookReceived> | WebhookReceived;
  /**
   * For webhook registrations a provider lets expire: Weft calls `run` on this cron schedule while the
   * workflow is live (with the same context as onEnable, so `state` holds what onEnable stored).
   */
  renew?: { cron: string; run(ctx: TriggerLifecycleContext): Promise<void> | void };
  /** For type "subscription": open the long-lived subscription (resolves once it is established). */
  subscribe?(ctx: SubscriptionContext): Promise<Subscription>;
  /** Why this trigger cannot run here (it is listed so users see it): the publish gate refuses it with this reason. */
  unsupported?: string;
  /** For type "cron": the cron expression and timezone that the config describes. */
  schedule?(config: Record<string, unknown>): { cron: string; timezone?: string } | { everySeconds: number };
}

// ---------- pieces ----------

export interface PieceDef {
  id: string;
  name: string;
  /** Semver, e.g. "1.2.0". */
  version: string;
  description: string;
  /** Shown beside the piece in the step picker: an emoji, a data:image/svg+xml (or png) base64 URL, or an https image URL (a logo). */
  icon?: string;
  auth?: AuthDef;
  /** Optional connection check used by POST /api/connections/{id}/test. */
  checkConnection?(ctx: { auth: ResolvedAuth; fetch: GuardedFetch; signal: AbortSignal }): Promise<{ ok: boolean; message?: string }>;
  /**
   * Optional check of new credentials (api_key, basic, custom), run before a connection is stored: a
   * connection whose check fails is refused (400 with the message) and nothing is stored.
   */
  validateCredentials?(ctx: { auth: ResolvedAuth; signal: AbortSignal }): Promise<{ ok: boolean; message?: string }>;
  /**
   * The piece's code runs in a process of its own (an installed package's host process), not in the
   * engine: its steps run from the engine's thread and never wait for a worker thread.
   */
  ownProcess?: boolean;
  actions: Record<string, ActionDef>;
  triggers: Record<string, TriggerDef>;
}
