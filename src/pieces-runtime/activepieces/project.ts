/**
 * An Activepieces piece (its plain description, ./protocol.ts) as a Weft piece (src/pieces-sdk): the
 * properties mapped onto Weft's property kinds, the auth onto a connection type, each action's `run` and
 * each dynamic dropdown's `options` sent to the package's host process. Ids: the piece is `ap-<name>` for
 * `@activepieces/piece-<name>` (`ap-<scope>-<name>` for another scope's `piece-<name>`); step ids are the
 * piece's own names in snake_case.
 */
import { definePiece } from "../../pieces-sdk";
import type {
  ActionContext,
  ActionDef,
  AuthDef,
  DynamicOptionsContext,
  KeyValueStore,
  PieceDef,
  PropertyDef,
  ResolvedAuth,
  TriggerDef,
} from "../../pieces-sdk/types";
import type { HostAnswer, PieceHostProcess, StoreHandler } from "./host-process";
import type { ApPieceDescription, ApProp, ApStepDescription } from "./protocol";

/** How long a dropdown's options may take. */
const OPTIONS_TIMEOUT_MS = 30_000;
/** How long a trigger hook (a poll, onEnable) may take. */
const POLL_TIMEOUT_MS = 60_000;

export interface ProjectionLinks {
  /** The host process of this package version (started on first call). */
  host(): PieceHostProcess;
  publicUrl: string;
}

/** `@activepieces/piece-slack` → `ap-slack`; `@acme/piece-crm` → `ap-acme-crm`. */
export function pieceIdFor(packageName: string): string {
  const match = /^(?:@([^/]+)\/)?(?:piece-)?(.+)$/.exec(packageName);
  const scope = match?.[1] && match[1] !== "activepieces" ? `${match[1]}-` : "";
  const name = `${scope}${match?.[2] ?? packageName}`
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `ap-${name}`.slice(0, 64);
}

/** The Weft id of a package's action or trigger named `name` (as projected when it is alone of its name). */
export function actionIdFor(name: string): string {
  return stepIdFor(name, new Set());
}

/** A step name as a Weft step id: lowercase snake_case starting with a letter. */
function stepIdFor(name: string, taken: Set<string>): string {
  let id = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (!/^[a-z]/.test(id)) id = `a_${id}`;
  id = id.slice(0, 60);
  let unique = id;
  for (let n = 2; taken.has(unique); n++) unique = `${id}_${n}`;
  taken.add(unique);
  return unique;
}

/** Property types that projectProp maps; anything else is projected as "unsupported" (usable only when optional). */
export const MAPPED_PROP_TYPES = new Set([
  ...["SHORT_TEXT", "LONG_TEXT", "SECRET_TEXT", "MARKDOWN", "NUMBER", "CHECKBOX", "DATE_TIME", "COLOR", "JSON", "OBJECT", "FILE", "ARRAY"],
  ...["STATIC_DROPDOWN", "STATIC_MULTI_SELECT_DROPDOWN", "DROPDOWN", "MULTI_SELECT_DROPDOWN", "DYNAMIC"],
]);

export function projectProp(prop: ApProp): PropertyDef {
  const base: PropertyDef = { type: "string", displayName: prop.displayName, description: prop.description, required: prop.required === true };
  if (prop.defaultValue !== undefined) base.default = prop.defaultValue;
  switch (prop.type) {
    case "SHORT_TEXT":
      return { ...base, propertyType: "short_text" };
    case "LONG_TEXT":
      return { ...base, propertyType: "long_text" };
    case "SECRET_TEXT":
      return { ...base, propertyType: "short_text", format: "password" };
    case "MARKDOWN":
      return { type: "string", displayName: prop.displayName ?? "Note", description: prop.description, propertyType: "markdown", required: false };
    case "NUMBER":
      return { ...base, type: "number", propertyType: "number" };
    case "CHECKBOX":
      return { ...base, type: "boolean", propertyType: "checkbox" };
    case "DATE_TIME":
      return { ...base, format: "date-time", propertyType: "date_time" };
    case "COLOR":
      return { ...base, propertyType: "short_text" };
    case "JSON":
      return { ...base, type: "json", propertyType: "json" };
    case "OBJECT":
      return { ...base, type: "object", propertyType: "object" };
    case "FILE":
      return {
        ...base,
        propertyType: "file",
        description: [prop.description, "A file: a data: URL, an http(s) URL or { base64, filename }."].filter(Boolean).join(" "),
      };
    case "ARRAY": {
      const items: PropertyDef = prop.properties
        ? { type: "object", properties: Object.fromEntries(Object.entries(prop.properties).map(([key, inner]) => [key, projectProp(inner)])) }
        : { type: "string" };
      return { ...base, type: "array", items, propertyType: "array" };
    }
    case "STATIC_DROPDOWN":
      return { ...base, ...staticOptions(prop), propertyType: "static_dropdown" };
    case "STATIC_MULTI_SELECT_DROPDOWN":
      return { ...base, type: "array", items: { type: "string", ...staticOptions(prop) }, propertyType: "static_multi_select_dropdown" };
    case "DROPDOWN":
      return { ...base, type: "json", propertyType: "dropdown" };
    case "MULTI_SELECT_DROPDOWN":
      return { ...base, type: "array", items: { type: "json" }, propertyType: "multi_select_dropdown" };
    case "DYNAMIC":
      return {
        ...base,
        type: "object",
        propertyType: "dynamic",
        description: [prop.description, "Fields that depend on other settings (listed by POST …/options/{property}); its value is an object keyed by them."]
          .filter(Boolean)
          .join(" "),
      };
    default:
      return {
        type: "json",
        displayName: prop.displayName,
        description: `Activepieces property type ${prop.type} is not supported by Weft${prop.required ? "; this step cannot be configured" : "; leave it empty"}`,
        propertyType: "unsupported",
        required: prop.required === true,
      };
  }
}

function staticOptions(prop: ApProp): Pick<PropertyDef, "enum" | "enumLabels"> {
  const options = prop.options?.options ?? [];
  const enumLabels: Record<string, string> = {};
  for (const option of options) enumLabels[String(option.value)] = option.label;
  return { enum: options.map((option) => option.value), enumLabels };
}

/** The piece's auth as a Weft connection type. */
export function projectAuth(auth: ApProp | undefined): AuthDef | undefined {
  switch (auth?.type) {
    case "SECRET_TEXT":
      return { kind: "api_key", description: auth.description ?? auth.displayName };
    case "BASIC_AUTH":
      return { kind: "basic", description: auth.description ?? auth.displayName };
    case "CUSTOM_AUTH":
      return { kind: "custom", props: Object.fromEntries(Object.entries(auth.props ?? {}).map(([key, prop]) => [key, projectProp(prop)])) };
    case "OAUTH2":
      return {
        kind: "oauth2",
        authorizeUrl: auth.authUrl ?? "",
        tokenUrl: auth.tokenUrl ?? "",
        scopes: auth.scope ?? [],
        extraAuthorizeParams: auth.extra,
      };
    default:
      return undefined;
  }
}

/**
 * The step's connection as the piece reads `context.auth`: typed values ({ type, props }, { type, secret_text })
 * for pieces on a versioned context, the plain value (the secret, the custom fields) for older ones and for
 * the auth's validate().
 */
export function authValueFor(description: ApPieceDescription, auth: ResolvedAuth | undefined, use: "run" | "validate" = "run"): unknown {
  if (!auth) return undefined;
  // An auth's own validate() always gets the plain value, whatever the context version.
  const typed = description.contextVersion !== undefined && use === "run";
  switch (auth.kind) {
    case "api_key":
      return typed ? { type: "SECRET_TEXT", secret_text: auth.apiKey } : auth.apiKey;
    case "basic":
      return typed ? { type: "BASIC_AUTH", username: auth.username, password: auth.password } : { username: auth.username, password: auth.password };
    case "custom":
      return typed ? { type: "CUSTOM_AUTH", props: auth.values } : auth.values;
    case "oauth2": {
      const value = { access_token: auth.accessToken, token_type: auth.tokenType ?? "Bearer", scope: auth.scope, data: auth.data ?? {}, props: {} };
      return typed ? { type: "OAUTH2", ...value } : value;
    }
  }
}

function applyEffects(ctx: ActionContext, answer: HostAnswer): unknown {
  const { effects } = answer;
  if (effects.tags.length > 0) ctx.addTags(effects.tags);
  if (effects.response) ctx.respond({ status: effects.response.status ?? 200, headers: effects.response.headers, body: effects.response.body ?? null });
  if (effects.pause) {
    // What the action returned before pausing (e.g. the link it sent someone) stays visible on the paused step.
    const data = { output: answer.value ?? null };
    if (effects.pause.type === "DELAY") return ctx.pause({ mode: "time", resumeAt: effects.pause.resumeAt, data });
    return ctx.pause({ mode: "webhook", data: { ...data, resumeUrl: ctx.resumeUrls(["resume"]).resume } });
  }
  return answer.value;
}

/** A step's properties, its dynamic dropdowns answered by the host. */
function projectProps(
  description: ApPieceDescription,
  step: ApStepDescription,
  links: ProjectionLinks,
  kind: "action" | "trigger",
): Record<string, PropertyDef> {
  const props: Record<string, PropertyDef> = {};
  for (const [key, prop] of Object.entries(step.props)) {
    const projected = projectProp(prop);
    if (prop.dynamic && (prop.type === "DROPDOWN" || prop.type === "MULTI_SELECT_DROPDOWN" || prop.type === "DYNAMIC")) {
      projected.refreshers = (prop.refreshers ?? []).concat(description.auth ? ["auth"] : []);
      projected.options = (ctx: DynamicOptionsContext) => dropdownOptions(description, { kind, name: step.name }, key, ctx, links);
    }
    props[key] = projected;
  }
  return props;
}

function projectAction(description: ApPieceDescription, id: string, step: ApStepDescription, links: ProjectionLinks): ActionDef {
  const props = projectProps(description, step, links, "action");
  return {
    id,
    name: step.displayName,
    description: step.description,
    // Third-party code: never assumed safe to repeat.
    sideEffects: "external",
    props,
    sampleData: step.sampleData,
    requiresAuth: description.auth !== undefined && step.requireAuth,
    async run(ctx) {
      const resuming = ctx.resumePayload !== undefined;
      const payload = ctx.resumePayload ?? {};
      const queryParams = Object.fromEntries(Object.entries(payload).filter(([, value]) => typeof value === "string"));
      const answer = await links.host().request(
        {
          t: "action",
          action: step.name,
          props: ctx.config as Record<string, unknown>,
          auth: authValueFor(description, ctx.auth),
          run: {
            runId: ctx.run.id,
            workflowId: ctx.run.workflowId,
            stepName: ctx.run.stepName,
            executionType: resuming ? "RESUME" : "BEGIN",
            resumePayload: resuming ? { body: payload, headers: {}, queryParams } : undefined,
            resumeUrl: ctx.resumeUrls(["resume"]).resume,
            publicUrl: links.publicUrl,
          },
        },
        { store: pieceStore(ctx.store, ctx.run.workflowId), signal: ctx.signal },
      );
      return applyEffects(ctx, answer);
    },
  };
}

async function dropdownOptions(
  description: ApPieceDescription,
  owner: { kind: "action" | "trigger"; name: string },
  prop: string,
  ctx: DynamicOptionsContext,
  links: ProjectionLinks,
) {
  const answer = await links.host().request(
    {
      t: "options",
      owner,
      prop,
      props: ctx.config,
      auth: authValueFor(description, ctx.auth),
      publicUrl: links.publicUrl,
    },
    { timeoutMs: OPTIONS_TIMEOUT_MS },
  );
  const state = (answer.value ?? {}) as {
    options?: Array<{ label?: unknown; value: unknown }>;
    placeholder?: string;
    disabled?: boolean;
    properties?: Record<string, ApProp>;
  };
  // A DYNAMIC property answers its fields instead of choices.
  if (state.properties)
    return { options: [], properties: Object.fromEntries(Object.entries(state.properties).map(([name, field]) => [name, projectProp(field)])) };
  const options = (state.options ?? []).map((option) => ({ label: String(option.label ?? option.value), value: option.value }));
  return { options, placeholder: state.disabled || options.length === 0 ? state.placeholder : undefined };
}

/** The piece's store: Weft's key-value store of the workspace, under the workflow's (FLOW scope) or the workspace's (COLLECTION) prefix. */
function pieceStore(store: KeyValueStore, workflowId: string): StoreHandler {
  return async (op, key, scope, value) => {
    const stored = scope === "FLOW" ? `ap/flow/${workflowId}/${key}` : `ap/project/${key}`;
    if (op === "get") return (await store.get(stored)) ?? null;
    if (op === "put") await store.put(stored, value);
    else await store.delete(stored);
    return null;
  };
}

type TriggerHookName = "onEnable" | "onDisable" | "run" | "onHandshake" | "onRenew";
interface TriggerHookContext {
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  workflowId: string;
  store: KeyValueStore;
  webhookUrl?: string;
}
type ApPayload = { body: unknown; headers: Record<string, string>; queryParams: Record<string, string | string[]> };

/**
 * What POLLING and WEBHOOK triggers share: a call of one of the piece's trigger hooks in its host (answering
 * the hook's value), and the trigger's face with onEnable and onDisable wired to the piece's.
 */
function triggerBase(description: ApPieceDescription, id: string, step: ApStepDescription, links: ProjectionLinks) {
  const hook = async (name: TriggerHookName, ctx: TriggerHookContext, payload?: ApPayload) =>
    (
      await links.host().request(
        {
          t: "trigger",
          hook: name,
          trigger: step.name,
          props: ctx.config,
          auth: authValueFor(description, ctx.auth),
          workflowId: ctx.workflowId,
          webhookUrl: ctx.webhookUrl ?? "",
          payload,
          publicUrl: links.publicUrl,
        },
        { store: pieceStore(ctx.store, ctx.workflowId), timeoutMs: POLL_TIMEOUT_MS },
      )
    ).value;
  const items = async (ctx: TriggerHookContext, payload?: ApPayload) => {
    const value = await hook("run", ctx, payload);
    if (!Array.isArray(value)) throw new Error(`${description.package} trigger ${step.name} returned ${typeof value}, not a list of items`);
    return value as unknown[];
  };
  const face = {
    id,
    name: step.displayName,
    description: step.description,
    props: projectProps(description, step, links, "trigger"),
    sampleData: step.sampleData,
    onEnable: async (ctx: TriggerHookContext) => void (await hook("onEnable", ctx)),
    onDisable: async (ctx: TriggerHookContext) => void (await hook("onDisable", ctx)),
  };
  return { hook, items, face };
}

/**
 * A POLLING trigger as a Weft poll trigger: publish calls the piece's onEnable (its own baseline, kept in the
 * store), each poll its run (the items it finds new since then), unpublish its onDisable. Weft's poller
 * still takes its first poll as a baseline and dedupes by content, so an item never fires twice.
 */
function projectPollingTrigger(description: ApPieceDescription, id: string, step: ApStepDescription, links: ProjectionLinks): TriggerDef {
  const { items, face } = triggerBase(description, id, step, links);
  return { ...face, type: "poll", poll: (ctx) => items(ctx), dedupe: { strategy: "id", key: (item) => JSON.stringify(item) } };
}

/**
 * A WEBHOOK trigger as a Weft webhook trigger: publish calls the piece's onEnable with the workflow's URL
 * (the piece registers it with its provider), unpublish onDisable; each call of the URL is either the
 * provider's handshake (as the trigger declares it: a header, query or body parameter present), answered
 * by onHandshake and starting nothing, or an event, which the piece's run turns into items — one run each.
 * A registration that expires is renewed on the trigger's cron (onRenew).
 */
function projectWebhookTrigger(description: ApPieceDescription, id: string, step: ApStepDescription, links: ProjectionLinks): TriggerDef {
  const { hook, items, face } = triggerBase(description, id, step, links);
  const isHandshake = (request: { headers: Record<string, string>; query: Record<string, unknown>; body: unknown }) => {
    const shake = step.handshake;
    if (!shake) return false;
    if (shake.strategy === "HEADER_PRESENT") return request.headers[shake.paramName.toLowerCase()] !== undefined;
    if (shake.strategy === "QUERY_PRESENT") return request.query[shake.paramName] !== undefined;
    const body = request.body;
    return body !== null && typeof body === "object" && !Array.isArray(body) && (body as Record<string, unknown>)[shake.paramName] !== undefined;
  };
  return {
    ...face,
    type: "webhook",
    receive: async (ctx) => {
      const { request } = ctx;
      const payload = { body: request.body, headers: request.headers, queryParams: request.query };
      if (!isHandshake(request)) return { items: await items(ctx, payload) };
      const answer = (await hook("onHandshake", ctx, payload)) as { status?: number; body?: unknown; headers?: Record<string, string> } | null;
      return { items: [], reply: { status: Number(answer?.status ?? 200), headers: answer?.headers, body: answer?.body ?? null } };
    },
    renew: step.renewCron ? { cron: step.renewCron, run: async (ctx) => void (await hook("onRenew", ctx)) } : undefined,
  };
}

/**
 * An unsupported trigger kind (APP_WEBHOOK: one app-level webhook of Activepieces' cloud) stays visible, and
 * the publish gate refuses it with the reason, so a workflow never goes live on it.
 */
function unsupportedTrigger(description: ApPieceDescription, id: string, step: ApStepDescription, links: ProjectionLinks): TriggerDef {
  const reason = `${description.package} trigger ${step.name} is an Activepieces ${step.type ?? "unknown"} trigger (events routed through Activepieces' own cloud app), which a self-hosted Weft cannot receive; use one of the piece's actions with a schedule, poll or webhook trigger instead (docs/activepieces.md)`;
  return {
    id,
    name: `${step.displayName} (not supported)`,
    description: reason,
    type: "webhook",
    props: projectProps(description, step, links, "trigger"),
    sampleData: step.sampleData,
    unsupported: reason,
  };
}

/** The Weft piece for one installed package version (docs/activepieces.md). */
export function projectPiece(description: ApPieceDescription, links: ProjectionLinks): PieceDef {
  const taken = new Set<string>();
  const actions: Record<string, ActionDef> = {};
  for (const step of Object.values(description.actions)) {
    const id = stepIdFor(step.name, taken);
    actions[id] = projectAction(description, id, step, links);
  }
  const triggerIds = new Set<string>();
  const triggers: Record<string, TriggerDef> = {};
  for (const step of Object.values(description.triggers)) {
    const id = stepIdFor(step.name, triggerIds);
    triggers[id] =
      step.type === "POLLING"
        ? projectPollingTrigger(description, id, step, links)
        : step.type === "WEBHOOK"
          ? projectWebhookTrigger(description, id, step, links)
          : unsupportedTrigger(description, id, step, links);
  }
  return definePiece({
    id: pieceIdFor(description.package),
    name: description.displayName,
    version: description.version,
    description: description.description || `${description.displayName} (Activepieces package ${description.package})`,
    // Its logo (Activepieces' CDN), shown in the picker and on step cards; the UI's CSP allows that host (docs/activepieces.md).
    icon: description.logoUrl && /^https:\/\/[^\s"'<>]+$/.test(description.logoUrl) ? description.logoUrl : "🧩",
    // Its code runs in the package's host process: the engine calls it from its own thread, with no worker hop.
    ownProcess: true,
    auth: projectAuth(description.auth),
    actions,
    triggers,
  });
}
