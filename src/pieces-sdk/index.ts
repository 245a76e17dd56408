/**
 * The piece SDK: builders that turn a pleasant declaration into the plain `PieceDef` data of ./types.ts.
 * `definePiece` also checks the declaration (ids, semver, display conditions naming real properties),
 * so a mistake in a piece stops start-up with a message instead of surfacing as a confusing projection.
 */
import type {
  ActionDef,
  AuthDef,
  DisplayCondition,
  DynamicOptions,
  DynamicOptionsContext,
  GuardedFetch,
  OAuth2AuthDef,
  PieceDef,
  PropertyDef,
  TriggerDef,
  TriggerKind,
} from "./types";

export * from "./http";
export * from "./types";
export * from "./values";

// ---------- properties ----------

/**
 * Fields every property builder accepts (a projected property minus what the builder sets itself;
 * docs/pieces.md "Properties").
 */
export interface PropertyOptions {
  displayName?: string;
  description?: string;
  required?: boolean;
  default?: unknown;
  displayConditions?: DisplayCondition[];
}

interface TextOptions extends PropertyOptions {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

interface NumberOptions extends PropertyOptions {
  min?: number;
  max?: number;
}

type Choice = string | number | boolean | { label: string; value: string | number | boolean };

interface StaticDropdownOptions extends PropertyOptions {
  options: Choice[];
}

interface DynamicDropdownOptions extends PropertyOptions {
  /** Properties whose change invalidates the options; "auth" means the connection. */
  refreshers?: string[];
  /** The declared value type; default "string". */
  valueType?: "string" | "number" | "integer";
  options: (ctx: DynamicOptionsContext) => Promise<DynamicOptions> | DynamicOptions;
}

function base(type: PropertyDef["type"], propertyType: string, options: PropertyOptions): PropertyDef {
  const def: PropertyDef = { type, propertyType };
  // Only defined keys are copied so projections never carry `"key": undefined`.
  for (const [key, value] of Object.entries(options)) if (value !== undefined) (def as any)[key] = value;
  return def;
}

function staticDropdown(options: StaticDropdownOptions): PropertyDef {
  const { options: choices, ...rest } = options;
  const values: unknown[] = [];
  const labels: Record<string, string> = {};
  let hasLabels = false;
  for (const choice of choices) {
    if (typeof choice === "object") {
      values.push(choice.value);
      labels[String(choice.value)] = choice.label;
      hasLabels = true;
    } else values.push(choice);
  }
  const first = values[0];
  const type = typeof first === "number" ? (values.every(Number.isInteger) ? "integer" : "number") : typeof first === "boolean" ? "boolean" : "string";
  const def = base(type, "static_dropdown", rest);
  def.enum = values;
  if (hasLabels) def.enumLabels = labels;
  return def;
}

export const Property = {
  shortText: (o: TextOptions = {}) => base("string", "short_text", o),
  longText: (o: TextOptions = {}) => base("string", "long_text", o),
  /** A secret typed by the user (still a string; editors mask it). */
  secretText: (o: TextOptions = {}) => base("string", "secret_text", o),
  dateTime: (o: PropertyOptions = {}) => base("string", "date_time", { ...o, format: "date-time" } as TextOptions),
  number: (o: NumberOptions = {}) => base("number", "number", o),
  integer: (o: NumberOptions = {}) => base("integer", "integer", o),
  checkbox: (o: PropertyOptions = {}) => base("boolean", "checkbox", o),
  staticDropdown,
  /** A dropdown whose options come from the piece at edit time (POST .../options/{propertyName}). */
  dropdown: (o: DynamicDropdownOptions): PropertyDef => {
    const { options, valueType, ...rest } = o;
    const def = base(valueType ?? "string", "dropdown", rest);
    def.options = options;
    return def;
  },
  /** Several values chosen from a fixed list; `contains_any` gates work on it. */
  staticMultiSelect: (o: StaticDropdownOptions): PropertyDef => {
    const single = staticDropdown(o);
    const { enum: values, enumLabels, ...rest } = single;
    const items: PropertyDef = { type: single.type, enum: values, ...(enumLabels ? { enumLabels } : {}) };
    return { ...rest, type: "array", propertyType: "static_multi_select", items };
  },
  /** Any JSON value (object, array, scalar). */
  json: (o: PropertyOptions = {}) => base("json", "json", o),
  /** An object with declared fields (nested properties are never filtered). */
  object: (o: PropertyOptions & { properties?: Record<string, PropertyDef> } = {}) => base("object", "object", o),
  /** A free-form map of string keys to values (headers, query parameters). */
  keyValue: (o: PropertyOptions = {}) => base("object", "key_value", o),
  array: (o: PropertyOptions & { items?: PropertyDef; minLength?: number; maxLength?: number } = {}) => base("array", "array", o),
  code: (o: PropertyOptions & { language?: string } = {}) => base("code", "code", { language: "javascript", ...o } as PropertyOptions),
};

/** Display-condition builders: `displayConditions: [Show.eq("body_type", "json")]`. Several conditions all must hold. */
export const Show = {
  eq: (field: string, value: unknown): DisplayCondition => ({ field, operator: "eq", value }),
  neq: (field: string, value: unknown): DisplayCondition => ({ field, operator: "neq", value }),
  containsAny: (field: string, values: unknown[]): DisplayCondition => ({ field, operator: "contains_any", values }),
  exists: (field: string): DisplayCondition => ({ field, operator: "exists" }),
  notExists: (field: string): DisplayCondition => ({ field, operator: "not_exists" }),
};

// ---------- auth ----------

export const Auth = {
  oauth2: (o: Omit<OAuth2AuthDef, "kind">): OAuth2AuthDef => ({ kind: "oauth2", ...o }),
  apiKey: (o: { header?: string; description?: string } = {}): AuthDef => ({ kind: "api_key", ...o }),
  basic: (o: { description?: string } = {}): AuthDef => ({ kind: "basic", ...o }),
  custom: (props: Record<string, PropertyDef>): AuthDef => ({ kind: "custom", props }),
};

// ---------- actions, triggers, pieces ----------

export type ActionInput<C = any> = Omit<ActionDef<C>, "props" | "sideEffects"> & {
  props?: Record<string, PropertyDef>;
  sideEffects?: ActionDef["sideEffects"];
};

export function action<C = Record<string, unknown>>(def: ActionInput<C>): ActionDef<C> {
  return { ...def, props: def.props ?? {}, sideEffects: def.sideEffects ?? "external" } as ActionDef<C>;
}

export type TriggerInput = Omit<TriggerDef, "props"> & { props?: Record<string, PropertyDef> };

export function trigger(def: TriggerInput): TriggerDef {
  return { ...def, props: def.props ?? {} };
}

export interface PieceInput extends Omit<PieceDef, "actions" | "triggers"> {
  actions?: ActionDef[] | Record<string, ActionDef>;
  triggers?: TriggerDef[] | Record<string, TriggerDef>;
}

const PIECE_ID = /^[a-z][a-z0-9_-]{0,63}$/;
const STEP_ID = /^[a-z][a-z0-9_]{0,63}$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const TRIGGER_KINDS: TriggerKind[] = ["webhook", "cron", "poll", "error", "run_finished", "callable", "subscription"];
const OPERATORS = ["eq", "neq", "contains_any", "exists", "not_exists"];
const SIDE_EFFECTS = ["pure", "read", "write", "external"];

export class PieceDefinitionError extends Error {}

function keyed<T extends { id: string }>(pieceId: string, kind: string, items: T[] | Record<string, T> | undefined): Record<string, T> {
  const out: Record<string, T> = {};
  const list = Array.isArray(items)
    ? items
    : Object.entries(items ?? {}).map(([key, item]) => {
        if (item.id !== undefined && item.id !== key)
          throw new PieceDefinitionError(`piece "${pieceId}": ${kind} key "${key}" differs from its id "${item.id}"`);
        return { ...item, id: item.id ?? key };
      });
  for (const item of list) {
    if (!STEP_ID.test(item.id ?? ""))
      throw new PieceDefinitionError(`piece "${pieceId}": ${kind} id "${item.id}" must be lowercase snake_case (a-z, 0-9, _), starting with a letter`);
    if (out[item.id]) throw new PieceDefinitionError(`piece "${pieceId}": ${kind} id "${item.id}" is declared twice`);
    out[item.id] = item;
  }
  return out;
}

function checkProps(where: string, props: Record<string, PropertyDef>) {
  for (const [name, prop] of Object.entries(props)) {
    if (!prop || typeof prop !== "object" || typeof prop.type !== "string")
      throw new PieceDefinitionError(`${where}: property "${name}" has no type; build it with Property.*`);
    for (const condition of prop.displayConditions ?? []) {
      if (!OPERATORS.includes(condition.operator))
        throw new PieceDefinitionError(`${where}: property "${name}" uses display operator "${condition.operator}"; use one of ${OPERATORS.join(", ")}`);
      if (!(condition.field in props))
        throw new PieceDefinitionError(
          `${where}: property "${name}" is gated by "${condition.field}", which is not a property; properties: ${Object.keys(props).join(", ")}`,
        );
      if (condition.field === name) throw new PieceDefinitionError(`${where}: property "${name}" cannot gate itself`);
    }
  }
}

/** Checks a piece declaration and returns the plain `PieceDef` the registry serves. Throws PieceDefinitionError. */
export function definePiece(input: PieceInput): PieceDef {
  if (!input || typeof input !== "object") throw new PieceDefinitionError("a piece must be an object built with definePiece({...})");
  if (!PIECE_ID.test(input.id ?? "")) throw new PieceDefinitionError(`piece id "${input.id}" must be lowercase (a-z, 0-9, _ or -), starting with a letter`);
  if (!SEMVER.test(input.version ?? "")) throw new PieceDefinitionError(`piece "${input.id}": version "${input.version}" is not semver; use e.g. "1.0.0"`);
  if (!input.name) throw new PieceDefinitionError(`piece "${input.id}": name is required`);
  const actions = keyed(input.id, "action", input.actions as any) as Record<string, ActionDef>;
  const triggers = keyed(input.id, "trigger", input.triggers as any) as Record<string, TriggerDef>;
  for (const a of Object.values(actions)) {
    a.props ??= {};
    a.sideEffects ??= "external";
    if (typeof a.run !== "function") throw new PieceDefinitionError(`piece "${input.id}": action "${a.id}" has no run(ctx) function`);
    if (!SIDE_EFFECTS.includes(a.sideEffects))
      throw new PieceDefinitionError(`piece "${input.id}": action "${a.id}" sideEffects "${a.sideEffects}"; use one of ${SIDE_EFFECTS.join(", ")}`);
    checkProps(`piece "${input.id}" action "${a.id}"`, a.props);
  }
  for (const tr of Object.values(triggers)) {
    tr.props ??= {};
    if (!TRIGGER_KINDS.includes(tr.type))
      throw new PieceDefinitionError(`piece "${input.id}": trigger "${tr.id}" type "${tr.type}"; use one of ${TRIGGER_KINDS.join(", ")}`);
    if (tr.type === "poll" && typeof tr.poll !== "function")
      throw new PieceDefinitionError(`piece "${input.id}": poll trigger "${tr.id}" needs a poll(ctx) function`);
    if (tr.type === "subscription" && typeof tr.subscribe !== "function")
      throw new PieceDefinitionError(`piece "${input.id}": subscription trigger "${tr.id}" needs a subscribe(ctx) function`);
    checkProps(`piece "${input.id}" trigger "${tr.id}"`, tr.props);
  }
  if (input.auth?.kind === "custom") checkProps(`piece "${input.id}" auth`, input.auth.props);
  if (
    input.icon !== undefined &&
    !(
      typeof input.icon === "string" &&
      (/^data:image\/(svg\+xml|png);base64,[A-Za-z0-9+/=]+$/.test(input.icon) || /^https:\/\/[^\s"'<>]+$/.test(input.icon) || [...input.icon].length <= 4)
    )
  ) {
    throw new PieceDefinitionError(
      `piece "${input.id}": icon must be an emoji (a few characters), a data:image/svg+xml or data:image/png base64 URL, or an https URL of an image`,
    );
  }
  return {
    id: input.id,
    name: input.name,
    version: input.version,
    description: input.description ?? "",
    ...(input.icon ? { icon: input.icon } : {}),
    ...(input.auth ? { auth: input.auth } : {}),
    ...(input.checkConnection ? { checkConnection: input.checkConnection } : {}),
    ...(input.validateCredentials ? { validateCredentials: input.validateCredentials } : {}),
    ...(input.ownProcess ? { ownProcess: true } : {}),
    actions,
    triggers,
  };
}

// ---------- connection checks ----------

type ConnectionCheck = NonNullable<PieceDef["checkConnection"]>;

/**
 * A piece's `checkConnection` from a probe that answers what it found or throws: a thrown error's message
 * is the check's `{ ok: false, message }` (docs/pieces.md, "Auth").
 *   checkConnection: connectionCheck(async ({ auth, fetch, signal }) => `connected as ${(await me(fetch, auth, signal)).login}`),
 */
export function connectionCheck(probe: (ctx: Parameters<ConnectionCheck>[0]) => Promise<string>): ConnectionCheck {
  return async (ctx) => {
    try {
      return { ok: true, message: await probe(ctx) };
    } catch (error) {
      return { ok: false, message: (error as Error).message };
    }
  };
}

// ---------- libraries loaded on first use ----------

/**
 * A library loaded the first time a step needs it, once: a protocol client (mqtt.js, nodemailer, …) costs
 * megabytes on every thread that imports it, and a server with no step of that piece never should.
 *   const mqttJs = loadOnce(() => import("mqtt"));  …  (await mqttJs()).connect(url)
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}

// ---------- connections that are not HTTP ----------

/**
 * The address a piece may open a raw connection to (MQTT, IMAP, SMTP, a database), under the same
 * SSRF policy as `ctx.fetch`: connect to the returned IP and pass `host` as the TLS server name.
 * Throws (an SsrfBlockedError naming WEFT_ALLOW_CIDRS) when the host is refused. A context whose
 * fetch carries no policy gets none of the exceptions: loopback and private ranges are refused.
 */
export async function allowedAddress(fetch: GuardedFetch, host: string): Promise<string> {
  if (fetch.resolveHost) return fetch.resolveHost(host);
  const { createHostGuard } = await import("../net/guarded-fetch");
  return createHostGuard()(host);
}

/** What a user piece factory receives: `export default (sdk) => sdk.definePiece({...})`. */
export const sdk = { definePiece, action, trigger, Property, Show, Auth };
export type Sdk = typeof sdk;
