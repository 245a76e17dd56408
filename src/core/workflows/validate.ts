/**
 * THE gate. One function — `validateDefinition` — answers `POST /api/workflows/validate`, decides
 * publish, and guards restores and editor saves of an active workflow, so a definition that
 * validates also publishes (docs/api.md "2. Validate"). Every diagnostic names the fault and, where one
 * exists, the admissible set (`allowed`).
 *
 * One file on purpose: the gate is one pass over one definition, and its checks share that pass's state
 * (names in scope, steps counted, nesting, the diagnostics so far, their cap).
 */
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { Cron } from "croner";
import { scheduleOf } from "../triggers/schedule-spec";
import { checkExpressionSyntax, expressionRoots, findExpressions, type SyntaxProblem } from "../../engine/expressions";
import { describeExpected } from "../../http/error-handler";
import type { PieceDef, PropertyDef, TriggerDef } from "../../pieces-sdk/types";
import { timeZoneProblem } from "../../pieces-sdk/time-zone";
import type { DiagnosticT, DiagnosticsT } from "../../schema/workflow-record";
import {
  ACTION_TYPES,
  CONDITION_OPERATORS,
  FlowVersion,
  TRIGGER_TYPES,
  UNARY_OPERATORS,
  type ActionNodeT,
  type ConditionT,
  type FlowVersionT,
} from "../../schema/workflow";
import { isExpression, isPresent, resolveProperties } from "../pieces/conditions";
import { LIMITS, walk, type AnyNode } from "./tree";
import { lazy } from "../../lib/lazy";

/** The part of the piece registry (src/pieces-runtime/registry.ts) the gate reads. */
export interface GatePieces {
  get(id: string, pin?: string): PieceDef | undefined;
  list(): PieceDef[];
  servedVersion(id: string): string | undefined;
  isRunnable(id: string, pin?: string): boolean;
  trigger(pieceId: string, triggerId: string): TriggerDef | undefined;
  /** A cluster: why a piece held here cannot run on every instance that executes runs (core/cluster-pieces.ts). */
  whyNot?(id: string, pin?: string): string | undefined;
}

export interface ConnectionChoice {
  id: string;
  name: string;
}

export interface GateContext {
  pieces: GatePieces;
  /**
   * The workspace's connections of a piece, read before the gate runs (`connectionPieces` names the pieces);
   * undefined when connections cannot be listed (not checked).
   */
  connections?: (pieceId: string) => ConnectionChoice[] | undefined;
  /** Does a workflow with this id exist in the workspace? (settings.errorWorkflowId) */
  workflowExists?: (id: string) => boolean;
  /** The workflow being validated, when there is one. */
  workflowId?: string;
  /** Names of variables stored outside the definition (the variables API). */
  storedVariables?: Iterable<string>;
  /** The scheduler's minimum interval (WEFT_SCHEDULE_MIN_INTERVAL): a schedule firing more often cannot publish. */
  scheduleMinIntervalSeconds?: number;
}

export interface GateResult extends DiagnosticsT {
  /** Paths of nodes that carry at least one error (drives each node's `valid` flag). */
  faultyNodes: Set<string>;
}

/** Codes that mean "no piece served here can run this step" — what an editor save of an active workflow refuses. */
export const UNRUNNABLE_CODES = new Set(["UNKNOWN_PIECE", "PIECE_UNAVAILABLE"]);

const ROOTS = ["trigger", "variables", "run"] as const;
const RESERVED_NAMES = new Set<string>(ROOTS);
const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const UNARY = new Set<string>(UNARY_OPERATORS);
const OPERATORS = new Set<string>(CONDITION_OPERATORS);
const NUMERIC_OPERATORS = new Set(["number_eq", "number_neq", "number_gt", "number_gte", "number_lt", "number_lte"]);
const MAX_DIAGNOSTICS = 200;
/**
 * The definition schema's compiled check, made by the first definition checked: compiling it takes ~15 ms,
 * which a server's start-up (and its first webhook) need not wait for.
 */
const structure = lazy(() => TypeCompiler.Compile(FlowVersion));

/**
 * The pieces whose connections the gate may ask for (`GateContext.connections`), so the caller can read them
 * before it runs: each piece the trigger or a PIECE step names that declares auth, at the version the step pins
 * or at the served one. None for a definition that fails the schema: the gate checks it no further.
 */
export function connectionPieces(input: unknown, served: GatePieces): string[] {
  if (!structure().Check(input)) return [];
  const pieces = new Set<string>();
  for (const { node, isTrigger } of walk(input as FlowVersionT)) {
    const pieceId = node.pieceId;
    if (!pieceId || pieces.has(pieceId) || (!isTrigger && node.type !== "PIECE")) continue;
    if (served.get(pieceId)?.auth || served.get(pieceId, node.pieceVersion)?.auth) pieces.add(pieceId);
  }
  return [...pieces];
}

/** Runs every check on a definition (any JSON value) and writes nothing. */
export function validateDefinition(input: unknown, ctx: GateContext): GateResult {
  const gate = new Gate(ctx);
  // webhookToken is part of the schema (accepted to be stripped on save), so it never fails here.
  if (!structure().Check(input)) {
    gate.structural(input);
    return gate.result();
  }
  gate.run(input as FlowVersionT);
  return gate.result();
}

class Gate {
  readonly errors: Array<DiagnosticT & { step?: string }> = [];
  readonly warnings: Array<DiagnosticT & { step?: string }> = [];
  readonly faultyNodes = new Set<string>();
  private readonly scope = new Set<string>();
  private readonly names = new Map<string, string>();
  private readonly allNames = new Set<string>();
  private variableNames = new Set<string>();
  private steps = 0;
  private deepest = 0;

  constructor(private readonly ctx: GateContext) {}

  result(): GateResult {
    return { valid: this.errors.length === 0, errors: this.errors, warnings: this.warnings, faultyNodes: this.faultyNodes };
  }

  private error(path: string, code: string, message: string, allowed?: unknown[], nodePath?: string, step?: string) {
    if (nodePath !== undefined) this.faultyNodes.add(nodePath);
    if (this.errors.length >= MAX_DIAGNOSTICS) return;
    this.errors.push(diagnostic(path, code, message, allowed, step));
  }

  private warn(path: string, code: string, message: string, allowed?: unknown[], step?: string) {
    if (this.warnings.length >= MAX_DIAGNOSTICS) return;
    this.warnings.push(diagnostic(path, code, message, allowed, step));
  }

  /** Shape faults from the schema: unknown keys name the allowed keys; type faults name the expected type. */
  structural(value: unknown) {
    const seen = new Set<string>();
    for (const e of structure().Errors(value)) {
      const path = e.path.replace(/^\//, "").replace(/\//g, ".") || "(definition)";
      if (e.type === ValueErrorType.Union || e.type === ValueErrorType.Intersect) continue;
      if (seen.has(path)) continue;
      seen.add(path);
      const schema = e.schema as any;
      if (e.type === ValueErrorType.ObjectAdditionalProperties) {
        const allowed = Object.keys((e as any).schema?.properties ?? {}).filter((k) => k !== "webhookToken");
        const key = path.split(".").pop();
        this.error(path, "UNKNOWN_FIELD", `unknown field "${key}" at ${path}; allowed keys: ${allowed.join(", ")}`, allowed);
      } else if (e.type === ValueErrorType.ObjectRequiredProperty) {
        this.error(path, "MISSING_FIELD", `${path} is required (${describeExpected(schema)})`);
      } else {
        this.error(path, "INVALID_VALUE", `${path}: ${e.message.toLowerCase()}; expected ${describeExpected(schema)}`);
      }
      if (seen.size >= 50) break;
    }
    if (this.errors.length === 0)
      this.error("(definition)", "INVALID_VALUE", "the definition is not a FlowVersion object; expected {schemaVersion: 2, trigger: {...}}");
  }

  run(definition: FlowVersionT) {
    const bytes = Buffer.byteLength(JSON.stringify(definition));
    if (bytes > LIMITS.maxBytes)
      this.error("(definition)", "DEFINITION_TOO_LARGE", `the definition is ${bytes} bytes; the limit is ${LIMITS.maxBytes} bytes (1 MiB)`);
    this.variableNames = new Set([...Object.keys(definition.variables ?? {}), ...(this.ctx.storedVariables ?? [])]);
    this.checkSettings(definition);
    for (const { node } of walk(definition)) this.allNames.add(node.name);
    const trigger = definition.trigger;
    this.checkName(trigger, "trigger", true);
    this.checkTrigger(trigger);
    this.scope.add(trigger.name);
    if (trigger.nextAction) this.chain(trigger.nextAction, "trigger.nextAction", 0);
    if (this.steps > LIMITS.maxSteps)
      this.error("(definition)", "TOO_MANY_STEPS", `the definition has ${this.steps} steps; the limit is ${LIMITS.maxSteps}. Split it into sub-flows`);
    if (this.deepest > LIMITS.maxNesting)
      this.error("(definition)", "NESTING_TOO_DEEP", `routers, loops and error branches nest ${this.deepest} deep; the limit is ${LIMITS.maxNesting}`);
  }

  private checkSettings(definition: FlowVersionT) {
    const id = definition.settings?.errorWorkflowId;
    if (id === undefined) return;
    if (this.ctx.workflowId && id === this.ctx.workflowId) {
      this.error(
        "settings.errorWorkflowId",
        "INVALID_VALUE",
        "settings.errorWorkflowId names this workflow itself; name another workflow of the workspace (one with a runs.on_error trigger)",
      );
    } else if (this.ctx.workflowExists && !this.ctx.workflowExists(id)) {
      // A warning, not an error: an imported or example definition may name an error workflow that is
      // created later; until then a failed run simply starts no error workflow (docs/examples.md).
      this.warn(
        "settings.errorWorkflowId",
        "UNKNOWN_WORKFLOW",
        `settings.errorWorkflowId ${id} names no workflow of this workspace, so a failed run starts no error workflow; create one (e.g. from the error-notification template) and put its id here, or remove the setting`,
      );
    }
  }

  /**
   * Walks one chain (a node and its nextAction successors). Names a chain defines are in scope for
   * its later steps and, once the chain is done, for whatever follows its container; sibling
   * branches never see each other's steps (only one of them runs).
   */
  private chain(first: ActionNodeT, firstPath: string, nesting: number): string[] {
    const added: string[] = [];
    if (nesting > this.deepest) this.deepest = nesting;
    let node: ActionNodeT | undefined = first;
    let path = firstPath;
    while (node) {
      this.steps++;
      this.checkName(node, path, false);
      this.checkAction(node, path);
      this.scope.add(node.name);
      added.push(node.name);
      const inner: string[] = [];
      (node.branches ?? []).forEach((branch, i) => {
        if (branch.firstAction) inner.push(...this.chain(branch.firstAction, `${path}.branches.${i}.firstAction`, nesting + 1));
      });
      if (node.firstLoopAction) inner.push(...this.chain(node.firstLoopAction, `${path}.firstLoopAction`, nesting + 1));
      if (node.onErrorAction) inner.push(...this.chain(node.onErrorAction, `${path}.onErrorAction`, nesting + 1));
      for (const name of inner) {
        this.scope.add(name);
        added.push(name);
      }
      node = node.nextAction;
      path = `${path}.nextAction`;
    }
    for (const name of added) this.scope.delete(name);
    return added;
  }

  private checkName(node: AnyNode, path: string, isTrigger: boolean) {
    const name = node.name;
    if (!STEP_NAME.test(name)) {
      this.error(
        `${path}.name`,
        "INVALID_STEP_NAME",
        `step name "${name}" cannot be used in expressions; use letters, digits and _ and start with a letter or _ (e.g. ${suggestName(name)})`,
        undefined,
        path,
        name,
      );
    }
    if (!isTrigger && RESERVED_NAMES.has(name)) {
      this.error(
        `${path}.name`,
        "RESERVED_STEP_NAME",
        `step name "${name}" is reserved for the expression root of the same name; reserved: ${[...RESERVED_NAMES].join(", ")}`,
        undefined,
        path,
        name,
      );
    }
    const earlier = this.names.get(name);
    if (earlier !== undefined) {
      this.error(
        `${path}.name`,
        "DUPLICATE_STEP_NAME",
        `step name "${name}" is already used at ${earlier}; step names are unique in a workflow because later steps refer to them`,
        undefined,
        path,
        name,
      );
    } else {
      this.names.set(name, path);
    }
  }

  /** Users write the piece's name as the trigger type ("schedule"): say which kind and pieceId they meant. */
  private pieceNamedAsType(type: string): string {
    const piece = typeof type === "string" ? this.ctx.pieces.get(type) : undefined;
    const kinds = [...new Set(Object.values(piece?.triggers ?? {}).map((t) => t.type))];
    return kinds.length === 1 ? `use type "${kinds[0]}" with pieceId "${type}"; ` : "";
  }

  private checkTrigger(node: AnyNode) {
    const path = "trigger";
    const type = node.type;
    if (!(TRIGGER_TYPES as readonly string[]).includes(type)) {
      this.error(
        `${path}.type`,
        "INVALID_TRIGGER_TYPE",
        `trigger type "${type}" is not a trigger kind; ${this.pieceNamedAsType(type)}allowed: ${TRIGGER_TYPES.join(", ")}`,
        [...TRIGGER_TYPES],
        path,
        node.name,
      );
      return;
    }
    if (type === "manual") {
      if (node.pieceId) this.warn(`${path}.pieceId`, "IGNORED_FIELD", "a manual trigger runs no piece; pieceId and actionId are ignored", undefined, node.name);
      this.checkConfigExpressions(node.config ?? {}, `${path}.config`, path, node.name);
      return;
    }
    const candidates = this.ctx.pieces.list().flatMap((p) =>
      Object.values(p.triggers)
        .filter((t) => t.type === type)
        .map((t) => `${p.id}/${t.id}`),
    );
    if (!node.pieceId || !node.actionId) {
      this.error(
        `${path}.${node.pieceId ? "actionId" : "pieceId"}`,
        "MISSING_FIELD",
        `a ${type} trigger needs pieceId and actionId (the trigger id); ${candidates.length ? `the pieces served offer: ${candidates.join(", ")}` : `no piece served here offers a ${type} trigger`}`,
        candidates,
        path,
        node.name,
      );
      return;
    }
    const piece = this.piece(node, path);
    if (!piece) return;
    const def = this.member(piece, piece.triggers, "trigger", node, path);
    if (!def) return;
    if (def.type !== type) {
      this.error(
        `${path}.type`,
        "TRIGGER_TYPE_MISMATCH",
        `trigger ${piece.id}/${def.id} is of type "${def.type}", not "${type}"; set type to "${def.type}"`,
        [def.type],
        path,
        node.name,
      );
    }
    if (def.unsupported) this.error(`${path}.actionId`, "TRIGGER_UNSUPPORTED", def.unsupported, undefined, path, node.name);
    this.checkConfig(def.props, node.config ?? {}, path, node.name);
    // Triggers declare no requiresAuth in the SDK; they need a connection only when they say so.
    this.checkConnection(piece, needsConnection((def as { requiresAuth?: boolean }).requiresAuth ?? false, node.config), node, path);
    this.checkSchedule(def, node, path);
  }

  /** Cron expressions and time zones first (precise codes), then whatever else the trigger's own schedule() refuses. */
  private checkSchedule(def: TriggerDef, node: AnyNode, path: string) {
    const config = node.config ?? {};
    let refused = false;
    if (node.type === "cron" && typeof config.expression === "string" && !isExpression(config.expression)) {
      const problem = cronProblem(config.expression);
      if (problem) {
        refused = true;
        this.error(
          `${path}.config.expression`,
          "INVALID_CRON",
          `cron expression "${config.expression}" is invalid: ${problem}. Use 5 fields (minute hour day-of-month month day-of-week, e.g. "0 * * * *") or 6 with seconds first`,
          undefined,
          path,
          node.name,
        );
      }
    }
    const zoneProblem =
      typeof config.timezone === "string" && config.timezone !== "" && !isExpression(config.timezone) ? timeZoneProblem(config.timezone) : undefined;
    if (zoneProblem) {
      refused = true;
      this.error(`${path}.config.timezone`, "INVALID_TIMEZONE", zoneProblem, undefined, path, node.name);
    }
    // A schedule built from expressions is only known at publish time by value; skip it then.
    if (refused || !def.schedule || Object.values(config).some(isExpression)) return;
    try {
      const schedule = def.schedule(config);
      const cron = "cron" in schedule ? schedule.cron : undefined;
      const problem = cron === undefined ? undefined : cronProblem(cron);
      if (problem) {
        this.error(`${path}.config`, "INVALID_CRON", `the schedule's cron expression "${cron}" is invalid: ${problem}`, undefined, path, node.name);
        return;
      }
      // The scheduler refuses what fires too often; the gate must refuse it too, or validate ⇏ publish.
      if (this.ctx.scheduleMinIntervalSeconds !== undefined) scheduleOf(node, this.ctx.pieces, this.ctx.scheduleMinIntervalSeconds);
    } catch (error) {
      this.error(
        `${path}.config`,
        "INVALID_SCHEDULE",
        `the schedule cannot be built from this config: ${(error as Error).message}`,
        undefined,
        path,
        node.name,
      );
    }
  }

  /** The piece's action or trigger (`members`) named by the node's actionId, or undefined with an error that lists the piece's ones. */
  private member<T>(piece: PieceDef, members: Record<string, T>, noun: "action" | "trigger", node: AnyNode, path: string): T | undefined {
    const id = node.actionId!;
    if (Object.hasOwn(members, id)) return members[id];
    const ids = Object.keys(members);
    this.error(
      `${path}.actionId`,
      noun === "action" ? "UNKNOWN_ACTION" : "UNKNOWN_TRIGGER",
      `piece "${piece.id}" has no ${noun} "${id}"; its ${noun}s: ${ids.join(", ") || "none"}`,
      ids,
      path,
      node.name,
    );
    return undefined;
  }

  private piece(node: AnyNode, path: string): PieceDef | undefined {
    const pieceId = node.pieceId!;
    const piece = this.ctx.pieces.get(pieceId);
    const elsewhere = this.ctx.pieces.whyNot?.(pieceId, node.pieceVersion);
    if (elsewhere) {
      this.error(`${path}.pieceId`, "PIECE_UNAVAILABLE", elsewhere, undefined, path, node.name);
      return undefined;
    }
    if (!piece) {
      const ids = this.ctx.pieces.list().map((p) => p.id);
      this.error(`${path}.pieceId`, "UNKNOWN_PIECE", `piece "${pieceId}" is not served here; pieces: ${ids.join(", ")}`, ids, path, node.name);
      return undefined;
    }
    const pin = node.pieceVersion;
    // A step is checked against the version it pins (an installed package may hold several).
    const pinned = this.ctx.pieces.get(pieceId, pin);
    if (pinned) return pinned;
    this.error(
      `${path}.pieceVersion`,
      "PIECE_UNAVAILABLE",
      `piece "${pieceId}" pinned to ${pin} cannot run: the version served is ${piece.version} (a pin runs on the same major version at or above it); pin ${piece.version} or leave the pin blank`,
      [piece.version],
      path,
      node.name,
    );
    return piece;
  }

  private checkAction(node: ActionNodeT, path: string) {
    const type = node.type;
    if (!(ACTION_TYPES as readonly string[]).includes(type)) {
      this.error(
        `${path}.type`,
        "INVALID_NODE_TYPE",
        `step type "${type}" is unknown; allowed: ${ACTION_TYPES.join(", ")}`,
        [...ACTION_TYPES],
        path,
        node.name,
      );
      return;
    }
    if (type !== "ROUTER" && node.branches !== undefined)
      this.error(`${path}.branches`, "FIELD_NOT_ALLOWED", `branches belong to ROUTER steps; this step is ${type}`, ["ROUTER"], path, node.name);
    if (type !== "LOOP_ON_ITEMS" && node.firstLoopAction !== undefined)
      this.error(
        `${path}.firstLoopAction`,
        "FIELD_NOT_ALLOWED",
        `firstLoopAction belongs to LOOP_ON_ITEMS steps; this step is ${type}`,
        ["LOOP_ON_ITEMS"],
        path,
        node.name,
      );
    if (type !== "PIECE") {
      for (const field of ["pieceId", "actionId", "pieceVersion", "connectionId"] as const) {
        if (node[field] !== undefined)
          this.warn(`${path}.${field}`, "IGNORED_FIELD", `${field} is ignored on a ${type} step; only PIECE steps run a piece`, undefined, node.name);
      }
    }
    if (type === "PIECE") this.checkPieceStep(node, path);
    else if (type === "ROUTER") this.checkRouter(node, path);
    else this.checkLoop(node, path);
  }

  private checkPieceStep(node: ActionNodeT, path: string) {
    if (!node.pieceId || !node.actionId) {
      const missing = !node.pieceId ? "pieceId" : "actionId";
      const allowed = !node.pieceId ? this.ctx.pieces.list().map((p) => p.id) : Object.keys(this.ctx.pieces.get(node.pieceId)?.actions ?? {});
      this.error(
        `${path}.${missing}`,
        "MISSING_FIELD",
        `a PIECE step needs ${missing}; ${missing === "pieceId" ? "pieces" : "actions of the piece"}: ${allowed.join(", ")}`,
        allowed,
        path,
        node.name,
      );
      this.checkConfigExpressions(node.config ?? {}, `${path}.config`, path, node.name);
      return;
    }
    const piece = this.piece(node, path);
    if (!piece) {
      this.checkConfigExpressions(node.config ?? {}, `${path}.config`, path, node.name);
      return;
    }
    const action = this.member(piece, piece.actions, "action", node, path);
    if (!action) {
      this.checkConfigExpressions(node.config ?? {}, `${path}.config`, path, node.name);
      return;
    }
    this.checkConfig(action.props, node.config ?? {}, path, node.name);
    this.checkConnection(piece, needsConnection(action.requiresAuth ?? piece.auth !== undefined, node.config), node, path);
  }

  private checkConnection(piece: PieceDef, needsAuth: boolean, node: AnyNode, path: string) {
    if (!node.connectionId && !(needsAuth && piece.auth)) return;
    const choices = piece.auth ? this.ctx.connections?.(piece.id) : undefined;
    const allowed = choices?.map((c) => c.id);
    const listing = choices
      ? choices.length
        ? `connections of ${piece.id}: ${choices.map((c) => `${c.id} (${c.name})`).join(", ")}`
        : `create one with POST /api/connections (pieceId "${piece.id}")`
      : `create one with POST /api/connections (pieceId "${piece.id}")`;
    if (!node.connectionId) {
      if (needsAuth && piece.auth)
        this.error(
          `${path}.connectionId`,
          "MISSING_CONNECTION",
          `piece "${piece.id}" needs a connection (${piece.auth.kind}); ${listing}`,
          allowed,
          path,
          node.name,
        );
      return;
    }
    if (!piece.auth) {
      this.warn(`${path}.connectionId`, "IGNORED_FIELD", `piece "${piece.id}" declares no auth; connectionId is ignored`, undefined, node.name);
      return;
    }
    if (choices && !allowed!.includes(node.connectionId)) {
      this.error(
        `${path}.connectionId`,
        "UNKNOWN_CONNECTION",
        `connection ${node.connectionId} is not a connection of piece "${piece.id}" in this workspace; ${listing}`,
        allowed,
        path,
        node.name,
      );
    }
  }

  private checkConfig(props: Record<string, PropertyDef>, config: Record<string, unknown>, path: string, step: string) {
    const { active, undecided } = resolveProperties(props, config);
    const activeNames = Object.keys(active);
    const missing = activeNames.filter(
      (name) => active[name].required && !undecided.includes(name) && !isPresent(config[name]) && active[name].default === undefined,
    );
    for (const name of missing) {
      this.error(
        `${path}.config.${name}`,
        "MISSING_PROPERTY",
        `required property "${name}" is missing; properties in force for this config: ${activeNames.join(", ")}`,
        activeNames,
        path,
        step,
      );
    }
    for (const [name, value] of Object.entries(config)) {
      const prop = props[name];
      if (!prop) {
        this.warn(
          `${path}.config.${name}`,
          "UNKNOWN_PROPERTY",
          `property "${name}" is not one of this step's properties and is ignored; properties: ${Object.keys(props).join(", ") || "none"}`,
          Object.keys(props),
          step,
        );
        continue;
      }
      if (!active[name]) {
        this.warn(
          `${path}.config.${name}`,
          "INACTIVE_PROPERTY",
          `property "${name}" is not in force for this config (its display conditions do not hold) and is ignored`,
          activeNames,
          step,
        );
        continue;
      }
      if (value === undefined || value === null || isExpression(value)) continue;
      if (prop.enum && prop.enum.length > 0 && !prop.options) {
        const values = Array.isArray(value) && prop.type === "array" ? value : [value];
        for (const v of values) {
          if (!prop.enum.some((e) => e === v || String(e) === String(v))) {
            this.error(
              `${path}.config.${name}`,
              "INVALID_ENUM_VALUE",
              `property "${name}" is ${JSON.stringify(v)}; allowed: ${prop.enum.map((e) => JSON.stringify(e)).join(", ")}`,
              prop.enum,
              path,
              step,
            );
            break;
          }
        }
      }
      const mismatch = typeMismatch(prop, value);
      if (mismatch)
        this.warn(
          `${path}.config.${name}`,
          "TYPE_MISMATCH",
          `property "${name}" expects ${mismatch}; got ${JSON.stringify(value)?.slice(0, 60)}`,
          undefined,
          step,
        );
      else {
        const bound = boundProblem(prop, value);
        if (bound)
          this.error(`${path}.config.${name}`, "OUT_OF_RANGE", `property "${name}" is ${JSON.stringify(value)?.slice(0, 60)}; ${bound}`, undefined, path, step);
      }
    }
    this.checkConfigExpressions(config, `${path}.config`, path, step);
  }

  /** Every string inside config: each `{{ }}` must parse and read only what is in scope. */
  private checkConfigExpressions(value: unknown, path: string, nodePath: string, step: string) {
    if (typeof value === "string") {
      if (value.includes("{{")) this.checkText(value, path, nodePath, step);
      return;
    }
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) this.checkConfigExpressions(item, `${path}.${i}`, nodePath, step);
      return;
    }
    for (const [key, item] of Object.entries(value)) this.checkConfigExpressions(item, `${path}.${key}`, nodePath, step);
  }

  private checkText(text: string, path: string, nodePath: string, step: string) {
    for (const { source, start } of findExpressions(text)) {
      const { problem, roots } = expressionVerdict(source);
      if (problem) {
        this.error(
          path,
          "EXPRESSION_SYNTAX",
          `expression {{${source}}} does not parse at position ${start + problem.position}: ${problem.message}`,
          undefined,
          nodePath,
          step,
        );
        continue;
      }
      for (const root of roots) {
        if (root === "trigger" || root === "variables" || root === "run" || this.scope.has(root)) continue;
        const unique = [...new Set([...ROOTS, ...this.scope])];
        const why = this.allNames.has(root) ? `step "${root}" does not run before this step` : `no step is named "${root}"`;
        this.error(
          path,
          "UNKNOWN_REFERENCE",
          `expression {{${source}}} reads "${root}", but ${why}; it may read: ${unique.join(", ")}`,
          unique,
          nodePath,
          step,
        );
      }
      for (const match of source.matchAll(/\bvariables\.([A-Za-z_$][\w$]*)/g)) {
        if (!this.variableNames.has(match[1])) {
          this.warn(
            path,
            "UNKNOWN_VARIABLE",
            `expression {{${source}}} reads variables.${match[1]}, which is not defined; variables: ${[...this.variableNames].join(", ") || "none"}`,
            [...this.variableNames],
            step,
          );
        }
      }
    }
  }

  private checkRouter(node: ActionNodeT, path: string) {
    const branches = node.branches ?? [];
    if (branches.length === 0) {
      this.error(
        `${path}.branches`,
        "MISSING_FIELD",
        "a ROUTER step needs at least one branch: {name, conditions: [[{field, operator, value}]], firstAction}",
        undefined,
        path,
        node.name,
      );
      return;
    }
    const fallbacks = branches.map((b, i) => (b.conditions.length === 0 ? i : -1)).filter((i) => i >= 0);
    if (fallbacks.length > 0 && fallbacks[0] !== branches.length - 1) {
      this.warn(
        `${path}.branches.${fallbacks[0]}`,
        "UNREACHABLE_BRANCH",
        `branch "${branches[fallbacks[0]]!.name}" has no conditions (the fallback) and always holds, so the branches after it never run; move it last`,
        undefined,
        node.name,
      );
    }
    const seen = new Set<string>();
    branches.forEach((branch, i) => {
      const bpath = `${path}.branches.${i}`;
      if (seen.has(branch.name))
        this.warn(`${bpath}.name`, "DUPLICATE_BRANCH_NAME", `branch name "${branch.name}" repeats in this router`, undefined, node.name);
      seen.add(branch.name);
      branch.conditions.forEach((group, g) => {
        if (group.length === 0)
          this.warn(
            `${bpath}.conditions.${g}`,
            "EMPTY_CONDITION_GROUP",
            "an empty condition group always holds; remove it or use conditions: [] for a fallback branch",
            undefined,
            node.name,
          );
        for (const [c, condition] of group.entries()) this.checkCondition(condition, `${bpath}.conditions.${g}.${c}`, path, node.name);
      });
    });
    this.checkConfigExpressions(node.config ?? {}, `${path}.config`, path, node.name);
  }

  private checkCondition(condition: ConditionT, path: string, nodePath: string, step: string) {
    const { operator } = condition;
    if (!OPERATORS.has(operator)) {
      this.error(
        `${path}.operator`,
        "UNKNOWN_OPERATOR",
        `operator "${operator}" is unknown; operators: ${CONDITION_OPERATORS.join(", ")}`,
        [...CONDITION_OPERATORS],
        nodePath,
        step,
      );
    } else if (UNARY.has(operator)) {
      if (condition.value !== undefined)
        this.warn(`${path}.value`, "IGNORED_FIELD", `operator "${operator}" reads no value; value is ignored`, undefined, step);
    } else if (condition.value === undefined) {
      this.error(`${path}.value`, "MISSING_FIELD", `operator "${operator}" compares with a value; add "value"`, undefined, nodePath, step);
    } else if (!isExpression(condition.value)) {
      if (NUMERIC_OPERATORS.has(operator) && !Number.isFinite(Number(condition.value))) {
        this.error(
          `${path}.value`,
          "INVALID_VALUE",
          `operator "${operator}" compares numbers; ${JSON.stringify(condition.value)} is not a number`,
          undefined,
          nodePath,
          step,
        );
      }
      if (operator === "text_regex") {
        try {
          new RegExp(String(condition.value));
        } catch (error) {
          this.error(`${path}.value`, "INVALID_REGEX", `value is not a regular expression: ${(error as Error).message}`, undefined, nodePath, step);
        }
      }
    }
    if (typeof condition.field === "string") this.checkText(condition.field, `${path}.field`, nodePath, step);
    else if (condition.field === undefined)
      this.error(
        `${path}.field`,
        "MISSING_FIELD",
        "a condition needs field, usually an expression such as {{fetch.output.body.count}}",
        undefined,
        nodePath,
        step,
      );
    this.checkConfigExpressions(condition.value, `${path}.value`, nodePath, step);
  }

  private checkLoop(node: ActionNodeT, path: string) {
    const config = node.config ?? {};
    if (!isPresent(config.items)) {
      this.error(
        `${path}.config.items`,
        "MISSING_PROPERTY",
        "a LOOP_ON_ITEMS step needs config.items: an array or an expression that yields one, e.g. {{trigger.body.lines}}",
        ["items"],
        path,
        node.name,
      );
    }
    for (const key of Object.keys(config)) {
      if (key !== "items")
        this.warn(`${path}.config.${key}`, "UNKNOWN_PROPERTY", `property "${key}" is ignored by LOOP_ON_ITEMS; properties: items`, ["items"], node.name);
    }
    if (!node.firstLoopAction)
      this.warn(`${path}.firstLoopAction`, "EMPTY_LOOP", "the loop has no body (firstLoopAction); it runs nothing", undefined, node.name);
    this.checkConfigExpressions(config, `${path}.config`, path, node.name);
  }
}

/**
 * Parse verdicts per expression text. Compiling with JSONata costs ~0.2 ms however short the
 * expression, and an editor revalidates mostly unchanged expressions on every save, so verdicts are
 * kept. An expression with roots has parsed (unparseable ones have none), so the syntax check runs
 * only for the rest; bare paths take the engine's fast path and never reach JSONata.
 */
const verdicts = new Map<string, { problem: SyntaxProblem | null; roots: string[] }>();
const MAX_VERDICTS = 50_000;

function expressionVerdict(source: string) {
  let verdict = verdicts.get(source);
  if (!verdict) {
    const roots = expressionRoots(source);
    verdict = { problem: roots.length > 0 ? null : checkExpressionSyntax(source), roots };
    // A plain map emptied when full: cheaper per lookup than an LRU, and refilling costs one parse each.
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(source, verdict);
  }
  return verdict;
}

/** For benchmarks: forget every cached verdict (the first validation of new expressions). */
export function clearExpressionVerdicts() {
  verdicts.clear();
}

/** A step needs its connection when the piece says so, or when its config picks `auth_type: connection` (http). */
function needsConnection(declared: boolean, config: Record<string, unknown> | undefined): boolean {
  return declared || config?.auth_type === "connection";
}

function diagnostic(path: string, code: string, message: string, allowed?: unknown[], step?: string) {
  const d: DiagnosticT & { step?: string } = { path, code, message };
  if (allowed !== undefined) d.allowed = allowed;
  if (step !== undefined) d.step = step;
  return d;
}

function suggestName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^([0-9])/, "_$1");
  return cleaned || "step_1";
}

function typeMismatch(prop: PropertyDef, value: unknown): string | undefined {
  switch (prop.type) {
    case "number":
    case "integer":
      return typeof value === "number" || (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) ? undefined : `a ${prop.type}`;
    case "boolean":
      return typeof value === "boolean" || value === "true" || value === "false" ? undefined : "a boolean";
    case "object":
      return typeof value === "object" && !Array.isArray(value) ? undefined : "an object";
    case "array":
      return Array.isArray(value) || typeof value === "string" ? undefined : "an array";
    case "string":
    case "code":
      return typeof value === "object" ? "text" : undefined;
    default:
      return undefined;
  }
}

/** The declared bounds a literal value breaks (min/max, minLength/maxLength, pattern), or undefined. */
function boundProblem(prop: PropertyDef, value: unknown): string | undefined {
  if (
    typeof value === "number" ||
    (typeof value === "string" && (prop.type === "number" || prop.type === "integer") && value.trim() !== "" && Number.isFinite(Number(value)))
  ) {
    const n = Number(value);
    if (prop.min !== undefined && n < prop.min) return `allowed: ${prop.min} to ${prop.max ?? "any larger number"}`;
    if (prop.max !== undefined && n > prop.max) return `allowed: ${prop.min ?? "any smaller number"} to ${prop.max}`;
    if (prop.type === "integer" && !Number.isInteger(n)) return "allowed: a whole number";
    return undefined;
  }
  if (typeof value === "string" && prop.type === "string") {
    if (prop.minLength !== undefined && value.length < prop.minLength) return `allowed: at least ${prop.minLength} characters`;
    if (prop.maxLength !== undefined && value.length > prop.maxLength) return `allowed: at most ${prop.maxLength} characters`;
    if (prop.pattern !== undefined && !value.includes("{{") && !new RegExp(prop.pattern).test(value)) return `allowed: text matching ${prop.pattern}`;
  }
  return undefined;
}

/** croner's own parser decides; we add the field-count rule of the schedule trigger (5 or 6 fields). */
export function cronProblem(expression: string): string | undefined {
  const trimmed = expression.trim();
  if (!trimmed.startsWith("@")) {
    const fields = trimmed.split(/\s+/).length;
    if (fields !== 5 && fields !== 6) return `it has ${fields} fields`;
  }
  try {
    new Cron(trimmed, { paused: true }).stop();
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^CronPattern:\s*/, "");
  }
}

/** The diagnostics without the internal node set, as the API answers them. */
export function publicDiagnostics(result: GateResult): DiagnosticsT {
  return { valid: result.valid, errors: result.errors, warnings: result.warnings };
}

/** Sets each node's `valid` flag from a gate result (the editor reads it; it never affects execution). */
export function markValidity(definition: FlowVersionT, result: GateResult) {
  for (const { node, path } of walk(definition)) node.valid = !result.faultyNodes.has(path);
}
