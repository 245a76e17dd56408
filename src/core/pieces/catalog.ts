/**
 * The Pieces API's core: list, detail, summary, projections (cached), dynamic options and derived samples.
 * Plain functions over the registry; the HTTP layer only parses and wraps.
 */
import { LRUCache } from "lru-cache";
import { AppError } from "../../http/errors";
import type { ActionDef, AuthDef, DynamicOptions, GuardedFetch, PieceDef, ResolvedAuth, TriggerDef } from "../../pieces-sdk/types";
import { discriminators, project, RESERVED_QUERY_KEYS, type ProjectedProperty, toProjectedProperty, type Projection, type QueryValues } from "./projection";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import { lazy } from "../../lib/lazy";

const quoteList = (ids: string[]) => (ids.length ? ids.map((id) => `"${id}"`).join(", ") : "(none)");

export function findPiece(registry: PieceRegistry, id: string): PieceDef {
  const piece = registry.get(id);
  if (!piece) throw new AppError("NOT_FOUND", `piece "${id}" not found; available pieces: ${quoteList(registry.ids())}`);
  return piece;
}

/** `found`, the piece's action or trigger `id`; when there is none, NOT_FOUND naming those it has (`ids`). */
function member<T>(found: T | undefined, noun: "action" | "trigger", id: string, pieceId: string, ids: string[]): T {
  if (!found) throw new AppError("NOT_FOUND", `${noun} "${id}" not found in piece "${pieceId}"; its ${noun}s are: ${quoteList(ids)}`);
  return found;
}

export function findAction(registry: PieceRegistry, pieceId: string, actionId: string): { piece: PieceDef; action: ActionDef } {
  const piece = findPiece(registry, pieceId);
  return { piece, action: member(registry.action(pieceId, actionId), "action", actionId, pieceId, Object.keys(piece.actions)) };
}

export function findTrigger(registry: PieceRegistry, pieceId: string, triggerId: string): { piece: PieceDef; trigger: TriggerDef } {
  const piece = findPiece(registry, pieceId);
  return { piece, trigger: member(registry.trigger(pieceId, triggerId), "trigger", triggerId, pieceId, Object.keys(piece.triggers)) };
}

// ---------- list, detail, summary ----------

export interface PieceListItem {
  id: string;
  name: string;
  version: string;
  description: string;
  icon: string | null;
  auth: string | null;
  actions: string[];
  triggers: string[];
}

const listItem = (p: PieceDef): PieceListItem => ({
  id: p.id,
  name: p.name,
  version: p.version,
  description: p.description,
  icon: p.icon ?? null,
  auth: p.auth?.kind ?? null,
  actions: Object.keys(p.actions),
  triggers: Object.keys(p.triggers),
});

/** Pieces matching `q` (case-insensitive, in ids, names and descriptions of the piece and its steps), one page. */
export function listPieces(registry: PieceRegistry, options: { q?: string; offset: number; limit: number }) {
  const q = options.q?.trim().toLowerCase();
  const matches = registry.list().filter((p) => {
    if (!q) return true;
    const haystack = [
      p.id,
      p.name,
      p.description,
      ...Object.values(p.actions).flatMap((a) => [a.id, a.name]),
      ...Object.values(p.triggers).flatMap((t) => [t.id, t.name]),
    ];
    return haystack.some((s) => s?.toLowerCase().includes(q));
  });
  return { data: matches.slice(options.offset, options.offset + options.limit).map(listItem), total: matches.length };
}

function authDetail(auth: AuthDef | undefined) {
  if (!auth) return null;
  switch (auth.kind) {
    case "oauth2":
      return {
        kind: auth.kind,
        oauth2: {
          authorizeUrl: auth.authorizeUrl,
          tokenUrl: auth.tokenUrl,
          scopes: auth.scopes,
          extraAuthorizeParams: auth.extraAuthorizeParams ?? {},
          grantTypes: auth.grantTypes ?? ["authorization_code"],
          fromConnectionConfig: auth.fromConnectionConfig === true,
        },
      };
    case "api_key":
      return { kind: auth.kind, apiKey: { header: auth.header ?? "Authorization" }, ...(auth.description ? { description: auth.description } : {}) };
    case "basic":
      return { kind: auth.kind, ...(auth.description ? { description: auth.description } : {}) };
    case "custom":
      return { kind: auth.kind, props: Object.fromEntries(Object.entries(auth.props).map(([k, v]) => [k, toProjectedProperty(v)])) };
  }
}

/** GET /api/pieces/{id}: the piece with its auth declaration (auth.oauth2) and each trigger's lowercase type. */
export function pieceDetail(piece: PieceDef) {
  return {
    id: piece.id,
    name: piece.name,
    version: piece.version,
    // Piece detail reports pieceVersion too (docs/pieces.md "The Pieces API": the served version, what blank
    // pins are filled with).
    pieceVersion: piece.version,
    description: piece.description,
    icon: piece.icon ?? null,
    auth: authDetail(piece.auth),
    actions: Object.values(piece.actions).map((a) => ({
      id: a.id,
      name: a.name,
      description: a.description ?? "",
      sideEffects: a.sideEffects,
      requiresAuth: a.requiresAuth ?? piece.auth !== undefined,
      ...(a.retry ? { retry: a.retry } : {}),
    })),
    triggers: Object.values(piece.triggers).map((t) => ({
      id: t.id,
      name: t.name,
      description: t.description ?? "",
      type: t.type,
      derivedSample: typeof t.sample === "function",
    })),
  };
}

/** GET /api/pieces/{id}?view=summary — the shape docs/pieces.md "The Pieces API" gives. */
export function pieceSummary(piece: PieceDef) {
  return {
    id: piece.id,
    name: piece.name,
    version: piece.version,
    pieceVersion: piece.version,
    auth: piece.auth?.kind ?? null,
    actions: Object.values(piece.actions).map((a) => ({ id: a.id, name: a.name, discriminators: discriminators(a.props) })),
    triggers: Object.values(piece.triggers).map((t) => ({ id: t.id, name: t.name, type: t.type, discriminators: discriminators(t.props) })),
  };
}

// ---------- projections ----------

/**
 * Projections are pure functions of (registry generation, step, query), so identical requests — an editor
 * re-asking as the user types, an agent iterating — are answered from memory, already serialised.
 */
export class ProjectionCache {
  /** Made by the first projection asked for, not at start-up (lru-cache allocates all its slots at once). */
  private readonly cache = lazy(() => new LRUCache<string, string>({ max: 5000, maxSize: 32 * 1024 * 1024, sizeCalculation: (v) => v.length || 1 }));

  constructor(private readonly registry: PieceRegistry) {}

  private key(kind: string, pieceId: string, stepId: string, query: QueryValues): string {
    const keys = Object.keys(query).sort();
    let key = `${this.registry.generation}\u0000${kind}\u0000${pieceId}\u0000${stepId}`;
    for (const k of keys) key += `\u0000${k}\u0001${Array.isArray(query[k]) ? (query[k] as string[]).join(",") : (query[k] ?? "")}`;
    return key;
  }

  /** The `{"data": <projection>}` envelope as JSON text. */
  actionJson(pieceId: string, actionId: string, query: QueryValues): string {
    return this.envelope(this.key("a", pieceId, actionId, query), () => projectAction(this.registry, pieceId, actionId, query));
  }

  triggerJson(pieceId: string, triggerId: string, query: QueryValues): string {
    return this.envelope(this.key("t", pieceId, triggerId, query), () => projectTrigger(this.registry, pieceId, triggerId, query));
  }

  /** The cached envelope under `key`, made from `projection()` the first time. */
  private envelope(key: string, projection: () => Projection): string {
    let json = this.cache().get(key);
    if (json === undefined) {
      json = JSON.stringify({ data: projection() });
      this.cache().set(key, json);
    }
    return json;
  }
}

export function projectAction(registry: PieceRegistry, pieceId: string, actionId: string, query: QueryValues): Projection {
  const { piece, action } = findAction(registry, pieceId, actionId);
  return project(piece, action, "action", query);
}

export function projectTrigger(registry: PieceRegistry, pieceId: string, triggerId: string, query: QueryValues): Projection {
  const { piece, trigger } = findTrigger(registry, pieceId, triggerId);
  return project(piece, trigger, "trigger", query);
}

export { RESERVED_QUERY_KEYS };

// ---------- dynamic options ----------

export interface OptionsRuntime {
  fetch: GuardedFetch;
  /** Resolves a connection of the caller's workspace to credentials; absent when connections are not wired. */
  resolveAuth?: (input: { workspaceId: string; connectionId: string; pieceId: string }) => Promise<ResolvedAuth>;
  /** How long a piece may take to answer; default 15 s. */
  timeoutMs?: number;
}

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** POST .../options/{propertyName}: the piece's options for a dynamic property; a failing piece is a clear 4xx. */
export async function dynamicOptions(
  registry: PieceRegistry,
  runtime: OptionsRuntime,
  input: {
    workspaceId: string;
    pieceId: string;
    actionId: string;
    propertyName: string;
    config?: Record<string, unknown>;
    connectionId?: string;
    kind?: "action" | "trigger";
  },
): Promise<DynamicAnswer> {
  // Trigger properties may list dynamic values too (e.g. a repository to watch); same rules as actions.
  const { piece, action } =
    input.kind === "trigger"
      ? (({ piece, trigger }) => ({ piece, action: trigger }))(findTrigger(registry, input.pieceId, input.actionId))
      : findAction(registry, input.pieceId, input.actionId);
  const dynamic = Object.keys(action.props).filter((n) => typeof action.props[n].options === "function");
  const prop = Object.hasOwn(action.props, input.propertyName) ? action.props[input.propertyName] : undefined;
  if (!prop) {
    throw new AppError(
      "NOT_FOUND",
      `property "${input.propertyName}" not found in ${input.kind ?? "action"} "${piece.id}.${action.id}"; properties with dynamic options: ${quoteList(dynamic)}`,
    );
  }
  if (typeof prop.options !== "function") {
    throw new AppError(
      "VALIDATION_FAILED",
      `property "${input.propertyName}" of "${piece.id}.${action.id}" has no dynamic options${prop.enum ? " (its values are the enum in the projection)" : ""}; properties with dynamic options: ${quoteList(dynamic)}`,
    );
  }
  let auth: ResolvedAuth | undefined;
  if (input.connectionId) {
    if (!runtime.resolveAuth) throw new AppError("UNPROCESSABLE", "connections are not available on this server, so connectionId cannot be used; omit it");
    auth = await runtime.resolveAuth({ workspaceId: input.workspaceId, connectionId: input.connectionId, pieceId: piece.id });
  } else if (piece.auth && prop.refreshers?.includes("auth")) {
    throw new AppError(
      "VALIDATION_FAILED",
      `property "${input.propertyName}" lists its values from the connection; send connectionId (a connection of piece "${piece.id}")`,
    );
  }
  const controller = new AbortController();
  const timeoutMs = runtime.timeoutMs ?? 15_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(
        new AppError(
          "UNPROCESSABLE",
          `options for "${input.propertyName}" of "${piece.id}.${action.id}" did not arrive within ${timeoutMs / 1000} s; try again or check the connection`,
        ),
      );
    }, timeoutMs);
  });
  let result: DynamicOptions;
  try {
    result = await Promise.race([
      Promise.resolve().then(() => prop.options!({ config: input.config ?? {}, auth, fetch: runtime.fetch, signal: controller.signal })),
      timeout,
    ]);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("UNPROCESSABLE", `options for "${input.propertyName}" of "${piece.id}.${action.id}" failed: ${describeError(error)}`);
  } finally {
    clearTimeout(timer);
  }
  if (!result || !Array.isArray(result.options)) {
    throw new AppError("UNPROCESSABLE", `options for "${input.propertyName}" of "${piece.id}.${action.id}" failed: the piece returned no options list`);
  }
  const options = result.options.map((o) => ({ label: String(o?.label ?? o?.value ?? ""), value: o?.value }));
  const answer: DynamicAnswer = { options };
  if (result.placeholder !== undefined) answer.placeholder = String(result.placeholder);
  if (result.properties) answer.properties = Object.fromEntries(Object.entries(result.properties).map(([name, def]) => [name, toProjectedProperty(def)]));
  return answer;
}

/** The options endpoint's answer: choices, or for a property of dependent fields, those fields as projected properties. */
export interface DynamicAnswer {
  options: Array<{ label: string; value: unknown }>;
  placeholder?: string;
  properties?: Record<string, ProjectedProperty>;
}

// ---------- trigger samples ----------

/** POST .../triggers/{triggerId}/sample: derived from the supplied config where the trigger can (Form, Schedule, Callable). */
export async function triggerSample(registry: PieceRegistry, input: { pieceId: string; triggerId: string; config?: Record<string, unknown> }) {
  const { piece, trigger } = findTrigger(registry, input.pieceId, input.triggerId);
  if (typeof trigger.sample !== "function") return { sampleData: trigger.sampleData ?? {}, derived: false };
  try {
    return { sampleData: (await trigger.sample(input.config ?? {})) ?? {}, derived: true };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("VALIDATION_FAILED", `cannot derive a sample for "${piece.id}.${trigger.id}" from this config: ${describeError(error)}`);
  }
}
