/**
 * An Activepieces piece (its plain description, ./protocol.ts) as a Weft piece (src/pieces-sdk): the
 * properties mapped onto Weft's property kinds, the auth onto a connection type, each action's `run` and
 * each dynamic dropdown's `options` sent to the package's host process. Ids: the piece is `ap-<name>` for
 * `@activepieces/piece-<name>` (`ap-<scope>-<name>` for another scope's `piece-<name>`); step ids are the
 * piece's own names in snake_case.
 */
import { definePiece } from "../../pieces-sdk";
import type { ActionContext, ActionDef, AuthDef, DynamicOptionsContext, PieceDef, PropertyDef, ResolvedAuth } from "../../pieces-sdk/types";
import type { HostAnswer, PieceHostProcess, StoreHandler } from "./host-process";
import type { ApPieceDescription, ApProp, ApStepDescription } from "./protocol";

/** How long a dropdown's options may take. */
const OPTIONS_TIMEOUT_MS = 30_000;

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
        description: [prop.description, "Fields that depend on other settings: give them as an object."].filter(Boolean).join(" "),
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

/** The piece's store kept in the workspace's key-value store: FLOW scope per workflow, COLLECTION per workspace. */
function storeHandler(ctx: ActionContext): StoreHandler {
  return (op, key, scope, value) => {
    const stored = scope === "FLOW" ? `ap/flow/${ctx.run.workflowId}/${key}` : `ap/project/${key}`;
    if (op === "get") return ctx.store.get(stored) ?? null;
    if (op === "put") ctx.store.put(stored, value);
    else ctx.store.delete(stored);
    return null;
  };
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

function projectAction(description: ApPieceDescription, id: string, step: ApStepDescription, links: ProjectionLinks): ActionDef {
  const props: Record<string, PropertyDef> = {};
  for (const [key, prop] of Object.entries(step.props)) {
    const projected = projectProp(prop);
    if (prop.dynamic && (prop.type === "DROPDOWN" || prop.type === "MULTI_SELECT_DROPDOWN")) {
      projected.refreshers = (prop.refreshers ?? []).concat(description.auth ? ["auth"] : []);
      projected.options = (ctx: DynamicOptionsContext) => dropdownOptions(description, step.name, key, ctx, links);
    }
    props[key] = projected;
  }
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
        { store: storeHandler(ctx) },
      );
      return applyEffects(ctx, answer);
    },
  };
}

async function dropdownOptions(description: ApPieceDescription, action: string, prop: string, ctx: DynamicOptionsContext, links: ProjectionLinks) {
  const answer = await links.host().request(
    {
      t: "options",
      owner: { kind: "action", name: action },
      prop,
      props: ctx.config,
      auth: authValueFor(description, ctx.auth),
      publicUrl: links.publicUrl,
    },
    { timeoutMs: OPTIONS_TIMEOUT_MS },
  );
  const state = (answer.value ?? {}) as { options?: Array<{ label?: unknown; value: unknown }>; placeholder?: string; disabled?: boolean };
  const options = (state.options ?? []).map((option) => ({ label: String(option.label ?? option.value), value: option.value }));
  return { options, placeholder: state.disabled || options.length === 0 ? state.placeholder : undefined };
}

/** The Weft piece for one installed package version. Triggers are not projected yet (docs/activepieces.md). */
export function projectPiece(description: ApPieceDescription, links: ProjectionLinks): PieceDef {
  const taken = new Set<string>();
  const actions: Record<string, ActionDef> = {};
  for (const step of Object.values(description.actions)) {
    const id = stepIdFor(step.name, taken);
    actions[id] = projectAction(description, id, step, links);
  }
  return definePiece({
    id: pieceIdFor(description.package),
    name: description.displayName,
    version: description.version,
    description: description.description || `${description.displayName} (Activepieces package ${description.package})`,
    icon: "🧩",
    auth: projectAuth(description.auth),
    actions,
    triggers: {},
  });
}
