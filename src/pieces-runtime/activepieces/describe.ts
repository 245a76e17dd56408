/**
 * Inside the piece host: finds the piece object a package exports and turns it into plain data
 * (./protocol.ts ApPieceDescription). Three generations of the framework are read the same way:
 *   - 0.2–0.3: no piece-level auth; each action carries an OAUTH2/SECRET_TEXT/… property for it;
 *   - 0.4–0.7: `piece.auth`, plain auth values (`context.auth` is the secret, or the custom props);
 *   - 0.8x+ (bundled packages, `getContextInfo()`): `piece.auth` may be a list; typed auth values.
 */
import type { ApPieceDescription, ApProp, ApStepDescription } from "./protocol";

/** A piece property as the framework builds it (options/props are functions for dynamic ones). */
export interface RawProp {
  type?: string;
  options?: unknown;
  props?: unknown;
  validate?: unknown;
  [key: string]: unknown;
}

interface RawStep {
  name?: string;
  displayName?: string;
  description?: string;
  props?: Record<string, RawProp>;
  requireAuth?: boolean;
  sampleData?: unknown;
  type?: string;
  run: (context: unknown) => unknown;
  [hook: string]: unknown;
}

export interface LoadedPiece {
  raw: Record<string, unknown>;
  actions: Record<string, RawStep & { props?: Record<string, RawProp & { options?: (...args: unknown[]) => unknown }> }>;
  triggers: Record<string, RawStep & { props?: Record<string, RawProp & { options?: (...args: unknown[]) => unknown }> }>;
  auth?: RawProp & { validate?: (params: unknown) => unknown };
  legacyAuthProp?: string;
  contextVersion?: string;
}

const AUTH_TYPES = new Set(["OAUTH2", "SECRET_TEXT", "BASIC_AUTH", "CUSTOM_AUTH"]);
/** Auth kinds Weft can hold as a connection, in the order a piece offering several is read. */
const SUPPORTED_AUTH = ["CUSTOM_AUTH", "SECRET_TEXT", "BASIC_AUTH", "OAUTH2"];

function isPieceObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const piece = value as Record<string, unknown>;
  return typeof piece._actions === "object" && typeof piece._triggers === "object" && typeof piece.displayName === "string";
}

/** The piece a package's module exports (its default or a named export built with createPiece). */
export function findPiece(module: Record<string, unknown>, packageName: string): LoadedPiece {
  const candidates = [module.default, ...Object.values(module)];
  const nested = module.default && typeof module.default === "object" ? Object.values(module.default as object) : [];
  const raw = [...candidates, ...nested].find(isPieceObject);
  if (!raw) throw new Error(`${packageName} exports no Activepieces piece (an object made by createPiece with actions and triggers)`);
  const actions = raw._actions as LoadedPiece["actions"];
  const triggers = raw._triggers as LoadedPiece["triggers"];
  const info = typeof raw.getContextInfo === "function" ? (raw.getContextInfo as () => { version?: string } | undefined)() : undefined;
  const declared = Array.isArray(raw.auth) ? pickAuth(raw.auth as RawProp[]) : (raw.auth as RawProp | undefined);
  let auth = declared && AUTH_TYPES.has(String(declared.type)) ? declared : undefined;
  let legacyAuthProp: string | undefined;
  if (!auth && !declared) {
    // 0.2–0.3 pieces: the first auth-typed property of any action or trigger is the piece's auth.
    for (const step of [...Object.values(actions), ...Object.values(triggers)]) {
      const found = Object.entries(step.props ?? {}).find(([, prop]) => AUTH_TYPES.has(String(prop.type)));
      if (found) {
        [legacyAuthProp, auth] = found;
        break;
      }
    }
  }
  return { raw, actions, triggers, auth: auth as LoadedPiece["auth"], legacyAuthProp, contextVersion: info?.version };
}

function pickAuth(list: RawProp[]): RawProp | undefined {
  for (const type of SUPPORTED_AUTH) {
    const found = list.find((auth) => auth?.type === type);
    if (found) return found;
  }
  return list[0];
}

export function describePiece(piece: LoadedPiece, packageName: string, version: string): ApPieceDescription {
  const raw = piece.raw;
  return {
    package: packageName,
    version,
    displayName: String(raw.displayName),
    description: typeof raw.description === "string" ? raw.description : "",
    logoUrl: typeof raw.logoUrl === "string" ? raw.logoUrl : undefined,
    categories: Array.isArray(raw.categories) ? raw.categories.filter((c): c is string => typeof c === "string") : undefined,
    minimumSupportedRelease: typeof raw.minimumSupportedRelease === "string" ? raw.minimumSupportedRelease : undefined,
    contextVersion: piece.contextVersion,
    auth: piece.auth ? describeProp(piece.auth) : undefined,
    legacyAuthProp: piece.legacyAuthProp,
    actions: describeSteps(piece.actions, piece.legacyAuthProp),
    triggers: describeSteps(piece.triggers, piece.legacyAuthProp),
  };
}

function describeSteps(steps: Record<string, RawStep>, legacyAuthProp: string | undefined): Record<string, ApStepDescription> {
  const described: Record<string, ApStepDescription> = {};
  for (const [name, step] of Object.entries(steps)) {
    const props: Record<string, ApProp> = {};
    for (const [key, prop] of Object.entries(step.props ?? {})) if (key !== legacyAuthProp) props[key] = describeProp(prop);
    described[name] = {
      name: typeof step.name === "string" ? step.name : name,
      displayName: String(step.displayName ?? name),
      description: typeof step.description === "string" ? step.description : "",
      props,
      requireAuth: step.requireAuth !== false,
      sampleData: plain(step.sampleData),
      type: typeof step.type === "string" ? step.type : undefined,
      ...webhookExtras(step),
    };
  }
  return described;
}

const HANDSHAKES = new Set(["HEADER_PRESENT", "QUERY_PRESENT", "BODY_PARAM_PRESENT"]);

/** A WEBHOOK trigger's handshake and renewal settings, when it declares them (strategy NONE or absent: nothing). */
function webhookExtras(step: RawStep): Pick<ApStepDescription, "handshake" | "renewCron"> {
  const extras: Pick<ApStepDescription, "handshake" | "renewCron"> = {};
  const handshake = step.handshakeConfiguration as { strategy?: string; paramName?: string } | undefined;
  if (handshake && HANDSHAKES.has(String(handshake.strategy)) && typeof handshake.paramName === "string" && typeof step.onHandshake === "function")
    extras.handshake = { strategy: handshake.strategy as NonNullable<ApStepDescription["handshake"]>["strategy"], paramName: handshake.paramName };
  const renew = step.renewConfiguration as { strategy?: string; cronExpression?: string } | undefined;
  if (renew?.strategy === "CRON" && typeof renew.cronExpression === "string" && typeof step.onRenew === "function") extras.renewCron = renew.cronExpression;
  return extras;
}

/** A property as data: functions become flags, nested properties are described too. */
export function describeProp(prop: RawProp): ApProp {
  const described: ApProp = { type: String(prop.type ?? "UNKNOWN") };
  for (const key of ["displayName", "description", "required", "defaultValue", "refreshers", "authUrl", "tokenUrl", "scope", "pkce", "extra"] as const) {
    if (prop[key] !== undefined && typeof prop[key] !== "function") (described as unknown as Record<string, unknown>)[key] = plain(prop[key]);
  }
  if (typeof prop.options === "function") described.dynamic = true;
  else if (prop.options && typeof prop.options === "object") described.options = plain(prop.options) as ApProp["options"];
  if (typeof prop.props === "function") described.dynamic = true;
  else if (prop.props && typeof prop.props === "object") described.props = describeMap(prop.props as Record<string, RawProp>);
  if (prop.properties && typeof prop.properties === "object") described.properties = describeMap(prop.properties as Record<string, RawProp>);
  if (typeof prop.validate === "function") described.validates = true;
  return described;
}

function describeMap(props: Record<string, RawProp>): Record<string, ApProp> {
  const described: Record<string, ApProp> = {};
  for (const [key, prop] of Object.entries(props)) if (prop && typeof prop === "object") described[key] = describeProp(prop);
  return described;
}

/** JSON-safe copy (drops functions, cycles and BigInts) of sample data and the like. */
function plain(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? String(v) : v)));
  } catch {
    return undefined;
  }
}
