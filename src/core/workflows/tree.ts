/**
 * Walking and normalising the step tree (FlowVersion, docs/api.md "1. Create a workflow"): the limits, the canonical hash
 * behind `hasUnpublishedChanges`, step stamps behind pinned-data staleness, pin filling and the
 * removal of what a client may not set (webhookToken) or what must not leave the workspace
 * (connection ids on export).
 */
import { AppError } from "../../http/errors";
import type { ActionNodeT, FlowVersionT, TriggerNodeT } from "../../schema/workflow";
import { sha256 } from "../../lib/ids";

export const LIMITS = {
  /** Action steps in one definition (the trigger not counted). */
  maxSteps: 500,
  /** Routers, loops and error branches inside one another. */
  maxNesting: 50,
  /** Serialized definition size. */
  maxBytes: 1024 * 1024,
} as const;

export type AnyNode = TriggerNodeT | ActionNodeT;

export interface VisitedNode {
  node: AnyNode;
  /** e.g. `trigger.nextAction.branches.1.firstAction` */
  path: string;
  isTrigger: boolean;
  /** Containers (router branch, loop body, error branch) around the node. */
  nesting: number;
}

/** Every node in execution order (a chain before its continuation); iterative, so long chains are safe. */
export function* walk(definition: FlowVersionT): Generator<VisitedNode> {
  yield { node: definition.trigger, path: "trigger", isTrigger: true, nesting: 0 };
  const stack: Array<{ node: ActionNodeT | undefined; path: string; nesting: number }> = [];
  if (definition.trigger.nextAction) stack.push({ node: definition.trigger.nextAction, path: "trigger.nextAction", nesting: 0 });
  while (stack.length > 0) {
    const { node, path, nesting } = stack.pop()!;
    if (!node) continue;
    yield { node, path, isTrigger: false, nesting };
    // Pushed in reverse so that they pop in reading order: branches, loop body, error branch, next.
    if (node.nextAction) stack.push({ node: node.nextAction, path: `${path}.nextAction`, nesting });
    if (node.onErrorAction) stack.push({ node: node.onErrorAction, path: `${path}.onErrorAction`, nesting: nesting + 1 });
    if (node.firstLoopAction) stack.push({ node: node.firstLoopAction, path: `${path}.firstLoopAction`, nesting: nesting + 1 });
    const branches = node.branches ?? [];
    for (let i = branches.length - 1; i >= 0; i--) {
      const first = branches[i]?.firstAction;
      if (first) stack.push({ node: first, path: `${path}.branches.${i}.firstAction`, nesting: nesting + 1 });
    }
  }
}

export interface TreeShape {
  steps: number;
  nesting: number;
  bytes: number;
  /** Step name → node (the first one when names repeat). */
  byName: Map<string, AnyNode>;
}

export function shapeOf(definition: FlowVersionT, serialized?: string): TreeShape {
  let steps = 0;
  let nesting = 0;
  const byName = new Map<string, AnyNode>();
  for (const v of walk(definition)) {
    if (!v.isTrigger) steps++;
    if (v.nesting > nesting) nesting = v.nesting;
    if (!byName.has(v.node.name)) byName.set(v.node.name, v.node);
  }
  return { steps, nesting, bytes: Buffer.byteLength(serialized ?? JSON.stringify(definition)), byName };
}

/** Step name → node (the first one when names repeat). */
export function stepsByName(definition: FlowVersionT): Map<string, AnyNode> {
  const byName = new Map<string, AnyNode>();
  for (const { node } of walk(definition)) if (!byName.has(node.name)) byName.set(node.name, node);
  return byName;
}

/** The limits as 400s, for saves (the gate reports the same limits as diagnostics). */
export function assertWithinLimits(shape: TreeShape): void {
  if (shape.bytes > LIMITS.maxBytes) {
    throw new AppError(
      "VALIDATION_FAILED",
      `the definition is ${shape.bytes} bytes; the limit is ${LIMITS.maxBytes} bytes (1 MiB). Move large constants into workflow variables`,
    );
  }
  if (shape.steps > LIMITS.maxSteps) {
    throw new AppError(
      "VALIDATION_FAILED",
      `the definition has ${shape.steps} steps; the limit is ${LIMITS.maxSteps}. Split it into sub-flows (subflows.call_workflow)`,
    );
  }
  if (shape.nesting > LIMITS.maxNesting) {
    throw new AppError("VALIDATION_FAILED", `routers, loops and error branches nest ${shape.nesting} deep; the limit is ${LIMITS.maxNesting}`);
  }
}

/** Sorted-key JSON: the same value always serializes to the same text. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : stableStringify(v))).join(",")}]`;
  const keys = Object.keys(value)
    .filter((k) => (value as any)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify((value as any)[k])}`).join(",")}}`;
}

/**
 * Hash of what a definition executes: node `valid` flags (derived) and pinnedData (stored outside)
 * do not count, so a draft equal to the live snapshot hashes the same however it was produced.
 */
export function definitionHash(definition: FlowVersionT): string {
  return sha256(canonicalText(definition));
}

function canonicalText(definition: FlowVersionT): string {
  const parts: string[] = [];
  const { trigger, pinnedData: _pinned, ...rest } = definition;
  parts.push(stableStringify({ ...rest }));
  for (const { node, path } of walk(definition)) {
    const { valid: _valid, nextAction: _n, branches, firstLoopAction: _l, onErrorAction: _e, ...own } = node as ActionNodeT;
    const shape = branches ? branches.map((b) => ({ name: b.name, conditions: b.conditions, hasFirst: !!b.firstAction })) : undefined;
    parts.push(`${path}=${stableStringify({ ...own, branches: shape })}`);
  }
  void trigger;
  return parts.join("\n");
}

/** A step's configuration stamp: pinned data taken under another stamp is stale. */
export function stepStamp(node: AnyNode): string {
  return sha256(
    stableStringify({
      type: node.type,
      pieceId: node.pieceId,
      pieceVersion: node.pieceVersion,
      actionId: node.actionId,
      config: node.config ?? {},
      connectionId: node.connectionId,
    }),
  ).slice(0, 24);
}

export interface ServedVersions {
  servedVersion(pieceId: string): string | undefined;
}

export interface Normalized {
  definition: FlowVersionT;
  /** definition.pinnedData taken out: it is stored outside the definition. */
  pinnedData: Record<string, unknown>;
}

/**
 * What every save does to a supplied definition (docs/api.md "1. Create a workflow"): a private copy, webhookToken
 * removed wherever it appears, blank pins filled with the version served (the piece registry's, in a cluster
 * the one every executing instance serves; unknown pieces keep a blank pin: existence is the gate's business), defaults for the optional top-level fields.
 */
export function normalizeDefinition(input: FlowVersionT, pieces: ServedVersions): Normalized {
  const definition = structuredClone(input) as FlowVersionT & { webhookToken?: unknown };
  delete definition.webhookToken;
  const pinnedData = definition.pinnedData ?? {};
  definition.pinnedData = {};
  definition.settings ??= {};
  definition.variables ??= {};
  if (definition.annotations === undefined) definition.annotations = null;
  for (const { node } of walk(definition)) {
    delete (node as { webhookToken?: unknown }).webhookToken;
    if (node.pieceId && (node.pieceVersion === undefined || node.pieceVersion.trim() === "")) {
      const version = pieces.servedVersion(node.pieceId);
      if (version) node.pieceVersion = version;
      else delete node.pieceVersion;
    }
  }
  return { definition, pinnedData };
}

/** A copy without connection ids (export, templates): they name credentials of one workspace. */
export function withoutConnections(definition: FlowVersionT): FlowVersionT {
  const copy = structuredClone(definition);
  for (const { node } of walk(copy)) delete node.connectionId;
  copy.pinnedData = {};
  return copy;
}

/** The cron expression a workflow record shows: the cron trigger's config.expression, if any. */
export function cronExpressionOf(definition: FlowVersionT): string | null {
  const { trigger } = definition;
  const expression = trigger.config?.expression;
  return trigger.type === "cron" && typeof expression === "string" && expression.trim() !== "" ? expression : null;
}
